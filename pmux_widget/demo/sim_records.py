"""The fields of the simulated CLI's transcript records (:mod:`.simulated`) that do not depend
on the story: ids, timestamps, the common tail of every record, an API response's usage.
Shapes follow the recordings in ``tests/fixtures/real/`` (2.1.197)."""

from __future__ import annotations

import random
import time
from datetime import datetime, timezone
from typing import Any

__all__ = ["CLI_VERSION", "iso_now", "random_id", "record_tail", "usage_record"]

#: The CLI version the simulated records claim (as ``claude_cli.CLI_VERSION``: the recordings').
CLI_VERSION = "2.1.197"


def iso_now(epoch: float | None = None) -> str:
    moment = datetime.fromtimestamp(time.time() if epoch is None else epoch, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def random_id(prefix: str, rng: random.Random, length: int = 24) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return prefix + "".join(rng.choice(alphabet) for _ in range(length))


def record_tail(cwd: str, session_id: str) -> dict[str, Any]:
    """The keys the CLI ends every transcript record with."""
    return {
        "userType": "external",
        "entrypoint": "cli",
        "cwd": cwd,
        "sessionId": session_id,
        "version": CLI_VERSION,
        "gitBranch": "main",
    }


def usage_record(
    fresh_input: int, cache_creation: int, cache_read: int, output: int
) -> dict[str, Any]:
    """An assistant message's ``usage``: ``cache_read`` is the context so far."""
    return {
        "input_tokens": fresh_input,
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": cache_read,
        "output_tokens": output,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {
            "ephemeral_1h_input_tokens": 0,
            "ephemeral_5m_input_tokens": cache_creation,
        },
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
    }
