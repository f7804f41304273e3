// The status item's tooltip (pure: no Lumino, so the unit tests import it).
import { attentionRows } from "../../src/render/sheet";
import { LABEL, needYouSentence } from "../../src/states";
import type { Row } from "../../src/types";

/** "2 sessions need you:" then one line per session, in the order of the panel's "Needs you"
 * section and the bell's sheet (needs-input first, each longest-waiting first). */
export function waitingList(rows: Iterable<Row>): string {
  const waiting = attentionRows(rows);
  const lines = waiting.slice(0, 12).map((row) => {
    const what = row.state === "needs-input" && row.asks ? `: ${row.asks}` : "";
    return `• ${row.name} — ${LABEL[row.state]}${what}`;
  });
  if (waiting.length > 12) lines.push(`… and ${waiting.length - 12} more`);
  return [`${needYouSentence(waiting.length)}:`, ...lines].join("\n");
}
