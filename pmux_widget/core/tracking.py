"""The tracker's bookkeeping for one session (:class:`Tracking`): never in the JSON, persisted
with it.

Split out of ``model.py`` (which re-exports :class:`Tracking`); ``fast_replace`` is the copy
both it and :class:`~.model.Session` use, since the tracker copies them many times a signal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from .vocabulary import (
    ACTION_NAMES,
    ActionName,
    Cause,
    PidStatus,
    TranscriptEnding,
    as_ending,
    as_pid_status,
    cause_of,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack


@dataclass(frozen=True)
class Tracking:
    """The tracker's bookkeeping for one session: never in the JSON, persisted with it.

    Times are ms epoch event times: they let the tracker order signals that overtake each
    other on different paths, and decide later signals from earlier ones.
    """

    #: when this hub first saw the session (the pane check's 5 s launch window counts from here;
    #: a known pid found gone needs no window)
    first_seen: int = 0
    #: event time of the newest signal that decided the state; older signals may not undo it
    decided_at: int = 0
    #: what decided the state (the JSON's ``source`` as a value the tracker can branch on)
    cause: Cause | None = None
    #: event time of the newest hook; 0 means no hook ever arrived (zero-install mode)
    last_hook_at: int = 0
    #: event time of the newest interrupt marker already acted upon
    interrupt_at: int = 0
    #: event time of the newest current-tool information
    tool_at: int = 0
    #: event time of the newest prompt (UserPromptSubmit): older API errors are stale
    prompt_at: int = 0
    #: event time of the newest answer text (a Stop hook's last_assistant_message)
    assistant_at: int = 0
    #: event time of the newest sign of work (hook, transcript record, PID-file status)
    active_at: int = 0
    #: the PID file's last ``status`` and its ``waitingFor``
    pid_status: PidStatus | None = None
    waiting_for: str | None = None
    #: how the transcript's last main-thread record ends
    transcript_end: TranscriptEnding | None = None
    #: event time of the transcript's newest record (what ``transcript_end`` describes)
    transcript_at: int = 0
    compacting_since: int = 0
    #: consecutive process checks that found the Claude process dead
    gone_checks: int = 0
    #: the session ended (SessionEnd, process gone, or retired by /clear or a resume)
    ended: bool = False
    #: StopFailure's details, or the API error text, shown next to ``error``
    error_detail: str | None = None
    #: ids of the sub-agents running now (the session's ``subagents`` is their count)
    subagent_ids: tuple[str, ...] = ()
    #: ``tool_use_id`` of the latest finished tool calls (PostToolUse seen), newest last: a
    #: PreToolUse that arrives after its PostToolUse (async hooks) is then known to be over
    tools_done: tuple[str, ...] = ()
    #: when the session last became busy (the start of the current or last turn)
    turn_started_at: int = 0
    #: when the session last entered needs-input (the latest dialog opened)
    asked_at: int = 0
    #: the tmux pane id its hooks came from ($TMUX_PANE), before the poller locates it
    pane: str | None = None
    #: an earlier session of the same Claude process sent hooks: this one's will come too
    process_hooked: bool = False
    #: a pre-warmed background worker no job claims (its PID file says so): never a row,
    #: and its hooks change nothing
    spare: bool = False
    #: the last action delivered to this session and when: the state it leads to shows it
    action: ActionName | None = None
    action_at: int = 0
    #: where that action came from when not from here (a remote answer's device), else ""
    action_origin: str = ""
    #: True: an interactive CLI (its PID file says so); False: ``claude -p``, an SDK run or a
    #: daemon, whose finished turn waits for nobody; None: not known (no PID file seen)
    interactive: bool | None = None
    #: how it was started, when ``interactive`` was learnt: the PID file's or the hook's
    #: ``entrypoint`` (``cli``, ``sdk-cli`` for ``claude -p``, ``sdk-py``, …), what rows say
    entrypoint: str | None = None
    #: an Agent SDK run's program (its CLI's parent), and for a Jupyter kernel its id and
    #: the notebook its server says it runs (the row's ``origin``)
    program: str | None = None
    kernel_id: str | None = None
    notebook: str | None = None

    @property
    def hooked(self) -> bool:
        """True once any hook arrived for this session (or its process): hooks decide."""
        return self.last_hook_at > 0 or self.process_hooked

    def replace(self, **changes: Unpack[TrackingChanges]) -> Tracking:
        """A copy with ``changes``; fast for the same reason as :meth:`Session.replace`."""
        return fast_replace(self, _TRACKING_FIELDS, changes)

    def to_record(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _TRACKING_FIELDS}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Tracking:
        """Read :meth:`to_record`'s keys from ``record``; unknown or missing ones are defaulted.

        Records written before the tracker kept ``cause`` get it from their ``source``."""
        known = {k: v for k, v in record.items() if k in _TRACKING_FIELDS}
        known["subagent_ids"] = tuple(str(a) for a in known.get("subagent_ids") or ())
        known["tools_done"] = tuple(str(a) for a in known.get("tools_done") or ())
        known["pid_status"] = as_pid_status(known.get("pid_status"))
        known["transcript_end"] = as_ending(known.get("transcript_end"))
        known["cause"] = cause_of(known.get("cause") or record.get("source"))
        action = known.get("action")
        known["action"] = next((a for a in ACTION_NAMES if a == action), None)
        known["action_origin"] = str(known.get("action_origin") or "")
        return cls(**known)


class TrackingChanges(TypedDict, total=False):
    """The keyword arguments of :meth:`Tracking.replace` (a test keeps it in step)."""

    first_seen: int
    decided_at: int
    cause: Cause | None
    last_hook_at: int
    interrupt_at: int
    tool_at: int
    prompt_at: int
    assistant_at: int
    active_at: int
    pid_status: PidStatus | None
    waiting_for: str | None
    transcript_end: TranscriptEnding | None
    transcript_at: int
    compacting_since: int
    gone_checks: int
    ended: bool
    error_detail: str | None
    subagent_ids: tuple[str, ...]
    tools_done: tuple[str, ...]
    turn_started_at: int
    asked_at: int
    pane: str | None
    process_hooked: bool
    spare: bool
    action: ActionName | None
    action_at: int
    action_origin: str
    interactive: bool | None
    entrypoint: str | None
    program: str | None
    kernel_id: str | None
    notebook: str | None


_T = TypeVar("_T")


def fast_replace(value: _T, names: frozenset[str], changes: Mapping[str, object]) -> _T:
    """A copy of a frozen dataclass with ``changes``, by merging ``__dict__``s."""
    unknown = changes.keys() - names
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field(s) {sorted(unknown)}")
    new = object.__new__(type(value))
    object.__setattr__(new, "__dict__", {**value.__dict__, **changes})
    return new


_TRACKING_FIELDS = frozenset(f.name for f in dataclasses.fields(Tracking))
