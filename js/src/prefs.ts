// What the user chose in this browser (grouping, desktop notifications), kept in localStorage
// so it survives kernel restarts and reloads. Storage can be absent or refuse (private modes,
// sandboxed frames): then a choice lasts as long as the page.

const PREFIX = "pmux-widget.";

export function loadPref(key: string): string | null {
  try {
    return globalThis.localStorage?.getItem(PREFIX + key) ?? null;
  } catch {
    return null;
  }
}

export function savePref(key: string, value: string): void {
  try {
    globalThis.localStorage?.setItem(PREFIX + key, value);
  } catch {
    // not kept: the choice still applies to this page
  }
}
