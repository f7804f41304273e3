"""Reading an agent's terminal screen, the parts every agent's reader shares (Claude Code's in
``agents/claude/screen.py`` and ``agents/claude/ask_screen.py``, Codex's in
``agents/codex/screen.py``): the capture's lines, and the fingerprint that names a dialog.
Pure: text in, facts out."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["dialog_fingerprint", "screen_lines"]


def screen_lines(text: str) -> list[str]:
    """A ``capture-pane`` text's lines, without the blank ones that pad the pane's foot."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def dialog_fingerprint(parts: Iterable[str]) -> str:
    """A short hash of what a dialog shows: an action that names a dialog by it is refused
    when another dialog is on screen by then."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]
