// The palette's commands: show the panel; jump to the next session that needs you; approve or
// deny it. Approve/deny go through the panel's view, as a click on the row's button does (the
// same dialog token, the same checks on the server, the same "approving…" and refusal).
import type { CommandRegistry } from "@lumino/commands";
import { attentionRows } from "../../src/render/sheet";
import type { ActionName, Row } from "../../src/types";
import type { SessionsPanel } from "./panel";

export const CMD = {
  show: "pmux-widget:show-panel",
  next: "pmux-widget:next-waiting",
  approve: "pmux-widget:approve",
  deny: "pmux-widget:deny",
} as const;

export const CATEGORY = "Claude sessions";

export function addCommands(commands: CommandRegistry, panel: SessionsPanel, open: () => void): void {
  /** the session last jumped to: approve/deny answer it while it still asks */
  let target: string | null = null;

  const rows = (): Row[] => panel.liveRows();
  // in the order of the panel's "Needs you" block and the bell's sheet: "next" walks it down
  const waiting = (): Row[] => attentionRows(rows());
  const asking = (): Row | undefined => {
    const all = waiting().filter((row) => row.state === "needs-input");
    return all.find((row) => row.session_id === target) ?? all[0];
  };

  commands.addCommand(CMD.show, {
    label: "Show Claude Sessions Panel",
    caption: "Open the side panel with every Claude Code session",
    execute: () => open(),
  });

  commands.addCommand(CMD.next, {
    label: "Jump to the Next Claude Session That Needs You",
    isEnabled: () => waiting().length > 0,
    execute: () => {
      const list = waiting();
      if (list.length === 0) return;
      const at = list.findIndex((row) => row.session_id === target);
      const next = list[(at + 1) % list.length];
      target = next.session_id;
      open();
      const el = panel.view?.list.rowView(next.session_id)?.el;
      if (el) {
        el.scrollIntoView({ block: "nearest" });
        el.focus();
      }
    },
  });

  const act = (action: ActionName, label: string) =>
    commands.addCommand(CMD[action as "approve" | "deny"], {
      label: () => {
        const row = asking();
        return row ? `${label} ${row.name}` : `${label} the Claude Session That Asks`;
      },
      caption: `${label} the permission dialog of the session that waits (the one last jumped to, else the longest waiting)`,
      isEnabled: () => asking() !== undefined,
      execute: () => {
        const row = asking();
        if (!row || !panel.view) return;
        target = row.session_id;
        open();
        panel.view.act(row.session_id, action);
      },
    });
  act("approve", "Approve");
  act("deny", "Deny");
}
