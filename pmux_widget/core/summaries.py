"""One-line summaries of a tool call, shown next to the current tool (``$ pytest -q``).

Pure functions used both for hook payloads (``tool_input``) and transcript ``tool_use`` blocks,
so a session reads the same whichever signal told us about the tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SUMMARY_LIMIT = 120


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _cut(text: str, limit: int = SUMMARY_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line_count(value: object) -> int:
    return len(value.splitlines()) if isinstance(value, str) and value else 0


def summarize_tool(name: str, tool_input: Mapping[str, Any] | None) -> str:
    """``Bash`` → ``$ <first line>``, ``Read <path>``, ``Edit <path> (+a, -r)``, ``Grep "<p>"``…

    Unknown tools read ``<Tool> <first string input>``; a missing input reads just the name.
    """
    args: Mapping[str, Any] = tool_input if isinstance(tool_input, Mapping) else {}

    def text(key: str) -> str:
        value = args.get(key)
        return value if isinstance(value, str) else ""

    if name == "Bash":
        return _cut(f"$ {_first_line(text('command'))}")
    if name in ("Read", "Write", "NotebookEdit"):
        path = text("file_path") or text("notebook_path") or text("path")
        return _cut(f"{name} {path}".rstrip())
    if name in ("Edit", "MultiEdit"):
        path = text("file_path")
        if name == "Edit":
            added = _line_count(args.get("new_string"))
            removed = _line_count(args.get("old_string"))
        else:
            edits = args.get("edits")
            parts = [e for e in edits if isinstance(e, Mapping)] if isinstance(edits, list) else []
            added = sum(_line_count(e.get("new_string")) for e in parts)
            removed = sum(_line_count(e.get("old_string")) for e in parts)
        return _cut(f"Edit {path} (+{added}, -{removed})")
    if name == "Grep":
        return _cut(f'Grep "{text("pattern")}"')
    if name == "Glob":
        return _cut(f"Glob {text('pattern')}")
    if name == "WebFetch":
        return _cut(f"WebFetch {text('url')}")
    if name == "WebSearch":
        return _cut(f'WebSearch "{text("query")}"')
    if name in ("Agent", "Task"):
        what = text("description") or _first_line(text("prompt"))
        return _cut(f"{name} {what}".rstrip())
    if name == "TodoWrite":
        todos = args.get("todos")
        return f"TodoWrite ({len(todos)} items)" if isinstance(todos, list) else "TodoWrite"
    for value in args.values():
        if isinstance(value, str) and value.strip():
            return _cut(f"{name} {_first_line(value)}")
    return name
