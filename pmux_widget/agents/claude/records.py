"""Claude Code transcript records, one at a time: parsing a line, timestamps, interrupt
markers, compactions, and the usage row a record counts for. The rules are in
``docs/transcripts.md``; the tailer's fast path must agree with :func:`usage_of`.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = [
    "FINAL_STOP_REASONS",
    "INTERRUPT_MARKERS",
    "TOOL_INTERRUPT_MARKER",
    "WRAPPER_PREFIXES",
    "UsageRow",
    "count_int",
    "is_compaction",
    "is_interrupt_marker",
    "loads_object",
    "parse_timestamp",
    "text_blocks",
    "usage_of",
]

INTERRUPT_MARKERS = frozenset(
    {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
)
TOOL_INTERRUPT_MARKER = "[Request interrupted by user for tool use]"
FINAL_STOP_REASONS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})
#: User "prompts" that are really slash-command / shell-mode / local-command wrappers.
WRAPPER_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)


def loads_object(line: bytes) -> dict[str, Any] | None:
    """The line as a JSON object, or None (not JSON, not an object, not UTF-8, too deep)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    return value if isinstance(value, dict) else None


def parse_timestamp(value: object) -> int | None:
    """ISO-8601 (``2026-06-30T09:14:12.480Z``) → ms epoch; naive times are UTC; else None."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return (moment - _EPOCH) // _MS


def count_int(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value == value and abs(value) < 1e18:
        return max(int(value), 0)
    return 0


def text_blocks(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    return []


def is_interrupt_marker(record: dict[str, Any]) -> bool:
    """A main-thread user record that marks an interrupt (Esc).

    Only the standalone marker counts: content exactly one text block (or a plain string)
    equal to ``[Request interrupted by user]`` / ``…for tool use]``, as the CLI itself
    recognises it. A ``tool_result`` that merely *contains* the marker text is not one: a
    grep of a transcript or a Read of a file quotes it, and when Esc really cancels a tool
    (or a dialog) the CLI writes the standalone marker right after the tool_result anyway
    (tests/fixtures/real/esc_during_tool, esc_dialog).
    """
    if record.get("type") != "user" or record.get("isSidechain") is True:
        return False
    message = record.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return content in INTERRUPT_MARKERS
    if not isinstance(content, list) or len(content) != 1:
        return False
    block = content[0]
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and block.get("text") in INTERRUPT_MARKERS
    )


def is_compaction(record: dict[str, Any]) -> bool:
    return (
        record.get("type") == "system"
        and record.get("subtype") == "compact_boundary"
        and record.get("isSidechain") is not True
    )


UsageRow = tuple[tuple[bytes, bytes], int, int, int, int, bytes]


def usage_of(record: dict[str, Any], main_only: bool) -> UsageRow | None:
    """(key, input, cache_creation, cache_read, output, model) of an assistant record that
    counts for tokens; None for anything else (user, sidechain, synthetic, API error, …).

    The fast path of the forward pass must give exactly this for the lines it accepts.
    """
    if record.get("type") != "assistant":
        return None
    if main_only and record.get("isSidechain") is True:
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    model = message.get("model")
    if model == "<synthetic>" or record.get("isApiErrorMessage") is True:
        return None
    mid = message.get("id")
    if isinstance(mid, str) and mid:
        rid = record.get("requestId")
        key = (mid.encode(), rid.encode() if isinstance(rid, str) else b"")
    else:
        uid = record.get("uuid")
        key = (b"", uid.encode() if isinstance(uid, str) else b"?")
    return (
        key,
        count_int(usage.get("input_tokens")),
        count_int(usage.get("cache_creation_input_tokens")),
        count_int(usage.get("cache_read_input_tokens")),
        count_int(usage.get("output_tokens")),
        model.encode() if isinstance(model, str) else b"",
    )
