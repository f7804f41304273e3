"""Pending decisions: Agent SDK permission calls that wait on our handler
(``pmux_widget.can_use_tool``), held by a hub until an action on the row resolves them.

An SDK run has no terminal: nothing can be typed into it. Its CLI asks each permission of the
program's ``can_use_tool`` callback, and ours registers the call here, with the hub of its own
process or, over loopback HTTP, with another process's hub (``POST /api/decisions``, a long
poll: the request stays open until the call is decided, and a closed connection drops it).
approve / deny / answer / interrupt on that row, from any surface, end in
``runtime.actions.act``, whose one early branch (:func:`answer`) resolves the waiting call
instead of typing.

Which call a decision reaches: the session's newest waiting call, only while the row is
needs-input, the caller saw that very state (its dialog token) and the row asks what the call
asks; and once (a second decision is refused). A call waits in one hub only; the hub that
holds it publishes ``decisions/<session id>.json`` (0600: its port and the call), so an action
that reaches another hub (the panel's, the CLI's) is forwarded there, as a terminal's is.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pmux_widget.core.model import ActionName, Session, State
from pmux_widget.core.question import AnswerRefused, Question, question_of, resolve_answer
from pmux_widget.core.summaries import summarize_tool
from pmux_widget.core.wording import non_interactive
from pmux_widget.system import processes
from pmux_widget.system.files import atomic_write
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.json_post import HttpRefused, post_json

from .action_forward import actions_request
from .action_outcome import ActionError, ActionResult

__all__ = [
    "Decision",
    "Decisions",
    "HubGone",
    "Pending",
    "answer",
    "clean_stale",
    "decision_for",
    "find_session",
    "where_this_runs",
]

#: The actions a waiting call answers (the others go the usual way, and are refused there).
ANSWERS = frozenset({"approve", "deny", "answer", "interrupt"})
#: How long a forwarded decision may take (the other hub resolves it at once).
FORWARD_TIMEOUT_S = 10.0
#: A forwarded action's ``dialog``: the waiting call (its tool_use_id) it was checked against.
CALL = "call:"
#: How long an action on an SDK run that asks looks for its call (it registers over loopback
#: HTTP, where the hub may look for the session up to server.SESSION_WAIT_S).
CALL_WAIT_S = 3.0


class HubGone(Exception):
    """The hub that held a waiting call stopped: the call must be asked again elsewhere."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What the handler returns to the SDK: allow (with the answers of a question), or deny
    (``interrupt``: the turn stops too). ``by``: who decided, where (the history's words)."""

    behavior: Literal["allow", "deny"]
    message: str = ""
    updated_input: dict[str, Any] | None = None
    interrupt: bool = False
    mode: str | None = None
    by: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "behavior": self.behavior,
            "message": self.message,
            "updated_input": self.updated_input,
            "interrupt": self.interrupt,
            "mode": self.mode,
            "by": self.by,
        }

    @classmethod
    def from_json(cls, data: object) -> Decision:
        if not isinstance(data, dict) or data.get("behavior") not in ("allow", "deny"):
            raise ValueError(f"not a decision: {data!r}")
        updated = data.get("updated_input")
        mode = data.get("mode")
        return cls(
            behavior="allow" if data["behavior"] == "allow" else "deny",
            message=str(data.get("message") or ""),
            updated_input=updated if isinstance(updated, dict) else None,
            interrupt=data.get("interrupt") is True,
            mode=mode if isinstance(mode, str) else None,
            by=str(data.get("by") or ""),
        )


@dataclass(eq=False)
class Pending:
    """One waiting call: the session it belongs to, the SDK's tool_use_id, what it asks."""

    session_id: str
    tool_use_id: str
    tool_name: str
    tool_input: dict[str, Any]
    registered_at: float = field(default_factory=time.time)
    future: concurrent.futures.Future[Decision] = field(default_factory=concurrent.futures.Future)

    @property
    def question(self) -> Question:
        return question_of(self.tool_name, self.tool_input)

    @property
    def summary(self) -> str | None:
        return summarize_tool(self.tool_name, self.tool_input)


class Decisions:
    """A hub's waiting calls (thread-safe: registered from the hub's loop or the program's,
    resolved from whatever thread acts)."""

    def __init__(
        self,
        home: PmuxHome,
        port: Callable[[], int],
        on_wait: Callable[[Pending], None] | None = None,
    ) -> None:
        self.home = home
        self._port = port
        self._on_wait = on_wait  # the hub: the row says what waits, hooks or none
        self._lock = threading.Lock()
        self._pending: dict[str, list[Pending]] = {}
        self._closed = False

    @property
    def folder(self) -> Path:
        return self.home.decisions_dir

    def register(
        self, session_id: str, tool_use_id: str, tool_name: str, tool_input: Mapping[str, Any]
    ) -> Pending:
        pending = Pending(session_id, tool_use_id, tool_name, dict(tool_input))
        with self._lock:
            if self._closed:
                raise HubGone("the hub stopped")
            self._pending.setdefault(session_id, []).append(pending)
        self._publish(pending)
        if self._on_wait is not None:
            self._on_wait(pending)
        return pending

    def waiting(self, session_id: str) -> Pending | None:
        """The session's newest call still waiting."""
        with self._lock:
            calls = [p for p in self._pending.get(session_id, ()) if not p.future.done()]
        return calls[-1] if calls else None

    def all(self) -> list[Pending]:
        with self._lock:
            return [p for calls in self._pending.values() for p in calls if not p.future.done()]

    def resolve(self, pending: Pending, decision: Decision) -> bool:
        """Give ``pending`` its decision; False when it has one already (or was dropped).
        Its published file goes first: once its waiter has the decision (and the run goes on,
        and may end), nothing says the call still waits."""
        if pending.future.done():
            return False
        self._forget(pending)
        with self._lock:
            try:
                pending.future.set_result(decision)
            except concurrent.futures.InvalidStateError:
                return False
        return True

    def drop(self, pending: Pending) -> None:
        """The waiter went away (its connection closed, its task cancelled): forget the call."""
        self._forget(pending)  # the file first, as in resolve
        with self._lock:
            if not pending.future.done():
                pending.future.cancel()

    def close(self) -> None:
        """The hub stops: every waiting call is told so (it asks again elsewhere)."""
        with self._lock:
            self._closed = True
            calls = [p for ps in self._pending.values() for p in ps]
        for pending in calls:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                pending.future.set_exception(HubGone("the hub stopped"))
            self._forget(pending)

    def _forget(self, pending: Pending) -> None:
        """The published file changes before the call leaves ``waiting()``: whoever sees
        the call gone finds the file already saying so."""
        with self._lock:
            rest = [p for p in self._pending.get(pending.session_id, []) if p is not pending]
        if rest:
            self._publish(rest[-1])
        else:
            path = self.folder / f"{pending.session_id}.json"
            published = _read_published(path)
            if published is not None and published.get("tool_use_id") == pending.tool_use_id:
                with contextlib.suppress(OSError):
                    path.unlink()
        with self._lock:
            calls = self._pending.get(pending.session_id, [])
            if pending in calls:
                calls.remove(pending)
            if not calls:
                self._pending.pop(pending.session_id, None)

    def _publish(self, pending: Pending) -> None:
        """``decisions/<sid>.json``: which hub holds the session's waiting call."""
        info = {
            "session_id": pending.session_id,
            "tool_use_id": pending.tool_use_id,
            "pid": os.getpid(),
            "port": self._port(),
        }
        with contextlib.suppress(OSError):
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write(
                self.folder / f"{pending.session_id}.json", json.dumps(info).encode(), 0o600
            )


def clean_stale(home: PmuxHome) -> list[str]:
    """Remove the published calls of hubs that are gone (a process killed while a call waited
    in its hub: a kernel's, SIGKILL); returns their session ids. Another hub already ignores
    them (their pid is dead); this stops them being read for ever."""
    removed = []
    for path in home.decisions_dir.glob("*.json"):
        published = _read_published(path)
        pid = published.get("pid") if published is not None else None
        if isinstance(pid, int) and processes.pid_alive(pid):
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path.stem)
    return removed


def _read_published(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# ---------------------------------------------------------------------------- which session


def find_session(fleet: Mapping[str, Session], caller_pid: int, tool_use_id: str) -> str | None:
    """The session whose Claude process the calling program started (the SDK runs its CLI as
    a child), and when it runs several, the one whose transcript holds ``tool_use_id``."""
    candidates = [
        s
        for s in list(fleet.values())
        if s.running
        and not s.ended
        and s.pid is not None
        and (s.pid == caller_pid or processes.has_ancestor(s.pid, caller_pid))
    ]
    if len(candidates) == 1:
        return candidates[0].session_id
    for session in candidates:
        if session.transcript_path and _mentions(session.transcript_path, tool_use_id):
            return session.session_id
    return None


def _mentions(path: str, text: str, tail: int = 1 << 20) -> bool:
    """``text`` is in the last ``tail`` bytes of ``path``."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - tail))
            return text.encode() in handle.read()
    except OSError:
        return False


# ---------------------------------------------------------------------------- deciding


def where_this_runs() -> str:
    """This process, in a denial's words: the Jupyter server, ``pmux-widget serve``, a kernel."""
    argv = " ".join(sys.argv[:3])
    if "jupyter" in argv and "kernel" not in argv:
        role = "the Jupyter server"
    elif "ipykernel" in argv or "kernel" in argv:
        role = "a notebook kernel"
    elif "pmux-widget" in argv or "pmux_widget" in argv:
        role = "pmux-widget " + (sys.argv[1] if len(sys.argv) > 1 else "")
    else:
        role = os.path.basename(sys.argv[0] or "python")
    return f"{role.strip()} on {socket.gethostname()}"


def decision_for(
    pending: Pending,
    action: str,
    *,
    text: str | None = None,
    options: Sequence[str] | None = None,
    answers: Mapping[str, Sequence[str]] | None = None,
    mode: str | None = None,
    where: str | None = None,
) -> Decision:
    """What ``action`` on the row means for the waiting call (ActionError: it cannot)."""
    place = where or where_this_runs()
    by = f"the user, from pmux-widget ({place})"
    question = pending.question
    if action == "approve":
        if question.kind == "question":
            raise ActionError("it asks a question: answer it with one of its options")
        return Decision("allow", mode=mode, by=by)
    if action == "deny":
        reason = f": {text.strip()}" if text and text.strip() else ""
        return Decision("deny", message=f"Denied by {by}{reason}", by=by)
    if action == "interrupt":
        return Decision("deny", message=f"Interrupted by {by}", interrupt=True, by=by)
    if action == "answer":
        said = _answers(question, options or (), answers, text)
        return Decision("allow", updated_input={**pending.tool_input, "answers": said}, by=by)
    raise ActionError(f"{action} does not answer a waiting permission call")


def _answers(
    question: Question,
    labels: Sequence[str],
    answers: Mapping[str, Sequence[str]] | None,
    text: str | None,
) -> dict[str, str]:
    """AskUserQuestion's ``answers``: question text → the chosen label (several: joined with
    ", ", which the CLI passes on to the model as it is, recorded on 2.1.337), or the free
    text ("Other"). What was said is placed by core.question.resolve_answer's one rule."""
    try:
        said = resolve_answer(question, labels, answers, text)
    except AnswerRefused as refused:
        raise ActionError(str(refused)) from None
    out = {}
    for asked, chosen in said.choices:
        other = said.text_for(asked)
        out[asked] = ", ".join([*chosen, *([other] if other else [])])
    return out


# ---------------------------------------------------------------------------- act()'s branch


def answer(
    view: object,
    session: Session,
    action: ActionName,
    *,
    text: str | None = None,
    options: Sequence[str] | None = None,
    answers: Mapping[str, Sequence[str]] | None = None,
    mode: str | None = None,
    token: str | None = None,
    shown: str | None = None,
    dialog: str | None = None,
    record: Callable[[str, ActionName], None] | None = None,
) -> ActionResult | None:
    """``act``'s early branch: resolve the session's waiting call (here, or in the hub that
    holds it); None when no call of ours waits for it (then actions go the usual way).
    ``token``: the dialog token the caller saw; ``shown``: the row's token now; ``dialog``:
    ``call:<tool_use_id>``, the call a forwarding hub checked the caller's token against."""
    if action not in ANSWERS:
        return None
    registry = getattr(view, "decisions", None)
    pending = registry.waiting(session.session_id) if isinstance(registry, Decisions) else None
    if pending is None:
        labels = _labels(options, answers)
        forward = functools.partial(
            _forward, view, session, action, text, labels, mode, token, shown
        )
        forwarded = forward()
        if forwarded is not None or not _sdk_asks(session):
            return forwarded
        found = _call_of(view, session, forward)
        if isinstance(found, ActionResult):
            return found
        pending = found
    if session.state is not State.NEEDS_INPUT:
        raise ActionError(
            f"{session.name} is {session.state.value}: its permission call is not shown yet"
        )
    moved = f"{session.name} has moved on since it was shown; look again"
    if token is not None and token != shown:
        raise ActionError(moved)
    if dialog is not None and dialog.startswith(CALL) and dialog != CALL + pending.tool_use_id:
        raise ActionError(moved)
    if session.tool_summary and pending.summary and session.tool_summary != pending.summary:
        raise ActionError(f"{session.name} shows another question than the call that waits")
    decision = decision_for(pending, action, text=text, options=options, answers=answers, mode=mode)
    assert isinstance(registry, Decisions)
    if record is not None:  # before the CLI can react, as typed answers are recorded
        record(session.session_id, action)
    if not registry.resolve(pending, decision):
        raise ActionError(f"{session.name}: that call was answered already")
    return ActionResult(session.session_id, action, ())


def _sdk_asks(session: Session) -> bool:
    """An Agent SDK run that asks: a call of ours may be about to register for it."""
    return non_interactive(session) == "SDK" and session.state is State.NEEDS_INPUT


def _call_of(
    view: object, session: Session, forward: Callable[[], ActionResult | None]
) -> Pending | ActionResult:
    """An SDK run asks, and no call of ours waits for it yet: its hooks and PID file may tell
    a hub before the call registers (in this hub, or published by another). Look again for a
    moment; then refuse, saying why nothing here answers it."""
    registry = getattr(view, "decisions", None)
    deadline = time.monotonic() + CALL_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(0.05)
        pending = registry.waiting(session.session_id) if isinstance(registry, Decisions) else None
        if pending is not None:
            return pending
        forwarded = forward()
        if forwarded is not None:
            return forwarded
    raise ActionError(
        f"{session.name} is an Agent SDK run whose permissions its program answers: no call "
        "waits on pmux-widget's handler (pmux_widget.can_use_tool, pmux_widget.agent_options), "
        "so nothing can answer it from here"
    )


def _labels(
    options: Sequence[str] | None, answers: Mapping[str, Sequence[str]] | None
) -> list[str] | None:
    """Over HTTP a mapping travels as its labels ("options"), placed by label again there."""
    labels = [*(options or ()), *(label for chosen in (answers or {}).values() for label in chosen)]
    return labels or None


def _forward(
    view: object,
    session: Session,
    action: ActionName,
    text: str | None,
    options: Sequence[str] | None,
    mode: str | None,
    token: str | None,
    shown: str | None,
) -> ActionResult | None:
    """The call waits in another process's hub (its published file): ask that hub to act.

    A dialog token is this hub's (its row's state_since: when the news reached it); the
    holder's row entered needs-input when the call registered, a moment earlier. So the
    caller's token is checked here, against the row the caller saw, and the holder is told
    which call that was (``dialog`` ``call:<tool_use_id>``): it refuses if another waits."""
    home = getattr(view, "home", None)
    home = home if isinstance(home, PmuxHome) else PmuxHome.resolve()
    published = _read_published(home.decisions_dir / f"{session.session_id}.json")
    if published is None:
        return None
    port, pid = published.get("port"), published.get("pid")
    own = getattr(view, "port", None)
    if not isinstance(port, int) or not isinstance(pid, int) or not processes.pid_alive(pid):
        return None
    if pid == os.getpid() and port == own:
        return None  # ours, and answered already: the usual path refuses it
    call = published.get("tool_use_id")
    if token is not None and token != shown:
        raise ActionError(f"{session.name} has moved on since it was shown; look again")
    body = {
        "action": action,
        "text": text,
        "options": options,
        "mode": mode,
        "dialog": CALL + call if isinstance(call, str) and call else None,
    }
    try:
        post_json(actions_request(port, session.session_id, body, home), timeout=FORWARD_TIMEOUT_S)
    except HttpRefused as refused:
        raise ActionError(
            str(refused.reason or f"the hub holding its call answered HTTP {refused.code}")
        ) from None
    except (OSError, ValueError) as exc:
        raise ActionError(
            f"{session.name}: the hub holding its call did not answer ({exc})"
        ) from None
    return ActionResult(session.session_id, action, ())
