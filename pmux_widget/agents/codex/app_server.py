"""Ask a Codex binary's own ``app-server`` (stdio, one JSON object per line, JSON-RPC without
the ``"jsonrpc"`` field) what it thinks of the hooks: ``hooks/list``.

What Codex answers is the ground truth for a hook's trust key and hash
(:mod:`.trust` computes the same in Python; the real-Codex tests compare both), and
``pmux-widget doctor`` uses it, when a ``codex`` binary is found, to say whether Codex
really trusts our hooks.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["AppServerError", "hooks_list"]


class AppServerError(RuntimeError):
    """``codex app-server`` could not be started or did not answer."""


def hooks_list(
    codex: str | os.PathLike[str],
    codex_home: Path,
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> list[dict[str, Any]]:
    """The hooks Codex finds for ``cwd`` with ``codex_home`` as its home: the ``hooks`` of
    ``hooks/list``'s answer (``key``, ``eventName``, ``command``, ``currentHash``,
    ``trustStatus``, ...). ``env``: the environment (default: ours), ``CODEX_HOME`` set."""
    run_env = {**(env if env is not None else os.environ), "CODEX_HOME": str(codex_home)}
    try:
        proc = subprocess.Popen(
            [os.fspath(codex), "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=run_env,
        )
    except OSError as exc:
        raise AppServerError(f"could not start {codex} app-server: {exc}") from exc
    try:
        assert proc.stdin is not None and proc.stdout is not None
        requests = [
            {"id": 1, "method": "initialize", "params": {"clientInfo": _CLIENT}},
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
        ]
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        proc.stdin.flush()
        answer = _answer(proc.stdout, 2, time.monotonic() + timeout)
    finally:
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait(5)
    if "error" in answer:
        raise AppServerError(f"hooks/list failed: {answer['error']}")
    hooks: list[dict[str, Any]] = []
    for entry in answer.get("result", {}).get("data", []):
        hooks.extend(h for h in entry.get("hooks", []) if isinstance(h, dict))
    return hooks


_CLIENT = {"name": "pmux-widget", "version": "1"}


def _answer(stdout: Any, wanted: int, deadline: float) -> dict[str, Any]:
    """The response with id ``wanted`` (notifications before it are skipped)."""
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        while True:
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                with contextlib.suppress(ValueError):
                    message = json.loads(line)
                    if isinstance(message, dict) and message.get("id") == wanted:
                        return message
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise AppServerError("codex app-server did not answer hooks/list in time")
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                raise AppServerError("codex app-server exited without answering hooks/list")
            buffer += chunk
