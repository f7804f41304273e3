"""What Codex's TUI shows (0.171.0): its approval dialog, a Plan-mode question, a running
turn, the composer. Pure: a ``capture-pane`` text in, facts out; the role
``agents/claude/screen.py`` has for Claude Code.

Recorded screens (``docs/codex-behaviour.md``, the reference §3)::

    Would you like to run the following command?
    Reason: …
    $ touch approved.txt
    › 1. Yes, proceed (y)
      2. Yes, and don't ask again for commands that start with `touch approved.txt` (p)
      3. No, and tell Codex what to do differently (esc)
    Press enter to confirm or esc to cancel

    Question 1/1 (1 unanswered)
    Which color should the banner be?
    › 1. Red (Recommended)  Warm and loud.
      2. Blue               Calm.
    tab to add notes | enter to submit answer | esc to interrupt

A choice is found by its label; its key is the one the dialog prints after it (``(y)``,
``(esc)``). A running turn shows ``Working (… esc to interrupt)`` until text streams; while it
streams, only the missing ``Worked for …`` after the last prompt tells (an interrupted turn
ends with ``■ Conversation interrupted``). The composer is the last ``›`` line, above the
footer; empty, it shows a dim placeholder that ``capture-pane`` cannot tell from text, so the
placeholders are known by their words (:data:`PLACEHOLDERS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pmux_widget.core.screen_text import dialog_fingerprint, screen_lines

__all__ = ["PLACEHOLDERS", "Choice", "Dialog", "Screen", "composer_holds", "parse_screen"]

#: The composer's placeholders (0.171.0 shows one of these when it is empty).
PLACEHOLDERS: frozenset[str] = frozenset(
    {
        "Ask Codex to do anything",
        "Explain this codebase",
        "Summarize recent commits",
        "Implement {feature}",
        "Find and fix a bug in @filename",
        "Write tests for @filename",
        "Improve documentation in @filename",
        "Run /review on my current changes",
        "Use /skills to list available skills",
    }
)

_PROMPT = "›"
_APPROVAL = re.compile(r"^\s*(Would you like to .+\?)\s*$")
_QUESTION = re.compile(r"^\s*Question (\d+)/(\d+)\b")
_CHOICE = re.compile(r"^\s*(›)?\s*(\d+)\.\s+(\S.*?)\s*$")
_KEY = re.compile(r"^(.*?)\s+\((\w+)\)$")
_DIALOG_END = re.compile(r"^\s*(Press enter to confirm|tab to add notes|enter to submit)")
_WORKING = re.compile(r"Working \(.*esc to interrupt\)")
#: What the TUI draws at the start of a line of its own (an answer, a tool, a notice): never
#: a wrapped prompt's.
_MARKS = frozenset("•└✔✗■⚠")
_HEADER = re.compile(r"^\W*>_ OpenAI Codex \(v")
_TURN_ENDED = re.compile(r"^\s*(Worked for\b|■ Conversation interrupted)")


@dataclass(frozen=True, slots=True)
class Choice:
    """One choice: its label, the key the dialog names for it (``y``, ``esc``; None for a
    question's options), its number, whether the selection is on it."""

    index: int
    label: str
    key: str | None
    number: int
    selected: bool
    description: str = ""


@dataclass(frozen=True, slots=True)
class Dialog:
    """An approval (``kind="permission"``) or a Plan-mode question (``kind="question"``)."""

    kind: Literal["permission", "question"]
    question: str
    body: tuple[str, ...]
    choices: tuple[Choice, ...]
    fingerprint: str

    def choice(self, answer: Literal["yes", "no"]) -> Choice | None:
        """An approval's plain ``yes`` ("Yes, proceed") or ``no`` ("No, and tell Codex what
        to do differently"); never "Yes, and don't ask again"."""
        if self.kind != "permission":
            return None
        for c in self.choices:
            if answer == "yes" and c.label in ("Yes", "Yes, proceed"):
                return c
            if answer == "no" and (c.label == "No" or c.label.startswith("No,")):
                return c
        return None

    def option(self, label: str) -> Choice | None:
        """A question's option by its label."""
        return next((c for c in self.choices if c.label == label), None)

    @property
    def selected(self) -> Choice | None:
        return next((c for c in self.choices if c.selected), None)

    @property
    def command(self) -> str | None:
        """An approval's command: its body from the ``$ …`` line on (a long or multi-line
        command goes on in the lines after it), None when it shows none."""
        at = next((i for i, b in enumerate(self.body) if b.startswith("$ ")), None)
        return None if at is None else " ".join([self.body[at][2:], *self.body[at + 1 :]])


@dataclass(frozen=True, slots=True)
class Screen:
    dialog: Dialog | None
    #: a turn runs: the "Working" line, or a prompt with no end of turn after it
    busy: bool
    #: the composer's text (``""`` when it shows its placeholder), None when none is shown
    prompt_text: str | None
    #: the last prompt sent that the screen shows (above the composer or the dialog, its
    #: wrapped lines joined), None when none is on screen
    sent: str | None = None


def parse_screen(text: str) -> Screen:
    """What ``text`` (a capture, maybe with scrollback above it) shows of the conversation
    on screen: the lines from its last header on (``/new`` and ``/resume`` draw one above
    the conversation they open: what is above it is another thread's)."""
    lines = screen_lines(text)
    headers = [i for i, line in enumerate(lines) if _HEADER.search(line)]
    if headers:
        lines = lines[headers[-1] :]
    at, dialog = _dialog(lines)
    prompt = None if dialog is not None else _composer(lines)
    prompts = _prompt_lines(lines)
    end = at if dialog is not None else (prompts[-1] if prompt is not None else len(lines))
    return Screen(dialog, _busy(lines, dialog), prompt, _sent(lines, prompts, end))


def _dialog(lines: list[str]) -> tuple[int, Dialog | None]:
    """The dialog and the line it starts on."""
    for i in range(len(lines) - 1, -1, -1):
        approval = _APPROVAL.match(lines[i])
        if approval is not None:
            return i, _choices(lines, i, "permission", approval.group(1))
        if _QUESTION.match(lines[i]):
            rest = [ln.strip() for ln in lines[i + 1 :] if ln.strip()]
            return i, _choices(lines, i + 1, "question", rest[0] if rest else "")
    return len(lines), None


def _sent(lines: list[str], prompts: list[int], end: int) -> str | None:
    """The last prompt sent above line ``end``: its ``›`` line and the indented lines it
    wrapped onto, whitespace collapsed. (An answer longer than the screen is drawn right
    under the prompt it answers, kept at the top: its lines start with a mark.)"""
    before = [i for i in prompts if i < end]
    if not before:
        return None
    parts = [lines[before[-1]][len(_PROMPT) :]]
    for line in lines[before[-1] + 1 : end]:
        if not line.startswith("  ") or not line.strip() or line.strip()[0] in _MARKS:
            break
        parts.append(line)
    return " ".join(" ".join(parts).split()) or None


def _choices(
    lines: list[str], at: int, kind: Literal["permission", "question"], question: str
) -> Dialog | None:
    body: list[str] = []
    choices: list[Choice] = []
    for line in lines[at + 1 :]:
        if _DIALOG_END.match(line):
            break
        match = _CHOICE.match(line)
        if match is None:
            if choices and line.strip():
                break  # the dialog ended without its footer (scrolled, or a notes field)
            if line.strip() and line.strip() != question:
                body.append(line.strip())
            continue
        marker, number, rest = match.groups()
        label, key, description = rest, None, ""
        if kind == "permission":
            keyed = _KEY.match(rest)
            if keyed is not None:
                label, key = keyed.group(1), keyed.group(2)
        else:
            label, description = [*re.split(r"\s{2,}", rest, maxsplit=1), ""][:2]
        choices.append(
            Choice(len(choices), label, key, int(number), marker is not None, description)
        )
    if not choices:
        return None
    digest = dialog_fingerprint([kind, question, *body, *(c.label for c in choices)])
    return Dialog(kind, question, tuple(body), tuple(choices), digest)


def _prompt_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith(_PROMPT + " ") or line == _PROMPT]


def _composer(lines: list[str]) -> str | None:
    """The last ``›`` line and the lines that go on from it (a multi-line or wrapped text,
    up to the blank line above the footer; joined by newlines), if only the footer (its two
    lines, or blank ones) follows."""
    prompts = _prompt_lines(lines)
    if not prompts:
        return None
    last = prompts[-1]
    end = last + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    after = [ln for ln in lines[end:] if ln.strip()]
    if len(after) > 3:
        return None
    text = "\n".join(
        [lines[last][len(_PROMPT) :].strip(), *(ln.strip() for ln in lines[last + 1 : end])]
    ).strip()
    return "" if text in PLACEHOLDERS else text


def composer_holds(composer: str | None, text: str) -> bool:
    """Whether a composer (``Screen.prompt_text``) shows ``text`` pasted into it: its last
    characters, line wraps and indents aside, or the placeholder Codex draws instead of a
    long paste (recorded on 0.171.0: 904 characters shown as they are, 1204 as
    ``[Pasted Content 1204 chars]``)."""
    if composer is None:
        return False
    shown = "".join(composer.split())
    if f"[PastedContent{len(text)}chars]" in shown:
        return True
    tail = "".join(text.split())[-20:]
    return bool(tail) and tail in shown


def _busy(lines: list[str], dialog: Dialog | None) -> bool:
    if any(_WORKING.search(line) for line in lines):
        return True
    if dialog is not None:
        return False
    prompts = _prompt_lines(lines)
    if len(prompts) < 2:
        return False
    asked = prompts[-2]  # the last prompt sent (the last ``›`` line is the composer)
    return not any(_TURN_ENDED.match(line) for line in lines[asked + 1 : prompts[-1]])
