"""The sessions table that ``pmux-widget status`` prints (and the widget's text form): shared
by the doors (notebook/, cli/, jupyter/), so none of them imports another for it.

It says what the widget's rows say, in the same words (:func:`pmux_widget.core.wording.lines`,
:func:`pmux_widget.core.contract.describe_source`): busy, the current tool and the prompt;
needs-input, what is asked (paths relative to the session's folder, file names kept); review,
the answer; why, in plain words (``raw_why``: the raw source beside them). It fits the
terminal: on a wide one, one line per session, what it does last; on a narrow one (80
columns), what it does on a line of its own under its row, and the token counts and the
context's share left to ``--json``.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pmux_widget.core.contract import describe_source
from pmux_widget.core.model import Session
from pmux_widget.core.wording import agent_mark, context_window, lines, need_you
from pmux_widget.system.clock import now_ms

__all__ = [
    "age",
    "clip",
    "doing",
    "format_table",
    "kilo",
    "redraw",
    "terminal_width",
    "watch",
]

#: What a session does gets at least this many columns on the rows' line, else a line of its own.
DOING_MIN = 36
#: Columns a session's name and its "why" may take before they are shortened.
NAME_MAX, WHY_MAX = 30, 36
#: ... and what they keep when the terminal is narrow: the name gives up its end first (the
#: tmux pane), then the "why" shrinks, then the name again.
NAME_SHORT, WHY_MIN, NAME_MIN = 16, 16, 12
GAP = "  "
_SPACE = re.compile(r"\s+")


def age(since_ms: int, now: int) -> str:
    seconds = max(0, (now - since_ms) // 1000)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}"
    return f"{seconds // 86400}d"


def kilo(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def terminal_width() -> int:
    """The terminal's columns (``$COLUMNS`` first; 80 when not a terminal)."""
    return shutil.get_terminal_size((80, 24)).columns


def clip(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` with an ellipsis."""
    text = _SPACE.sub(" ", text).strip()
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def doing(session: Session) -> str:
    """What the session does, asks or answered, in the widget's words, on one line."""
    said = lines(session)
    error = f"error: {said.error}" if said.error else None
    text = " · ".join(part for part in (error, said.primary, said.secondary) if part)
    if session.subagents:
        many = "s" if session.subagents > 1 else ""
        text = f"[{session.subagents} sub-agent{many}] {text}"
    return _SPACE.sub(" ", text).strip()


def _session(entry: Session | Mapping[str, Any]) -> Session:
    """A session as the hub holds it, or a row of a hub's answer (the contract's JSON). The
    JSON leaves out the bookkeeping that tells whether ``last_assistant`` answers the latest
    prompt; of a turn that ended in an error it is, nearly always, the turn before's (an
    API error leaves no answer): left out, as the widget leaves it out."""
    if isinstance(entry, Session):
        return entry
    session = Session.from_record(entry)
    return session.replace(last_assistant=None) if session.error else session


def _why(session: Session, raw: bool) -> str:
    words = describe_source(session.source)
    if raw and session.source and words != session.source:
        words = f"{words} [{session.source}]"
    if not session.running and not session.ended:
        words = f"not running · {words}" if words else "not running"
    return words


def _context(session: Session) -> str:
    if session.context_tokens <= 0:
        return ""
    share = round(100 * session.context_tokens / context_window(session.model))
    return f"{min(100, share)}%"


def _named(s: Session) -> str:
    """The session's name, with its agent's mark when it has one (``api [Codex]``: the
    rows' mark, core/wording.py)."""
    mark = agent_mark(s.agent)
    return s.name if mark is None else f"{s.name} [{mark}]"


def _tokens(session: Session) -> str:
    t = session.tokens
    return f"{kilo(t.input + t.cache_read + t.cache_creation)}/{kilo(t.output)}"


def _fit(cells: Sequence[str], widths: Sequence[int]) -> str:
    return GAP.join(clip(c, w).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()


def format_table(
    snapshot: Mapping[str, Any],
    now: int | None = None,
    *,
    width: int | None = None,
    raw_why: bool = False,
) -> str:
    """A readable table of ``snapshot`` (``{"sessions": [...], "counts": {...}}``, the
    sessions as the contract's JSON or as :class:`Session`), ``width`` columns wide (None:
    the terminal's)."""
    now = now_ms() if now is None else now
    width = terminal_width() if width is None else max(40, width)
    sessions = [_session(s) for s in snapshot.get("sessions", [])]
    counts = snapshot.get("counts", {})
    header = (
        f"{need_you(counts.get('attention', 0))} · {counts.get('needs-input', 0)} needs-input · "
        f"{counts.get('review', 0)} review · {counts.get('busy', 0)} busy · "
        f"{counts.get('unknown', 0)} unknown · {counts.get('idle', 0)} idle"
    )
    if not sessions:
        return header + "\nNo sessions yet."
    rows = [
        (
            "ended" if s.ended else s.state.value,
            age(s.state_since or now, now),
            s.session_id[:8],
            _named(s),
            _tokens(s),
            _context(s),
            _why(s, raw_why),
        )
        for s in sessions
    ]
    texts = [doing(s) for s in sessions]
    titles = ("STATE", "FOR", "ID", "SESSION", "TOKENS", "CTX", "WHY")
    widths = [max(len(titles[i]), *(len(r[i]) for r in rows)) for i in range(len(titles))]
    widths[3] = min(widths[3], NAME_MAX)
    widths[6] = min(widths[6], WHY_MAX * (2 if raw_why else 1))
    used = sum(widths) + len(GAP) * len(widths)
    if used + DOING_MIN <= width:  # one line per session, what it does last
        rest = min(width - used, max(len("DOING"), *(len(t) for t in texts)))
        table = [_fit([*titles, "DOING"], [*widths, rest])]
        table += [_fit([*r, t], [*widths, rest]) for r, t in zip(rows, texts, strict=True)]
        return header + "\n" + "\n".join(table)
    # Narrow: the token counts and the context's share go (``--json`` has them), what it
    # does gets a line of its own, the "why" the rest of the row, and the name and the "why"
    # give up columns until the row fits.
    keep = [0, 1, 2, 3, 6]
    narrow = [widths[i] for i in keep]
    narrow[-1] = max(len(r[6]) for r in rows)
    over = sum(narrow) + len(GAP) * (len(narrow) - 1) - width
    for index, floor in ((3, NAME_SHORT), (4, WHY_MIN), (3, NAME_MIN)):
        if over > 0:
            cut = min(over, max(0, narrow[index] - floor))
            narrow[index] -= cut
            over -= cut
    table = [_fit([titles[i] for i in keep], narrow)]
    for r, t in zip(rows, texts, strict=True):
        table.append(_fit([r[i] for i in keep], narrow))
        if t:
            table.append("  " + clip(t, width - 2))
    return header + "\n" + "\n".join(table)


def redraw(text: str) -> str:
    """``text`` drawn over the previous frame: cursor home, each line then the rest of it
    cleared, then everything below. Clearing the whole screen first made it blink on every
    refresh."""
    return "\x1b[H" + "".join(line + "\x1b[K\n" for line in text.splitlines()) + "\x1b[J"


def watch(frame: Callable[[], str], interval: float, *, in_place: bool) -> int:
    """Write ``frame()`` every ``interval`` s until Ctrl+C (then exit 0, the cursor back)."""
    out = sys.stdout
    try:
        if in_place:
            out.write("\x1b[?25l\x1b[2J")  # the cursor hidden; one clear, at the start only
        while True:
            out.write(frame())
            out.flush()
            time.sleep(interval)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # `status --watch | head`: the reader left
        return 0
    finally:
        if in_place:
            with contextlib.suppress(OSError):
                out.write("\x1b[?25h\n")
                out.flush()
