"""Agent SDK runs for the tests: ``claude-agent-sdk`` (pinned in the test extras) drives the CLI
it bundles (2.1.337) against the scripted model, in a sealed :class:`ClaudeEnv`, with our hooks
installed and a real hub watching (in this process, or another's through ``PMUX_WIDGET_HOME``).

:class:`SdkRun` runs one ``query()`` on a thread of its own (its own asyncio loop), so the test
can act on the row while the run waits; every message is kept, and its ResultMessage.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pmux_widget.demo.claude_env import ClaudeEnv

__all__ = ["SDK_CLI_VERSION", "SdkRun", "bundled_cli", "sdk_options"]

#: The CLI claude-agent-sdk 0.2.190 bundles.
SDK_CLI_VERSION = "2.1.337"


def bundled_cli() -> Path | None:
    """The SDK's own CLI binary, or None when the SDK (or its binary) is missing."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return path if path.is_file() else None


def sdk_options(env: ClaudeEnv, **kw: Any) -> Any:
    """``ClaudeAgentOptions`` for a run in ``env`` (its cwd, its whole environment)."""
    from claude_agent_sdk import ClaudeAgentOptions

    kw.setdefault("cwd", str(env.cwd))
    kw.setdefault("env", env.env())
    return ClaudeAgentOptions(**kw)


class SdkRun:
    """One ``query(prompt, options)`` on its own thread and loop; ``messages`` as they come."""

    def __init__(self, prompt: str, options: Any) -> None:
        self.prompt = prompt
        self.options = options
        self.messages: list[Any] = []
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=self._run, name="sdk-run", daemon=True)

    def start(self) -> SdkRun:
        self._thread.start()
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._task = loop.create_task(self._query())
            loop.run_until_complete(self._task)
        except BaseException as exc:  # kept for the test to show
            self.error = exc
        finally:
            loop.close()
            self.done.set()

    async def _query(self) -> None:
        from claude_agent_sdk import query

        async for message in query(prompt=self.prompt, options=self.options):
            self.messages.append(message)

    def wait(self, timeout: float = 120) -> SdkRun:
        if not self.done.wait(timeout):
            raise TimeoutError(f"the SDK run did not end in {timeout} s")
        return self

    def cancel(self) -> None:
        """Cancel the run's task (what a cell's interrupt does to an awaited query)."""
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)
        self._thread.join(30)

    @property
    def session_id(self) -> str | None:
        for message in list(self.messages):
            sid = getattr(message, "session_id", None) or (
                getattr(message, "data", None) or {}
            ).get("session_id")
            if isinstance(sid, str) and sid:
                return sid
        return None

    @property
    def result(self) -> Any:
        from claude_agent_sdk import ResultMessage

        return next((m for m in self.messages if isinstance(m, ResultMessage)), None)

    def usage(self) -> Mapping[str, Any]:
        result = self.result
        return (getattr(result, "usage", None) or {}) if result is not None else {}
