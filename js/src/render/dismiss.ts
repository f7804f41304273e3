// The ✓ that marks a finished session as seen (review → idle), one component for the row and
// the bell's sheet. It is shown on live review rows only (needs-input cannot be dismissed), and
// stays pending (aria-disabled) from the click until the kernel answers with the row.
import { el, setAttr, setHidden } from "../dom";
import type { Row } from "../types";

export interface DismissActions {
  dismiss(sessionId: string): void;
  /** a dismiss was sent and the kernel has not answered yet (it answers only when idle) */
  isDismissPending(sessionId: string): boolean;
}

export class DismissButton {
  readonly el: HTMLButtonElement;
  private sessionId: string;

  constructor(row: Row, actions: DismissActions) {
    this.sessionId = row.session_id;
    const button = (this.el = el("button", "pmux-dismiss", "✓"));
    button.type = "button";
    button.title = "Mark as seen (review → idle)";
    button.addEventListener("click", () => {
      if (button.getAttribute("aria-disabled") === "true") return;
      actions.dismiss(this.sessionId);
      button.setAttribute("aria-disabled", "true");
    });
    this.update(row, actions);
  }

  update(row: Row, actions: DismissActions): void {
    this.sessionId = row.session_id;
    const dismissable = canDismiss(row);
    setHidden(this.el, !dismissable);
    // aria-disabled, not disabled: a disabled button drops keyboard focus to <body>.
    const pending = dismissable && actions.isDismissPending(row.session_id);
    setAttr(this.el, "aria-disabled", pending ? "true" : null);
    setAttr(this.el, "aria-label", `Dismiss ${row.name} (mark as seen)`);
  }
}

export function canDismiss(row: Row): boolean {
  return row.state === "review" && !row.ended;
}
