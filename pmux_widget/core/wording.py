"""What a session does, in the words the widget's rows, the notifications and ``status``
share: its activity, what it asks (paths relative to its folder, file names never cut), the
answer of its latest turn only, and how full its context window is. Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pmux_widget.core.agents import DEFAULT_AGENT, Agent
from pmux_widget.core.model import ATTENTION_STATES, PRIORITY, Session, State
from pmux_widget.core.question import Question

__all__ = [
    "AGENT_NAMES",
    "AUTO_COMPACT_AT",
    "CONTEXT_WARN_AT",
    "CONTEXT_WINDOWS",
    "DEFAULT_CONTEXT_WINDOW",
    "NEEDS_YOU",
    "NEED_YOU_STATES",
    "NEED_YOU_WORDS",
    "PATH_LIMIT",
    "Lines",
    "activity",
    "agent_mark",
    "answer",
    "asks",
    "context_window",
    "error_text",
    "knows_the_ask",
    "lines",
    "need_you",
    "need_you_sentence",
    "needs_you",
    "non_interactive",
    "notification_text",
    "pane_title",
    "plan_words",
    "question_words",
    "relative_paths",
    "shorten_path",
    "title_prefix",
]


# --------------------------------------------------------------------------- what a session does

#: A path longer than this is shortened in the middle; its file name is always kept.
PATH_LIMIT = 40
_PATH = re.compile(r"(?<![\w.:/-])(/[^\s\"'`]+)")


def relative_paths(text: str, cwd: str | None) -> str:
    """``text`` with absolute paths under ``cwd`` made relative to it, and every path longer than
    :data:`PATH_LIMIT` shortened in the middle (``src/…/pay/payments.py``): the file name is the
    part a reader needs, so it is never what gets cut."""
    root = (cwd or "").rstrip("/")

    def one(match: re.Match[str]) -> str:
        path = match.group(1)
        if root and path == root:
            path = "."
        elif root and path.startswith(root + "/"):
            path = path[len(root) + 1 :]
        return shorten_path(path)

    return _PATH.sub(one, text) if "/" in text else text


def shorten_path(path: str, limit: int = PATH_LIMIT) -> str:
    """``path`` cut in the middle to about ``limit`` characters, keeping its first directory and
    as many of its last parts as fit (the file name always)."""
    if len(path) <= limit:
        return path
    parts = path.split("/")
    first = 2 if path.startswith("/") else 1
    head, middle, tail = "/".join(parts[:first]), parts[first:-1], parts[-1]
    if not middle:
        return path
    for part in reversed(middle):
        if len(head) + len(part) + len(tail) + 4 > limit:
            break
        tail = f"{part}/{tail}"
    return f"{head}/…/{tail}"


def activity(session: Session) -> str | None:
    """The current tool and what it works on, paths relative to the session's folder."""
    tool, summary = session.current_tool, session.tool_summary
    if not tool and not summary:
        return None
    text = summary or tool or ""
    if tool and summary and not summary.lower().startswith(tool.lower()):
        text = f"{tool} {summary}"
    return relative_paths(text, session.cwd)


#: What a tool asks for, in words: ``{}`` is its argument (the summary without the tool name).
_ASKS: Mapping[str, str] = {
    "Bash": "asks to run: {}",
    "Edit": "asks to edit {}",
    "MultiEdit": "asks to edit {}",
    "Write": "asks to write {}",
    "Read": "asks to read {}",
    "NotebookEdit": "asks to edit {}",
    "WebFetch": "asks to fetch {}",
    "WebSearch": "asks to search the web for {}",
    "Grep": "asks to search for {}",
    "Glob": "asks to list {}",
}


def knows_the_ask(session: Session) -> bool:
    """Whether :func:`asks` can say what the dialog asks: its tool, or its question or plan
    (not ``waiting_for``: the PID file's is only "permission prompt", "dialog open", ...). A
    dialog is known from the PID file's ``waiting`` before its PermissionRequest says what."""
    asked = session.question
    return bool(session.current_tool or (asked is not None and asked.kind != "permission"))


def asks(session: Session) -> str:
    """What a needs-input session asks, in full words: a question with its options, a plan,
    or the tool with its command or file (relative to the session's folder), else Claude's
    own words, else that it waits. Never a tool's name for a question or a plan."""
    question = session.question
    if question is not None and question.kind == "question":
        return question_words(question)
    if question is not None and question.kind == "plan":
        return plan_words(question)
    tool, summary = session.current_tool, session.tool_summary
    if tool:
        arg = summary or ""
        if arg.lower().startswith(tool.lower()):
            arg = arg[len(tool) :].strip()
        if tool == "Bash" and arg.startswith("$ "):
            arg = arg[2:]
        arg = relative_paths(arg, session.cwd)
        if not arg:
            return f"asks to use {tool}"
        return _ASKS.get(tool, f"asks to use {tool}: {{}}").format(arg)
    if session.waiting_for:
        return relative_paths(session.waiting_for, session.cwd)
    return "waits for your answer"


#: A row's words stay one line: a longer question or plan is cut here (the whole text is in
#: ``question``).
_ASK_LIMIT = 160


def question_words(question: Question) -> str:
    """ "asks: Which colour should the badge use? — Purple / Amber"; several questions are
    joined with "; " and counted."""
    if not question.questions:
        return "asks a question"
    parts = [
        f"{ask.question} — {' / '.join(ask.labels)}" if ask.labels else ask.question
        for ask in question.questions
    ]
    head = "asks: " if len(parts) == 1 else f"asks {len(parts)} questions: "
    return _one_line(head + "; ".join(parts))


def plan_words(question: Question) -> str:
    """ "plan ready: 1. Add the badge. 2. …", or only "plan ready" when the CLI keeps the plan
    off the dialog."""
    if not question.plan:
        return "plan ready: approve it or keep planning"
    return _one_line("plan ready: " + question.plan)


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ASK_LIMIT else text[: _ASK_LIMIT - 1] + "…"


def answer(session: Session) -> str | None:
    """The last answer, unless a newer prompt came after it (then it answers an older turn)."""
    if not session.last_assistant:
        return None
    t = session.tracking
    if t.prompt_at and t.assistant_at and t.assistant_at < t.prompt_at:
        return None
    if session.state in (State.BUSY, State.NEEDS_INPUT):
        return None  # a turn is under way: whatever was said before belongs to the last one
    return session.last_assistant


def error_text(session: Session) -> str | None:
    """The error a turn ended with, and its details ("rate_limit: 429 Too Many Requests")."""
    if not session.error:
        return None
    detail = session.error_detail
    return f"{session.error}: {detail}" if detail else session.error


@dataclass(frozen=True, slots=True)
class Lines:
    """What a session's row says besides its state (js/src/render/row.ts ``rowLines`` says the
    same for the widget): ``primary``, what it does now, asks or answered; ``secondary``, the
    prompt it works on (busy, needs-input); ``error``, the error its turn ended with."""

    primary: str | None
    secondary: str | None
    error: str | None


def lines(session: Session) -> Lines:
    """The row's words: busy → the current tool (else "thinking"), and the prompt;
    needs-input → what it asks, and the prompt; review → the answer (else "finished its
    turn"); idle and ended → the answer, if it answers the latest prompt."""
    error = error_text(session)
    prompt = f"“{session.last_prompt}”" if session.last_prompt else None
    if session.ended:
        return Lines(answer(session), None, error)
    if session.state is State.NEEDS_INPUT:
        return Lines(asks(session), prompt, error)
    if session.state is State.BUSY:
        doing = activity(session) or (
            "compacting its context" if session.compacting else "thinking"
        )
        return Lines(doing, prompt, error)
    if session.state is State.REVIEW and error is None:
        return Lines(answer(session) or "finished its turn", None, None)
    return Lines(answer(session), None, error)


def non_interactive(session: Session) -> str | None:
    """How a session nobody sits at was started, in the words its row's badge shows
    (``claude -p``, ``SDK``, ``background``); None for an interactive session or when not known.
    Such a session's finished turn is idle, not review: it waits for nobody."""
    t = session.tracking
    if t.interactive is not False:
        return None
    entry = t.entrypoint or ""
    if entry == "sdk-cli":
        return "claude -p"
    if entry.startswith("sdk-"):
        return "SDK"
    return "background"  # a daemon or its worker (the PID file's kind)


#: Claude Code's status glyph before its title: ✳ when idle, a braille spinner while working.
_CLAUDE_GLYPH = re.compile(r"^[\u2733\u2800-\u28ff]\s*")
#: Titles that name no session: Claude Code's before it has a topic, the bare program.
_NO_TOPIC = frozenset({"claude code", "claude", ""})


def pane_title(session: Session, machine: str | None = None) -> str | None:
    """The session's tmux pane title when it tells something the row does not, else None.

    Kept: a title the user gave the pane (``select-pane -T``, a shell's), and the topic Claude
    Code names the conversation by (it titles the pane "✳ <topic>"), without the status glyph,
    which changes with the state the row already shows. Dropped: tmux's default (the machine's
    name: ``machine``, or the session's ``host`` in a fleet), Claude's title before it has a
    topic ("Claude Code"), and a title that only repeats the row's project or tmux window."""
    if session.tmux is None:
        return None
    title = _CLAUDE_GLYPH.sub("", session.tmux.title.strip()).strip()
    if title.lower() in _NO_TOPIC:
        return None
    hosts = {h for h in (machine, session.host) if h}
    if any(title == h or title == h.split(".", 1)[0] for h in hosts):
        return None
    if title in (session.project, session.tmux.window, session.tmux.session):
        return None
    return title


def notification_text(session: Session) -> tuple[str, str]:
    """The (title, body) of a desktop notification, in the rows' words (for core.tracker); a
    session of another agent than Claude is named with its mark, as its row ("api (Codex)")."""
    mark = agent_mark(session.agent)
    name = session.name if mark is None else f"{session.name} ({mark})"
    if session.state is State.NEEDS_INPUT:
        return f"{name} needs you", asks(session)
    if session.error:
        body = session.error_detail or "the turn ended with an error"
        return f"{name} stopped: {session.error}", body
    return f"{name} finished its turn", answer(session) or "ready for review"


# --------------------------------------------------------------------------- what needs you
# One meaning of "need you" everywhere: a live session in needs-input or review (the counts'
# ``attention``). The status bar, Notebook 7's top bar, the bell, the tab title, the panel's
# "Needs you" section and ``status`` say it in these words; the browser gets them through
# js/src/contract.gen.ts, and tests/test_contract.py with js/tests/wording.test.ts check that
# both sides say the same. (A status bar saying "2 need you" over a "Needs you" section of one
# row, the review row sitting below it, was issue 30.)

#: The states a session needs you in (the ones the attention count counts), most urgent first.
NEED_YOU_STATES: tuple[State, ...] = tuple(s for s in PRIORITY if s in ATTENTION_STATES)
#: The title of every list of them: the panel's section, its "by state" group, the bell's sheet.
NEEDS_YOU = "Needs you"
#: The words, ``{n}`` the count. ``count`` is the contract's "N need you" (DESIGN.md), "1 need
#: you" too, which scripts and tests match; ``one``/``many``/``none`` are the sentence a
#: screen reader hears and a tooltip or digest shows; ``title`` prefixes the tab's title.
NEED_YOU_WORDS: Mapping[str, str] = {
    "section": NEEDS_YOU,
    "count": "{n} need you",
    "none": "Nothing needs you",
    "one": "1 session needs you",
    "many": "{n} sessions need you",
    "title": "({n}) ",
}


def needs_you(session: Session) -> bool:
    """Whether ``session`` is one the count counts and the "Needs you" section lists."""
    return not session.ended and session.state in NEED_YOU_STATES


def need_you(n: int) -> str:
    """The count: "2 need you" (the status bar's, the top bar's, ``status``'s first line)."""
    return NEED_YOU_WORDS["count"].format(n=n)


def need_you_sentence(n: int) -> str:
    """ "Nothing needs you", "1 session needs you", "3 sessions need you"."""
    key = "none" if n <= 0 else "one" if n == 1 else "many"
    return NEED_YOU_WORDS[key].format(n=n)


def title_prefix(n: int) -> str:
    """What the tab's title starts with: "(2) ", nothing when nothing needs you."""
    return NEED_YOU_WORDS["title"].format(n=n) if n > 0 else ""


# --------------------------------------------------------------------------- which agent
# A row of another agent than Claude Code carries a small mark with that agent's name (issue
# 36): rows, the status bar's list, terminal tabs and ``status`` name it in these words (the
# browser gets them through js/src/contract.gen.ts). Claude's rows carry none: most rows are
# Claude's, and a mark on every row would tell nothing.

#: What each agent is called beside a session or a count ("Claude: busy", "Codex sessions: 1
#: running"): the short name; a sentence about the program says FACTS' title ("Claude Code").
AGENT_NAMES: Mapping[Agent, str] = {"claude": "Claude", "codex": "Codex"}


def agent_mark(agent: Agent) -> str | None:
    """The mark a row of ``agent`` carries ("Codex"), None for the default agent's rows."""
    return None if agent == DEFAULT_AGENT else AGENT_NAMES[agent]


# --------------------------------------------------------------------------- context window

#: The context window by model id, first match wins: the 1M-context variants are named with
#: a "[1m]" suffix (or "1M context" in their display name); every current Claude model has
#: 200k otherwise.
CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("[1m]", 1_000_000),
    ("1m context", 1_000_000),
    ("-1m", 1_000_000),
)
DEFAULT_CONTEXT_WINDOW = 200_000
#: Claude Code compacts on its own when the context reaches about 92-95% of the window; the
#: lower end is taken, so the warning can come early but never late.
AUTO_COMPACT_AT = 0.92
#: The share of the window from which a row warns that compaction is near (about 24k tokens,
#: one or two turns that read files, before AUTO_COMPACT_AT on a 200k window).
CONTEXT_WARN_AT = 0.80


def context_window(model: str | None) -> int:
    """The context window (tokens) of ``model``; 200k when unknown."""
    name = (model or "").lower()
    for marker, window in CONTEXT_WINDOWS:
        if marker in name:
            return window
    return DEFAULT_CONTEXT_WINDOW
