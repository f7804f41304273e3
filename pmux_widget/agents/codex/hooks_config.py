"""Our entries in Codex's ``hooks.json`` (the document, not the file: the caller reads and
writes it), and the trust each one needs.

Which events, and why (``docs/codex-behaviour.md``):

* SessionStart (the session is there), UserPromptSubmit (busy), PermissionRequest (an
  approval waits), PostToolUse (a tool ran: busy again after an approval or an answer),
  Stop (review), Interrupt (idle: Esc, or an approval declined: no Stop comes);
* PreToolUse only for ``request_user_input`` (a Plan-mode question waits: Codex fires no
  PermissionRequest for it), by a matcher, so ordinary tool calls do not run our hook twice.

PostToolUse is ``"async": true`` (Codex 0.171.0 runs it without waiting: checked), so a turn
of many tool calls does not wait for our script on each (P18: +14.6 ms a call synchronous,
+1 s a call with a hung hub). Its order is kept by its send time (``X-Pmux-Sent``): one that
reaches the hub after a later PermissionRequest or Stop is older than what decided the state,
and moves nothing (core/rules_hooks.py's stale rule). The others stay synchronous: they fire
once a turn, and each decides a state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .trust import hook_key, trust_hash

__all__ = [
    "ASYNC_EVENTS",
    "HOOK_TIMEOUT",
    "OUR_HOOKS",
    "Moves",
    "OurHook",
    "entry",
    "merge_ours",
    "moved_keys",
    "ours",
    "remove_ours",
    "trust_entries",
]

#: ``"timeout"`` (seconds) of our entries (Codex's own bound for Interrupt is 3).
HOOK_TIMEOUT = 5


@dataclass(frozen=True)
class OurHook:
    """One event we register, with its matcher (None: every tool / not applicable)."""

    event: str
    matcher: str | None = None


OUR_HOOKS: tuple[OurHook, ...] = (
    OurHook("SessionStart"),
    OurHook("UserPromptSubmit"),
    OurHook("PreToolUse", "^request_user_input$"),
    OurHook("PermissionRequest"),
    OurHook("PostToolUse"),
    OurHook("Stop"),
    OurHook("Interrupt"),
)

IsOurs = Callable[[object], bool]


#: Our events Codex runs without waiting for our script (see the module's docstring).
ASYNC_EVENTS = frozenset({"PostToolUse"})


def entry(command: str, event: str) -> dict[str, Any]:
    """Our hook object for ``event`` (Interrupt's timeout is Codex's most, 3 s)."""
    hook: dict[str, Any] = {
        "type": "command",
        "command": command,
        "timeout": 3 if event == "Interrupt" else 5,
    }
    if event in ASYNC_EVENTS:
        hook["async"] = True
    return hook


def _group(spec: OurHook, command: str) -> dict[str, Any]:
    group: dict[str, Any] = {}
    if spec.matcher is not None:
        group["matcher"] = spec.matcher
    group["hooks"] = [entry(command, spec.event)]
    return group


def ours(doc: dict[str, Any], is_ours: IsOurs) -> list[tuple[str, int, int]]:
    """Where our hooks are: (event, group index, hook index), in the document's order."""
    found = []
    for event, groups in (doc.get("hooks") or {}).items():
        for g, group in enumerate(groups):
            for h, hook in enumerate(group.get("hooks") or []):
                if isinstance(hook, dict) and is_ours(hook.get("command")):
                    found.append((event, g, h))
    return found


Moves = dict[tuple[str, int, int], tuple[int, int]]


def _remove(doc: dict[str, Any], drop: Callable[[str, int, int, object], bool]) -> Moves:
    """Remove the hooks ``drop(event, group, hook, hook object)`` names, and the groups and
    events left empty by that, in place. Returns where each remaining hook of an event it
    touched moved: (event, old group, old hook) → (new group, new hook), when it changed
    (its trust key moves with it)."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return {}
    moved: Moves = {}
    for event in list(hooks):
        kept_groups: list[tuple[int, dict[str, Any], list[tuple[int, Any]] | None]] = []
        touched = False
        for g, group in enumerate(hooks[event]):
            inner = group.get("hooks")
            if not isinstance(inner, list):
                kept_groups.append((g, group, None))
                continue
            kept = [(h, hook) for h, hook in enumerate(inner) if not drop(event, g, h, hook)]
            touched = touched or len(kept) != len(inner)
            if kept or not inner:
                kept_groups.append((g, group, kept))
        if not touched:
            continue
        for new_g, (old_g, group, left) in enumerate(kept_groups):
            if left is None:
                continue
            group["hooks"] = [hook for _, hook in left]
            for new_h, (old_h, _) in enumerate(left):
                if (old_g, old_h) != (new_g, new_h):
                    moved[(event, old_g, old_h)] = (new_g, new_h)
        if kept_groups:
            hooks[event] = [group for _, group, _ in kept_groups]
        else:
            del hooks[event]
    return moved


def remove_ours(doc: dict[str, Any], is_ours: IsOurs) -> tuple[int, Moves]:
    """Remove every hook of ours (in place): (how many, where the user's hooks moved)."""
    count = len(ours(doc, is_ours))
    return count, _remove(doc, lambda _e, _g, _h, hook: _ours(hook, is_ours))


def _ours(hook: object, is_ours: IsOurs) -> bool:
    return isinstance(hook, dict) and is_ours(hook.get("command"))


def merge_ours(doc: dict[str, Any], command: str, is_ours: IsOurs) -> tuple[list[str], bool, Moves]:
    """Put exactly our entries in ``doc`` (in place): a group of ours already right stays
    where it is; every other hook of ours goes; a missing one is appended as its event's last
    group (the user's groups keep their positions, so their trust keys hold).

    Returns (the events whose entry was added, whether anything changed, where the user's
    hooks moved when a stale entry of ours before them went).
    """
    hooks = doc.setdefault("hooks", {})
    keep: dict[str, int] = {}
    for spec in OUR_HOOKS:
        wanted = _group(spec, command)
        for g, group in enumerate(hooks.get(spec.event) or []):
            if group == wanted:
                keep[spec.event] = g
                break
    stale = [(e, g, h) for e, g, h in ours(doc, is_ours) if keep.get(e) != g]
    moved = _remove(doc, lambda e, g, h, hook: (e, g, h) in stale) if stale else {}
    added = []
    for spec in OUR_HOOKS:
        if spec.event not in keep:
            hooks.setdefault(spec.event, []).append(_group(spec, command))
            added.append(spec.event)
    return added, bool(stale or added), moved


def trust_entries(doc: dict[str, Any], hooks_file: str, is_ours: IsOurs) -> dict[str, str]:
    """The trust every hook of ours in ``doc`` needs: key → hash."""
    out = {}
    for event, g, h in ours(doc, is_ours):
        group = doc["hooks"][event][g]
        key = hook_key(hooks_file, event, g, h)
        out[key] = trust_hash(event, group["hooks"][h], group.get("matcher"))
    return out


def moved_keys(moves: Moves, hooks_file: str) -> dict[str, str]:
    """Old trust key → new trust key for hooks that moved."""
    return {
        hook_key(hooks_file, event, g, h): hook_key(hooks_file, event, ng, nh)
        for (event, g, h), (ng, nh) in moves.items()
    }
