"""Realistic hook payloads for the benchmarks: one session's start and its turns, in the shapes
of the recorded 2.1.197 payloads (tests/fixtures/real/), with source-like Read results of a
chosen size. Pure data, no I/O."""

from __future__ import annotations

import uuid
from typing import Any

__all__ = ["session_cycle", "session_start"]


_PROMPTS = [
    "the retry helper hammers the gateway on timeouts: switch it to exponential backoff",
    "add a test for the cursor pagination when the token expires mid-page",
    "why does the p99 latency dashboard show gaps every night around 02:00?",
    "rename the lease heartbeat setting and update the docs and the migration",
]
_ANSWER = (
    "Done. The retry helper now backs off exponentially (100 ms doubling, capped at 5 s, "
    "with jitter) and the total wait stays bounded by the request deadline. I added tests "
    "for the cap and for the deadline, and updated the config docs."
)


def _file_text(size: int, seed: int) -> str:
    """About ``size`` characters of source-like text (a Read result's file content)."""
    words = ("def", "retry(call,", "attempts=5):", "delay", "=", "base", "*", "2", "**", "n")
    out: list[str] = []
    length, n = 0, seed
    while length < size:
        word = words[n % len(words)] + ("\n" if n % 11 == 0 else " ")
        out.append(word)
        length += len(word)
        n = (n * 1103515245 + 12345) & 0x7FFFFFFF
    return "".join(out)[:size]


def session_cycle(
    session_id: str, cwd: str, transcript_path: str, *, read_size: int = 2000, seed: int = 0
) -> list[dict[str, Any]]:
    """One realistic turn of hooks (shapes of the recorded 2.1.197 payloads): a prompt, a
    Read, a Bash that needs permission (PermissionRequest + Notification), an Edit, Stop."""
    prompt_id = str(uuid.UUID(int=seed * 7919 + 1))
    base = {
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": cwd,
        "prompt_id": prompt_id,
        "permission_mode": "default",
    }
    tool = {**base, "effort": {"level": "high"}}
    read_input = {"file_path": f"{cwd}/src/retry.py"}
    bash_input = {
        "command": f"pytest -q tests/test_retry.py -k backoff_{seed}",
        "description": "Run the retry tests",
    }
    edit_input = {
        "file_path": f"{cwd}/src/retry.py",
        "old_string": "delay = base",
        "new_string": "delay = min(cap, base * 2 ** attempt) * random.uniform(0.5, 1.5)",
        "replace_all": False,
    }
    content = _file_text(read_size, seed)
    return [
        {**base, "hook_event_name": "UserPromptSubmit", "prompt": _PROMPTS[seed % 4]},
        {
            **tool,
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": read_input,
            "tool_use_id": f"toolu_01R{seed:022d}",
        },
        {
            **tool,
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_input": read_input,
            "tool_response": {
                "type": "text",
                "file": {
                    "filePath": read_input["file_path"],
                    "content": content,
                    "numLines": content.count("\n") + 1,
                    "startLine": 1,
                    "totalLines": content.count("\n") + 1,
                },
            },
            "tool_use_id": f"toolu_01R{seed:022d}",
            "duration_ms": 3,
        },
        {
            **tool,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": bash_input,
            "tool_use_id": f"toolu_01B{seed:022d}",
        },
        {
            **tool,
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": bash_input,
            "permission_suggestions": [
                {"type": "addDirectories", "directories": [cwd], "destination": "session"},
                {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
            ],
        },
        {
            **base,
            "hook_event_name": "Notification",
            "notification_type": "permission_prompt",
            "message": "Claude needs your permission to use Bash",
        },
        {
            **tool,
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": bash_input,
            "tool_response": {
                "stdout": "....\n4 passed in 0.31s",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
            },
            "tool_use_id": f"toolu_01B{seed:022d}",
            "duration_ms": 812,
        },
        {
            **tool,
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": edit_input,
            "tool_use_id": f"toolu_01E{seed:022d}",
        },
        {
            **tool,
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": edit_input,
            "tool_response": {
                "filePath": edit_input["file_path"],
                "oldString": "delay = base",
                "newString": edit_input["new_string"],
                "userModified": False,
            },
            "tool_use_id": f"toolu_01E{seed:022d}",
            "duration_ms": 21,
        },
        {
            **base,
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": _ANSWER,
        },
    ]


def session_start(session_id: str, cwd: str, transcript_path: str) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": "startup",
        "model": "claude-sonnet-4-5-20250929",
    }
