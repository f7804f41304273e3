"""A Codex hook's trust: the key and the hash Codex records in ``config.toml``.

Codex (0.171.0) runs a user's hook only when ``config.toml`` holds
``[hooks.state."<key>"] trusted_hash = "<hash>"`` for it (else it is skipped, silently).

* The key is positional: ``<hooks.json path>:<event label>:<group index>:<hook index>``.
* The hash is Codex's "normalized hook identity": the TOML value of
  ``{event_name: <label>, matcher?: ..., hooks: [<the one hook, normalized>]}`` turned into
  JSON with its keys sorted, serialized compactly, SHA-256, ``sha256:<hex>``. The hook is
  normalized to ``type``, ``command``, ``timeout`` (600 when absent, at least 1; an
  Interrupt hook's is 1 when absent, at most 3), ``async``
  and ``statusMessage`` when set; the matcher counts only for events that have one (the
  others ignore it). TOML has no null, so what is absent is left out.

Checked against the real binary: ``tests/real_codex/test_trust.py`` compares these with what
``codex app-server``'s ``hooks/list`` answers, for our entries and for odd ones.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DEFAULT_TIMEOUT",
    "EVENT_LABELS",
    "MATCHERLESS_EVENTS",
    "TIMEOUT_LIMITS",
    "effective_timeout",
    "hook_key",
    "trust_hash",
]

#: hooks.json's event names → the labels Codex uses in keys and hashes.
EVENT_LABELS: dict[str, str] = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PermissionRequest": "permission_request",
    "PostToolUse": "post_tool_use",
    "Stop": "stop",
    "Interrupt": "interrupt",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
}
#: The events whose matcher Codex ignores (in the hash too); every other event keeps it.
MATCHERLESS_EVENTS = frozenset({"UserPromptSubmit", "Stop", "Interrupt"})
#: A hook's timeout (seconds) when it names none.
DEFAULT_TIMEOUT = 600
#: Events whose timeout Codex bounds: (the default, the most), seconds. An Interrupt hook runs
#: while the user waits for the TUI to stop (observed: 5 → 3, none → 1).
TIMEOUT_LIMITS: dict[str, tuple[int, int]] = {"Interrupt": (1, 3)}


def hook_key(hooks_file: str, event: str, group: int, hook: int) -> str:
    """The ``[hooks.state."<key>"]`` key of the ``hook``-th hook of the ``group``-th matcher
    group of ``event`` in ``hooks_file`` (its absolute path, as Codex sees it)."""
    return f"{hooks_file}:{EVENT_LABELS[event]}:{group}:{hook}"


def effective_timeout(event: str, timeout: object) -> int:
    """The timeout (seconds) Codex gives a hook of ``event`` that asks for ``timeout``."""
    default, most = TIMEOUT_LIMITS.get(event, (DEFAULT_TIMEOUT, None))
    seconds = (
        max(timeout, 1) if isinstance(timeout, int) and not isinstance(timeout, bool) else default
    )
    return min(seconds, most) if most is not None else seconds


def trust_hash(event: str, hook: Mapping[str, Any], matcher: str | None = None) -> str:
    """The hash Codex trusts ``hook`` (a command hook object of ``hooks.json``) under, on
    ``event`` in a group with ``matcher``."""
    normalized: dict[str, Any] = {
        "type": "command",
        "command": hook["command"],
        "timeout": effective_timeout(event, hook.get("timeout")),
        "async": hook.get("async") is True,
    }
    if isinstance(hook.get("statusMessage"), str):
        normalized["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": EVENT_LABELS[event], "hooks": [normalized]}
    if matcher is not None and event not in MATCHERLESS_EVENTS:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
