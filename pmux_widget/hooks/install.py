"""Our hooks in Claude's settings: install, uninstall, a ``--settings`` file, and status.

Which entries are ours, what is kept and what is refused: ``docs/hooks.md`` ("Settings
entries"). The JSON editing itself is :mod:`.settings_json`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.core.signals import HOOK_EVENTS
from pmux_widget.system.files import atomic_write
from pmux_widget.system.home import PmuxHome

from .script import (
    TOOL_EVENTS,
    hook_entry,
    is_our_command,
    registered_events,
    render_script,
    write_script,
)
from .settings_json import (
    Layout,
    SettingsError,
    dump,
    parse_settings,
    read_settings,
    write_settings,
)

__all__ = [
    "HooksStatus",
    "InstallResult",
    "UninstallResult",
    "default_settings_file",
    "hooks_status",
    "install",
    "install_settings_file",
    "uninstall",
]

_RECORD_NAME = "installed.json"
# The user's file as it was before our first install is kept in the record (0600, in our
# home, as the backup beside it) up to this size, so that uninstall gives its bytes back.
_ORIGINAL_MAX = 256 * 1024


def _is_our_hook(hook: object, home: PmuxHome | None) -> bool:
    return isinstance(hook, dict) and is_our_command(hook.get("command"), home)


def _matches_all(group: dict[str, Any]) -> bool:
    return group.get("matcher") in (None, "", "*")


def default_settings_file(claude_home: str | os.PathLike[str] | None = None) -> Path:
    """``<claude config dir>/settings.json`` (``$CLAUDE_CONFIG_DIR``, else ``~/.claude``)."""
    return ClaudeHome.resolve(claude_home).settings_file


def _record_path(home: PmuxHome) -> Path:
    return home.hooks_dir / _RECORD_NAME


def _load_records(home: PmuxHome) -> dict[str, Any]:
    try:
        data = json.loads(_record_path(home).read_text())
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def _save_records(home: PmuxHome, files: dict[str, Any]) -> None:
    home.hooks_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = json.dumps({"version": 1, "files": files}, indent=2, sort_keys=True) + "\n"
    atomic_write(_record_path(home), data.encode(), 0o600)


def _record_key(settings_file: Path) -> str:
    return os.path.realpath(settings_file)


@dataclass(frozen=True)
class InstallResult:
    """What :func:`install` did. ``message`` is for humans."""

    settings_file: Path
    changed: bool
    created: bool
    backup: Path | None
    script: Path
    added: tuple[str, ...]
    updated: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class UninstallResult:
    """What :func:`uninstall` did. ``message`` is for humans."""

    settings_file: Path
    changed: bool
    backup: Path | None
    removed: int
    message: str


def _same_entry(hook: object, wanted: dict[str, Any]) -> bool:
    """Exactly ``wanted``: same keys, order, values and types (``5.0`` is not ``5``)."""
    return isinstance(hook, dict) and dump(hook, Layout()) == dump(wanted, Layout())


def _merge_ours(
    doc: dict[str, Any], home: PmuxHome, events: tuple[str, ...]
) -> tuple[list[str], list[str], bool]:
    """Put our entry on every one of ``events``, in place; returns (added, updated, found).

    The first entry of ours sitting in a match-all group is kept (and rewritten if outdated);
    every other entry of ours is removed, with the groups that only held it. Ours on any
    other event goes (an older version's, or the per-tool ones when not asked for).
    """
    hooks = doc.setdefault("hooks", {})
    added: list[str] = []
    updated: list[str] = []
    found_any = False
    for event in events:
        wanted = hook_entry(home, event)
        groups = hooks.setdefault(event, [])
        spots = [
            (g, h)
            for g, group in enumerate(groups)
            for h, hook in enumerate(group.get("hooks") or [])
            if _is_our_hook(hook, home)
        ]
        found_any = found_any or bool(spots)
        keep = next(((g, h) for g, h in spots if _matches_all(groups[g])), None)
        changed = False
        if keep is not None and not _same_entry(groups[keep[0]]["hooks"][keep[1]], wanted):
            groups[keep[0]]["hooks"][keep[1]] = dict(wanted)
            changed = True
        drop = {spot for spot in spots if spot != keep}
        for g in sorted({g for g, _ in drop}, reverse=True):
            changed = True
            group = groups[g]
            group["hooks"] = [hook for h, hook in enumerate(group["hooks"]) if (g, h) not in drop]
            if not group["hooks"]:
                del groups[g]
        if keep is None:
            groups.append({"hooks": [dict(wanted)]})
        if keep is None and not spots:
            added.append(event)
        elif changed:
            updated.append(event)
    removed, dropped = _remove_ours(doc, home, None, skip=events)
    return added, updated + dropped, found_any or bool(removed)


def install(
    claude_settings_file: Path,
    home: PmuxHome,
    *,
    create_config_dir: bool = False,
    tool_hooks: bool = False,
) -> InstallResult:
    """Install our hooks into a Claude ``settings.json`` (rules: ``docs/hooks.md``).

    ``tool_hooks`` also registers the per-tool events (:data:`TOOL_EVENTS`), which cost the
    agent time on every tool call; without it, ours on them are removed (an upgrade).

    Also writes the hook script and creates the token. Raises :class:`SettingsError` for a
    malformed file (left byte-for-byte untouched), when the file cannot be written, or when
    the directory that holds it (Claude's config dir) is missing and ``create_config_dir``
    is not set: creating it would make Claude look installed when it is not.
    """
    path = Path(claude_settings_file)
    if not create_config_dir and not path.parent.is_dir():
        raise SettingsError(
            path,
            f"Claude's config dir {path.parent} does not exist: install Claude Code and run "
            "it once (or set CLAUDE_CONFIG_DIR to the directory your Claude uses); to create "
            "it anyway, pass --create",
        )
    original, doc, layout = read_settings(path)
    home.ensure()
    home.token()
    script = write_script(home)
    before = dump(doc, layout)
    hooks_existed = "hooks" in doc
    hooks_before = doc.get("hooks") or {}
    events = registered_events(tool_hooks)
    events_existed = [event for event in HOOK_EVENTS if event in hooks_before]
    added, updated, found_any = _merge_ours(doc, home, events)
    after = dump(doc, layout)
    changed = original is None or after != before
    backup = None
    if changed:
        backup = write_settings(path, original, after)
        records = _load_records(home)
        key = _record_key(path)
        record = records.get(key) if found_any else None
        if not isinstance(record, dict):
            record = {"hooks_existed": hooks_existed and not found_any, "events_existed": []}
            if original is not None and not found_any and len(original) <= _ORIGINAL_MAX:
                record["original"] = original.decode("utf-8")
        known = set(record.get("events_existed") or [])
        known.update(event for event in added if event in events_existed)
        record["events_existed"] = sorted(known)
        records[key] = record
        with contextlib.suppress(OSError):  # best effort: only refines a later uninstall
            _save_records(home, records)
    if not changed:
        message = f"{path}: hooks already installed, nothing to change"
    elif original is None:
        message = f"{path}: created with hooks for {len(events)} events"
    else:
        parts = []
        dropped = [e for e in TOOL_EVENTS if e in updated and e not in events]
        rewritten = [e for e in updated if e not in dropped]
        if added:
            parts.append(f"added for {len(added)} events")
        if rewritten:
            parts.append(f"updated for {len(rewritten)} events")
        if dropped:
            parts.append(
                f"removed from {', '.join(dropped)} (a hook per tool call costs the agent "
                "time; --tool-hooks keeps them)"
            )
        message = f"{path}: hooks {', '.join(parts) or 'rewritten'} (backup: {backup})"
    return InstallResult(
        settings_file=path,
        changed=changed,
        created=original is None,
        backup=backup,
        script=script,
        added=tuple(added),
        updated=tuple(updated),
        message=message,
    )


def _remove_ours(
    doc: dict[str, Any],
    home: PmuxHome,
    record: dict[str, Any] | None,
    skip: Iterable[str] = (),
) -> tuple[int, list[str]]:
    """Remove our hook objects and what became empty by that, except on ``skip`` events.

    Returns (how many hook objects were removed, the events they were removed from).
    """
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return 0, []
    keep_events = set((record or {}).get("events_existed") or [])
    skip = set(skip)
    removed = 0
    events = []
    for event in [event for event in hooks if event not in skip]:
        groups = hooks[event]
        touched = False
        for g in range(len(groups) - 1, -1, -1):
            group = groups[g]
            inner = group.get("hooks")
            if not isinstance(inner, list):
                continue
            kept = [hook for hook in inner if not _is_our_hook(hook, home)]
            if len(kept) == len(inner):
                continue
            removed += len(inner) - len(kept)
            touched = True
            if kept:
                group["hooks"] = kept
            else:
                del groups[g]
        if touched:
            events.append(event)
            if not groups and event not in keep_events:
                del hooks[event]
    if removed and not hooks and not (record or {}).get("hooks_existed"):
        del doc["hooks"]
    return removed, events


def _restored(path: Path, record: object, new: bytes, layout: Layout) -> bytes:
    """The user's own bytes from before our first install when ``new`` is that document.

    Our rewrite keeps keys, order, number spellings and indentation, but not a file's
    irregular layout (an object written on one line inside an indented file, odd spacing);
    when nothing else changed since, uninstall gives back the file exactly.
    """
    text = record.get("original") if isinstance(record, dict) else None
    if not isinstance(text, str):
        return new
    try:
        original = text.encode("utf-8")
        doc, _ = parse_settings(path, original)
    except (SettingsError, UnicodeError):
        return new
    return original if dump(doc, layout) == new else new


def uninstall(settings_file: Path, home: PmuxHome) -> UninstallResult:
    """Remove exactly our hook entries from a settings file (idempotent).

    Raises :class:`SettingsError` for a malformed file (left untouched).
    """
    path = Path(settings_file)
    original, doc, layout = read_settings(path)
    if original is None:
        return UninstallResult(path, False, None, 0, f"{path}: does not exist, nothing to do")
    records = _load_records(home)
    key = _record_key(path)
    record = records.get(key)
    removed, _ = _remove_ours(doc, home, record if isinstance(record, dict) else None)
    if not removed:
        return UninstallResult(path, False, None, 0, f"{path}: no pmux-widget hooks found")
    backup = write_settings(path, original, _restored(path, record, dump(doc, layout), layout))
    if key in records:
        del records[key]
        with contextlib.suppress(OSError):
            _save_records(home, records)
    return UninstallResult(
        path, True, backup, removed, f"{path}: removed {removed} hooks (backup: {backup})"
    )


def install_settings_file(home: PmuxHome, *, tool_hooks: bool = False) -> Path:
    """Write ``hooks/hooks.json``: a settings document with only our hooks.

    For ``claude --settings <file>`` (Claude adds the hooks of that file to the user's). Also
    writes the hook script and creates the token. ``tool_hooks``: as for :func:`install`.
    """
    home.ensure()
    home.token()
    write_script(home)
    events = registered_events(tool_hooks)
    doc = {"hooks": {event: [{"hooks": [hook_entry(home, event)]}] for event in events}}
    data = dump(doc, Layout())
    path = home.hooks_json
    try:
        if path.read_bytes() == data:
            return path
    except OSError:
        pass
    atomic_write(path, data, 0o600)
    return path


@dataclass(frozen=True)
class HooksStatus:
    """Whether our hooks are installed in a settings file, and usable.

    ``installed``: every event ``install`` registers has an entry of ours. ``ok``: installed,
    every entry is exactly the current one, the script exists and is executable, hooks are
    not disabled. ``tool_hooks``: the per-tool events that have ours (opt-in: they cost the
    agent time on every tool call).
    """

    settings_file: Path
    events_installed: tuple[str, ...] = ()
    events_missing: tuple[str, ...] = registered_events()
    events_outdated: tuple[str, ...] = ()
    tool_hooks: tuple[str, ...] = ()
    script_exists: bool = False
    script_executable: bool = False
    script_current: bool = False
    disabled: bool = False
    error: str | None = None
    message: str = ""

    @property
    def installed(self) -> bool:
        return self.error is None and not self.events_missing

    @property
    def ok(self) -> bool:
        return (
            self.installed
            and not self.events_outdated
            and self.script_executable
            and not self.disabled
        )


def hooks_status(settings_file: Path, home: PmuxHome) -> HooksStatus:
    """Inspect a settings file (never raises): for ``doctor`` and the widget's banner."""
    path = Path(settings_file)
    script = home.hook_script
    exists = script.is_file()
    executable = exists and os.access(script, os.X_OK)
    try:
        current = exists and script.read_text() == render_script(home)
    except (OSError, UnicodeDecodeError):
        current = False
    base = HooksStatus(
        settings_file=path,
        script_exists=exists,
        script_executable=executable,
        script_current=current,
    )
    try:
        original, doc, _ = read_settings(path)
    except SettingsError as exc:
        return replace(base, error=exc.problem, message=exc.message)
    hooks = doc.get("hooks") or {}
    installed: list[str] = []
    missing: list[str] = []
    outdated: list[str] = []
    waiting: list[str] = []
    for event in HOOK_EVENTS:
        wanted = hook_entry(home, event)
        ours = [
            hook
            for group in hooks.get(event) or []
            for hook in group.get("hooks") or []
            if _is_our_hook(hook, home)
        ]
        if ours:
            installed.append(event)
        elif event not in TOOL_EVENTS:
            missing.append(event)
        if ours and ours != [wanted]:
            outdated.append(event)
        if "async" in wanted and any(hook.get("async") is not True for hook in ours):
            waiting.append(event)
    tools = tuple(event for event in installed if event in TOOL_EVENTS)
    disabled = doc.get("disableAllHooks") is True
    status = replace(
        base,
        events_installed=tuple(installed),
        events_missing=tuple(missing),
        events_outdated=tuple(outdated),
        tool_hooks=tools,
        disabled=disabled,
    )
    if original is None or not installed:
        message = f"hooks not installed in {path}: run `pmux-widget install`"
    elif missing:
        message = f"hooks missing for {', '.join(missing)} in {path}: run `pmux-widget install`"
    elif waiting:
        message = (
            f"hooks of an older pmux-widget in {path}: Claude Code waits for them on every "
            f"tool call ({', '.join(waiting)} are synchronous; about 25 ms each time): run "
            "`pmux-widget install` to remove them (the monitor does not need them)"
        )
    elif outdated:
        message = f"hooks outdated (path or timeout) in {path}: run `pmux-widget install`"
    elif not exists:
        message = f"hook script missing ({script}): run `pmux-widget install`"
    elif not executable:
        message = f"hook script not executable ({script}): run `pmux-widget install`"
    elif disabled:
        message = f'"disableAllHooks": true in {path}: Claude Code runs no hooks'
    elif tools:
        message = (
            f"hooks installed in {path} for {len(installed)} events, the per-tool ones "
            f"({', '.join(tools)}) included: they cost the agent about 16 ms per tool call "
            "(async, on an idle machine); `pmux-widget install` without --tool-hooks removes "
            "them, and the monitor shows the same"
        )
    else:
        message = (
            f"hooks installed in {path} for all {len(installed)} events (none per tool "
            "call: the current tool comes from the transcript)"
        )
    return replace(status, message=message)
