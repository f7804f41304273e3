"""Waiting on sessions from cells: :class:`Wait` (until a session reaches a state) and
:class:`Ask` (send a prompt, wait for the end of its turn, give the :class:`Answer`).

Both arm a listener on the hub thread and resolve from it; ``await`` them in a notebook, hand
them to ``asyncio.run()`` in a script, or call ``.result()`` to block.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine, Generator
from types import TracebackType
from typing import Any, TypeVar

from pmux_widget.agents.claude.transcript import last_answer
from pmux_widget.core.model import Change, Session, State
from pmux_widget.core.wording import asks, knows_the_ask
from pmux_widget.runtime.actions import ActionError, act
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

__all__ = ["Answer", "Ask", "Wait"]

_T = TypeVar("_T")


class _Pending(Coroutine[Any, Any, _T]):
    """Awaitable, and a coroutine too: ``asyncio.run()`` (and ``create_task()``) take only
    coroutines, and ``asyncio.run(session.ask("…"))`` is a script's first try.

    The work is started by the constructor (the prompt goes out at call time); the coroutine
    only waits for its end. It is made on first use, so that ``.result()`` alone leaves no
    "never awaited" coroutine behind; each ``await`` gets its own.
    """

    _coroutine: Coroutine[Any, Any, _T] | None = None

    def _run(self) -> Coroutine[Any, Any, _T]:
        raise NotImplementedError

    def __await__(self) -> Generator[Any, None, _T]:
        return self._run().__await__()

    def _started(self) -> Coroutine[Any, Any, _T]:
        if self._coroutine is None:
            self._coroutine = self._run()
        return self._coroutine

    def send(self, value: Any) -> Any:
        return self._started().send(value)

    def throw(
        self,
        typ: Any,
        val: Any = None,
        tb: TracebackType | None = None,
        /,
    ) -> Any:
        return self._started().throw(typ, val, tb)

    def close(self) -> None:
        if self._coroutine is not None:
            self._coroutine.close()


class Wait(_Pending[Session]):
    """A pending :func:`wait_for`: ``await`` it, ``asyncio.run()`` it, or call :meth:`result`
    to block."""

    def __init__(
        self,
        target: Hub,
        session_id: str | None,
        states: frozenset[State],
        timeout: float | None,
        since: int = 0,
    ) -> None:
        self.session_id = session_id
        self.states = states
        self.timeout = timeout
        self.since = since
        self._done = threading.Event()
        self._session: Session | None = None
        self._waiters: list[Callable[[], object]] = []
        self._hub = target
        target.call(self._arm)

    def _matches(self, session: Session) -> bool:
        if self.session_id is None:
            who = not session.ended  # "any session": any live one, not the history's
        else:
            who = session.session_id == self.session_id
        return who and session.state in self.states and session.state_since >= self.since

    def _arm(self) -> None:
        """On the hub thread: check the current state, else listen for the change."""
        for current in self._hub.fleet.values():
            if self._matches(current):
                self._resolve(current)
                return
        self._unlisten = self._hub.add_listener(self._on_changes)

    def _on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        for change in changes:
            if self._matches(change.after):
                self._unlisten()
                self._resolve(change.after)
                return

    def _resolve(self, session: Session) -> None:
        self._session = session
        self._done.set()
        for wake in self._waiters:
            wake()

    def cancel(self) -> None:
        unlisten = getattr(self, "_unlisten", None)
        if unlisten is not None:
            self._hub.call(unlisten)

    def result(self, timeout: float | None = None) -> Session:
        """Block until the state is reached; the session as it was then. TimeoutError if not."""
        limit = self.timeout if timeout is None else timeout
        if not self._done.wait(limit):
            self.cancel()
            raise TimeoutError(self._describe(limit))
        assert self._session is not None
        return self._session

    async def _run(self) -> Session:
        if not self._done.is_set():
            loop = asyncio.get_running_loop()
            woken = asyncio.Event()
            self._waiters.append(lambda: _wake(loop, woken))
            if not self._done.is_set():
                try:
                    await asyncio.wait_for(woken.wait(), self.timeout)
                except asyncio.TimeoutError:
                    self.cancel()
                    raise TimeoutError(self._describe(self.timeout)) from None
        assert self._session is not None
        return self._session

    def _describe(self, limit: float | None) -> str:
        states = "/".join(sorted(s.value for s in self.states))
        who = self.session_id or "any session"
        return f"{who} did not reach {states} within {limit} s"

    def __repr__(self) -> str:
        status = "done" if self._done.is_set() else "waiting"
        states = sorted(s.value for s in self.states)
        return f"<Wait {self.session_id or 'any'} → {states}: {status}>"


def _wake(loop: asyncio.AbstractEventLoop, woken: asyncio.Event) -> None:
    # (a script's asyncio.run() may have closed its loop after a timeout: nobody waits then)
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(woken.set)


class Answer(str):
    """What :meth:`Session.ask` gives: the answer's text, plus how the turn ended.

    ``state`` is ``review`` (finished), ``idle`` (interrupted or denied) or ``needs-input``
    (it waits for you: the text says what it asks, as the row does — "[asks to run: make
    test]", "[asks: Which colour? — Purple / Amber]", "[plan ready: …]"; ``session.approve()``
    or ``session.answer(...)``, then ``await session.ask()`` again). ``session`` is the
    session as it was then.
    """

    state: State
    session: Session

    def __new__(cls, text: str, session: Session) -> Answer:
        answer = super().__new__(cls, text)
        answer.state = session.state
        answer.session = session
        return answer

    @property
    def waiting(self) -> bool:
        """The turn stopped on a dialog: it waits for permission."""
        return self.state is State.NEEDS_INPUT


_TURN_ENDS = frozenset({State.REVIEW, State.IDLE, State.NEEDS_INPUT})
#: After the Stop hook, the transcript may not hold the answer yet (measured: the hook comes
#: first): look this long for it, then fall back to the session's clipped snippet.
_ANSWER_SETTLE_S = 2.0


def _quotes(snippet: str, text: str) -> bool:
    """Whether ``snippet`` (a clipped, whitespace-collapsed quote) comes from ``text``."""
    return snippet.removesuffix("…") in " ".join(text.split())


class Ask(_Pending[Answer]):
    """A pending :meth:`Session.ask`: ``await`` it, ``asyncio.run()`` it, or call
    :meth:`result` to block. The prompt is sent when it is made."""

    def __init__(self, target: Hub, session_id: str, text: str | None, timeout: float | None):
        self._hub = target
        self.session_id = session_id
        self.timeout = timeout
        self.sent_at = now_ms()
        session = target.fleet.get(session_id)
        if session is None:
            raise ActionError(f"no session {session_id}", unknown=True)
        if text is not None:
            if session.state is State.BUSY:
                raise ActionError(
                    f"{session.name} is busy: ask() waits for the turn it starts, so it needs "
                    "an idle or finished session (send() queues while busy)"
                )
            act(target, session_id, "send", text=text, record=target.record_action)
        elif session.state is State.NEEDS_INPUT:
            # (just answered, most likely): the turn goes on once the dialog is left
            self.sent_at = now_ms()
        elif session.state is State.BUSY:
            self.sent_at = session.state_since
        else:
            self.sent_at = 0  # the turn has ended: its answer now
        # The turn started by the prompt ends in a state entered after it was sent.
        self._wait = Wait(target, session_id, _TURN_ENDS, timeout, since=self.sent_at)

    def result(self, timeout: float | None = None) -> Answer:
        return self._answer(self._wait.result(timeout))

    async def _run(self) -> Answer:
        session = await self._wait
        return await asyncio.get_running_loop().run_in_executor(None, self._answer, session)

    def _answer(self, session: Session) -> Answer:
        if session.state is State.NEEDS_INPUT:
            session = self._with_words(session)
            return Answer(f"[{asks(session)}]", session)
        text = None
        if session.transcript_path and session.state is State.REVIEW:
            # The turn's earlier texts ("I'll run the tests first.") may be all the transcript
            # holds yet: its answer is the one the Stop hook quoted (clipped) when it has one.
            quoted = (
                session.last_assistant if session.tracking.assistant_at >= self.sent_at else None
            )
            deadline = time.monotonic() + _ANSWER_SETTLE_S
            while text is None and time.monotonic() < deadline:
                found = last_answer(session.transcript_path, self.sent_at)
                if found is not None and (quoted is None or _quotes(quoted, found)):
                    text = found
                else:
                    time.sleep(0.05)
        return Answer(text or session.last_assistant or "", session)

    def _with_words(self, session: Session) -> Session:
        """A dialog can be known (the PID file's ``waiting``) before what it asks (the
        PermissionRequest hook, the transcript): look this long for its words."""
        deadline = time.monotonic() + _ANSWER_SETTLE_S
        while not knows_the_ask(session) and time.monotonic() < deadline:
            time.sleep(0.05)
            newer = self._hub.fleet.get(self.session_id)
            if newer is None or newer.state is not State.NEEDS_INPUT:
                break
            session = newer
        return session

    def __repr__(self) -> str:
        return f"<Ask {self.session_id}: {self._wait!r}>"
