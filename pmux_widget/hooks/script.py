"""The hook script and the settings command that runs it.

The script's text is ``status-hook.sh`` beside this module (a real file, so it can be read,
linted and diffed as sh); :func:`render_script` bakes a home's path into it. What it does and
why it is written that way: ``docs/hooks.md``.
"""

from __future__ import annotations

import shlex
from importlib import resources
from pathlib import Path
from typing import Any

from pmux_widget.core.signals import HOOK_EVENTS
from pmux_widget.core.vocabulary import HookEvent
from pmux_widget.system.files import atomic_write
from pmux_widget.system.home import PmuxHome

from .spool import SPOOL_CAP

__all__ = [
    "HOOK_TIMEOUT",
    "MARKER",
    "SCRIPT_NAME",
    "TOOL_EVENTS",
    "hook_command",
    "hook_entry",
    "is_our_command",
    "registered_events",
    "render_script",
    "sh_quote",
    "write_script",
]

#: Marker comment ending our settings command (survives a moved home).
MARKER = "# pmux-widget"
#: ``"timeout"`` (seconds) of our settings entries.
HOOK_TIMEOUT = 5
SCRIPT_NAME = "status-hook.sh"
#: The per-tool events, registered only on request (``pmux-widget install --tool-hooks``).
#: They fire twice per tool call, and Claude Code pays for every hook it runs, even an async
#: one: about 4 ms per hook for a no-op command on an idle machine, +16 ms per tool call for
#: ours (P18, issue 28). The monitor needs none of them: the current tool comes from the
#: transcript, a dialog's answer from the PID file (``waiting`` → ``busy``). When asked for,
#: they are ``"async": true`` (the CLI does not wait) and the tracker pairs a call's two hooks
#: by ``tool_use_id``, as they may arrive out of order.
TOOL_EVENTS: tuple[HookEvent, ...] = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def registered_events(tool_hooks: bool = False) -> tuple[HookEvent, ...]:
    """The events ``install`` registers, in the contract's order: all but the per-tool ones,
    unless ``tool_hooks``. The others stay synchronous: they come once per turn or session,
    or they must beat the terminal (PermissionRequest, Notification: the dot before the
    dialog), or the CLI may exit right after them (Stop, SessionEnd)."""
    return tuple(e for e in HOOK_EVENTS if tool_hooks or e not in TOOL_EVENTS)


_TEMPLATE: str | None = None


def _template() -> str:
    global _TEMPLATE
    if _TEMPLATE is None:
        _TEMPLATE = resources.files(__package__).joinpath(SCRIPT_NAME).read_text("utf-8")
    return _TEMPLATE


def sh_quote(text: str) -> str:
    """``text`` as ONE single-quoted sh word (``'`` written as ``'\\''``), always quoted."""
    return "'" + text.replace("'", "'\\''") + "'"


def _curlrc_escape(text: str) -> str:
    """``text`` for a double-quoted value in a curl config file (``curl -K``)."""
    for char, escaped in (
        ("\\", "\\\\"),
        ('"', '\\"'),
        ("\n", "\\n"),
        ("\r", "\\r"),
        ("\t", "\\t"),
        ("\v", "\\v"),
    ):
        text = text.replace(char, escaped)
    return text


def render_script(home: PmuxHome) -> str:
    """The hook script's text for ``home`` (its absolute path is baked in, sh-quoted, and
    curl-config-escaped then sh-quoted for the ``-K`` options)."""
    root = str(home.root)
    return (
        _template()
        .replace("@HOME@", sh_quote(root))
        .replace("@HOME_CURLRC@", sh_quote(_curlrc_escape(root)))
        .replace("@CAP@", str(SPOOL_CAP))
    )


def write_script(home: PmuxHome) -> Path:
    """Write ``hooks/status-hook.sh`` (0700, atomically) unless it is already up to date."""
    home.ensure()
    path = home.hook_script
    text = render_script(home).encode()
    try:
        if path.read_bytes() == text and path.stat().st_mode & 0o777 == 0o700:
            return path
    except OSError:
        pass
    atomic_write(path, text, 0o700)
    return path


def hook_command(home: PmuxHome, agent: str | None = None) -> str:
    """The settings.json command (for ``/bin/sh -c``), see ``docs/hooks.md``.

    ``[ -x '<script>' ] && exec '<script>'; cat >/dev/null # pmux-widget``: ``exec`` saves
    a fork (and makes the script's parent Claude itself); when the script is gone (home
    deleted without ``uninstall``), stdin is drained and the hook still exits 0 silently.
    ``agent`` (``"codex"``): passed to the script as its argument, so the hub knows which
    agent sent the hook (Claude's command names none).
    """
    script = sh_quote(str(home.hook_script))
    named = f" {agent}" if agent else ""
    return f"[ -x {script} ] && exec {script}{named}; cat >/dev/null {MARKER}"


def hook_entry(home: PmuxHome, event: str | None = None) -> dict[str, Any]:
    """Our hook object for ``event``, as it appears in a matcher group's ``hooks`` list
    (``"async": true`` for :data:`TOOL_EVENTS`; ``event`` None: a synchronous one)."""
    entry: dict[str, Any] = {"type": "command", "command": hook_command(home)}
    entry["timeout"] = HOOK_TIMEOUT
    if event in TOOL_EVENTS:
        entry["async"] = True
    return entry


def is_our_command(command: object, home: PmuxHome | None = None) -> bool:
    """Is this settings ``command`` one of ours (marker form, or exactly ``home``'s script)?"""
    if not isinstance(command, str):
        return False
    stripped = command.rstrip()
    if SCRIPT_NAME in stripped and stripped.endswith(MARKER):
        return True
    if home is None:
        return False
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return False
    return words == [str(home.hook_script)]


def _is_our_hook(hook: object, home: PmuxHome | None) -> bool:
    return isinstance(hook, dict) and is_our_command(hook.get("command"), home)


def _matches_all(group: dict[str, Any]) -> bool:
    return group.get("matcher") in (None, "", "*")
