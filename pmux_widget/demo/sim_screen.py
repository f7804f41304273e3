"""What the simulated CLI draws (:mod:`.sim_claude`): the screen of Claude Code 2.1.197 as
pmux-widget's screen parser reads it: the header, the prompt box when idle, "esc to
interrupt" when busy, and the permission dialog "Do you want to proceed? ❯ 1. Yes / 2. … /
3. No" when asking; a question (AskUserQuestion: one single-select question, its options,
"Type something.", "Chat about this") and a plan (ExitPlanMode: the plan between dashed
borders, "1. Yes, and use auto mode / 2. Yes, manually approve edits / 3. Tell Claude what to
change") as 2.1.197 draws them (recorded: tests/fixtures/screens/2.1.197-questions/)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Protocol

from .simulated import CLI_VERSION

__all__ = ["Shown", "dialog_rows", "render", "repaint", "screen_size", "summary"]


class Shown(Protocol):
    """What the screen shows of a session (``sim_claude.LiveSession`` has it all)."""

    @property
    def cwd(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def live(self) -> bool: ...
    @property
    def turn_open(self) -> bool: ...
    @property
    def compacting(self) -> bool: ...
    @property
    def lines(self) -> list[str]: ...
    @property
    def dialog(self) -> tuple[str, str, dict[str, Any]] | None: ...


def summary(tool_input: dict[str, Any]) -> str:
    """What a tool call is about, in one line (its command, file, pattern or description)."""
    for key in ("command", "file_path", "pattern", "description"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value.splitlines()[0][:120]
    return ""


_RULE = "─"
_HEADER_ART = (" ▐▛███▜▌ ", "▝▜█████▛▘", "  ▘▘ ▝▝  ")


def _model_label(model: str) -> str:
    if "opus" in model:
        return "Opus 4.8 (1M context)"
    if "sonnet" in model:
        return "Sonnet 4.5"
    return model


def dialog_rows(name: str, tool_input: dict[str, Any]) -> int:
    """How many rows the selection moves through in this dialog."""
    if name == "AskUserQuestion":
        return len(_first_question(tool_input).get("options", [])) + 2  # Other, Chat about this
    return 3


def _first_question(tool_input: dict[str, Any]) -> dict[str, Any]:
    questions = tool_input.get("questions")
    first = questions[0] if isinstance(questions, list) and questions else {}
    return first if isinstance(first, dict) else {}


def _question_lines(tool_input: dict[str, Any], selected: int, field: str) -> list[str]:
    ask = _first_question(tool_input)
    options = [o for o in ask.get("options", []) if isinstance(o, dict)]
    lines = [f" ☐ {ask.get('header', '')}", str(ask.get("question", ""))]
    for i, option in enumerate(options):
        mark = "❯" if i == selected else " "
        lines.append(f"{mark} {i + 1}. {option.get('label', '')}")
        if option.get("description"):
            lines.append(f"     {option['description']}")
    other = len(options)
    lines.append(f"{'❯' if selected == other else ' '} {other + 1}. {field or 'Type something.'}")
    lines.append(_RULE * 40)
    lines.append(f"{'❯' if selected == other + 1 else ' '} {other + 2}. Chat about this")
    lines.append("Enter to select · ↑/↓ to navigate · Esc to cancel")
    return lines


def _plan_lines(s: Shown, tool_input: dict[str, Any], selected: int, field: str) -> list[str]:
    plan = str(tool_input.get("plan", ""))
    border = "╌" * 40
    choices = ["Yes, and use auto mode", "Yes, manually approve edits"]
    choices.append(field or "Tell Claude what to change")
    rows = [f" {'❯' if i == selected else ' '} {i + 1}. {label}" for i, label in enumerate(choices)]
    name = Path(s.cwd).name
    return [
        " Ready to code?",
        " Here is Claude's plan:",
        border,
        *(f" {line}" for line in plan.splitlines()),
        border,
        _RULE * 40,
        " Claude has written up a plan and is ready to execute. Would you like to proceed?",
        *rows,
        "      shift+tab to approve with this feedback",
        f" ctrl+g to edit in  Vim  · ~/.claude/plans/{name}-plan.md",
    ]


def _dialog_lines(s: Shown, selected: int) -> list[str]:
    assert s.dialog is not None
    _, name, tool_input = s.dialog
    field = str(getattr(s, "field", ""))
    if name == "AskUserQuestion":
        return _question_lines(tool_input, selected, field)
    if name == "ExitPlanMode":
        return _plan_lines(s, tool_input, selected, field)
    if name in ("Edit", "Write"):
        path = str(tool_input.get("file_path", ""))
        short = os.path.relpath(path, s.cwd) if path.startswith(s.cwd) else path
        title = "Edit file" if name == "Edit" else "Create file"
        body = [f" {short}"]
        if name == "Edit":
            old, new = tool_input.get("old_string", ""), tool_input.get("new_string", "")
            body += [f"   - {old}", f"   + {new}"]
        question = f"Do you want to make this edit to {Path(path).name}?"
        second = "Yes, allow all edits during this session (shift+tab)"
        foot = " Esc to cancel · Tab to amend"
    else:
        title = "Bash command" if name == "Bash" else f"{name} tool"
        command = summary(tool_input)
        body = ["", f"   {command}"]
        if isinstance(tool_input.get("description"), str):
            body.append(f"   {tool_input['description']}")
        word = command.split()[0] if command.split() else name
        question = "Do you want to proceed?"
        second = f"Yes, and don't ask again for {word} commands in {s.cwd}"
        foot = " Esc to cancel · Tab to amend · ctrl+e to explain"
    choices = ["Yes", second, "No"]
    rows = [f" {'❯' if i == selected else ' '} {i + 1}. {label}" for i, label in enumerate(choices)]
    return [f" {title}", *body, "", f" {question}", *rows, "", foot]


def render(s: Shown, typed: str, selected: int, width: int, height: int) -> list[str]:
    """The screen (``height`` lines at most, none wider than ``width``) as 2.1.197 shows it."""
    home = "~/" + Path(s.cwd).name
    header = [
        f"{_HEADER_ART[0]}  Claude Code v{CLI_VERSION}",
        f"{_HEADER_ART[1]}  {_model_label(s.model)} · API Usage Billing",
        f"{_HEADER_ART[2]}  {home}",
        "",
    ]
    rule = _RULE * max(20, width)
    if s.dialog is not None and s.live:
        panel = [rule, *_dialog_lines(s, selected)]
    else:
        room = max(1, width - 3)
        shown = typed[-room:]
        busy = s.live and s.turn_open
        footer = "  esc to interrupt · ← for agents" if busy else "  ? for shortcuts · ← for agents"
        panel = [rule, f"❯\u00a0{shown}", rule, footer]
        if busy:
            word = "Compacting conversation" if s.compacting else "Working"
            panel = [f"✻ {word}…", "", *panel]
    room = max(0, height - len(header) - len(panel) - 1)
    body = s.lines[-room:] if room else []
    lines = [*header, *body, "", *panel]
    return [line[: max(1, width - 1)] for line in lines][:height]


def screen_size(default: tuple[int, int]) -> tuple[int, int]:
    """The terminal's (columns, rows), ``default`` when stdout is no terminal."""
    try:
        size = os.get_terminal_size(sys.stdout.fileno())
    except OSError:
        return default
    return size.columns, size.lines


def repaint(lines: list[str]) -> None:
    """Write ``lines`` over the terminal's rows in place and clear what is below them: every
    row is rewritten (no clear first), so a capture mid-draw never sees a blank screen."""
    out = "\x1b[H" + "".join(f"\x1b[{n + 1};1H{line}\x1b[K" for n, line in enumerate(lines))
    out += f"\x1b[{len(lines) + 1};1H\x1b[J"
    os.write(sys.stdout.fileno(), out.encode())
