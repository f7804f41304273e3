// The desktop-notifications switch in the header, bound to the `desktop_notifications` trait
// and remembered per browser (a new kernel starts with the trait off: the browser's choice
// wins). Turning it on asks the browser for permission (inside the click, as browsers
// require); a refusal turns the option back off and says why, so the switch never claims
// notifications that cannot appear. When the option was turned on from Python or restored,
// nobody clicked: an "Allow" button asks then. The note follows the browser's permission
// (the Permissions API's change event, and whenever the page comes back into view).
import { el, setData, setHidden, text } from "../dom";
import type { Model } from "../link";
import { notifier, permission, requestPermission, type Permission } from "../notify";
import { loadPref, savePref } from "../prefs";

const PREF = "notifications";

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
    label.appendChild(document.createTextNode(" Notify"));
    label.title = "Desktop notifications when a session needs you and this page is not in front";
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
    const stored = loadPref(PREF);
    if (stored !== null && (stored === "on") !== (model.get("desktop_notifications") === true)) {
      this.save(stored === "on", false);
    }
    this.sync();
    document.addEventListener("visibilitychange", this.onTrait);
    void this.watchPermission();
  }

  private permissionStatus: PermissionStatus | null = null;

  private async watchPermission(): Promise<void> {
    try {
      const status = await navigator.permissions?.query({ name: "notifications" as PermissionName });
      if (!status || this.destroyed) return;
      this.permissionStatus = status;
      status.addEventListener("change", this.onTrait);
    } catch {
      // no Permissions API: the note is re-checked when the page comes back into view
    }
  }

  private destroyed = false;

  destroy(): void {
    this.destroyed = true;
    this.model.off("change:desktop_notifications", this.onTrait);
    document.removeEventListener("visibilitychange", this.onTrait);
    this.permissionStatus?.removeEventListener("change", this.onTrait);
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

  private save(on: boolean, remember = true): void {
    if (remember) savePref(PREF, on ? "on" : "off");
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
