// The desktop-notifications switch, bound to the `desktop_notifications` trait. Turning it on
// asks the browser for permission (inside the click, as browsers require); a refusal turns the
// option back off and says why, so the switch never claims notifications that cannot appear.
// When the option was turned on from Python, nobody clicked: an "Allow" button asks then.
import { el, setData, setHidden, text } from "../dom";
import type { Model } from "../link";
import { notifier, permission, requestPermission, type Permission } from "../notify";

let nextId = 0;

export class NotifyToggle {
  readonly el: HTMLDivElement;
  private readonly input: HTMLInputElement;
  private readonly note: Text;
  private readonly allow: HTMLButtonElement;
  private readonly onTrait = () => this.sync();

  constructor(private readonly model: Model) {
    this.el = el("div", "pmux-notify");
    const label = this.el.appendChild(el("label", "pmux-switch"));
    this.input = label.appendChild(el("input"));
    this.input.type = "checkbox";
    this.input.setAttribute("role", "switch");
    this.input.id = `pmux-notify-${++nextId}`;
    label.appendChild(document.createTextNode(" Desktop notifications"));
    const note = this.el.appendChild(el("span", "pmux-notify-note"));
    note.id = `${this.input.id}-note`;
    this.input.setAttribute("aria-describedby", note.id);
    this.note = text(note);
    this.allow = this.el.appendChild(el("button", "pmux-allow", "Allow"));
    this.allow.type = "button";
    this.allow.setAttribute("aria-label", "Allow desktop notifications in this browser");
    this.allow.addEventListener("click", () => void this.toggle(true));
    this.input.addEventListener("change", () => void this.toggle(this.input.checked));
    model.on("change:desktop_notifications", this.onTrait);
    this.sync();
  }

  destroy(): void {
    this.model.off("change:desktop_notifications", this.onTrait);
  }

  /** Reflect the trait and the browser's permission. */
  sync(): void {
    const on = this.model.get("desktop_notifications") === true;
    if (this.input.checked !== on) this.input.checked = on;
    const perm = permission();
    const unsupported = perm === "unsupported";
    if (this.input.disabled !== unsupported) this.input.disabled = unsupported;
    setData(this.note, describe(perm, on));
    setHidden(this.allow, !(on && perm === "default"));
  }

  private async toggle(on: boolean): Promise<void> {
    this.save(on);
    if (!on) {
      notifier.closeAll();
      return;
    }
    const perm = await requestPermission();
    if (perm !== "granted") this.save(false);
    this.sync();
  }

  private save(on: boolean): void {
    if (this.model.get("desktop_notifications") !== on) {
      this.model.set("desktop_notifications", on);
      this.model.save_changes();
    }
    this.sync();
  }
}

function describe(perm: Permission, on: boolean): string {
  switch (perm) {
    case "unsupported":
      return "not available in this browser";
    case "denied":
      return "blocked: allow notifications for this site in the browser";
    case "default":
      return on ? "the browser has not allowed them yet" : "";
    case "granted":
      return on ? "shown when this page is not in front" : "";
  }
}
