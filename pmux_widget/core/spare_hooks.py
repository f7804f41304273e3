"""Hooks of a process started as a pre-warmed spare worker (``claude … --bg-spare``), held
until its PID file says whose they are.

A spare fires ``SessionStart(startup)`` for a placeholder session of its own, and its PID file
says it is a spare (``spare: true`` on 2.1.332, sometimes; a ``bg`` file whose job has no
folder: ``agents.claude.background.mark_spare``). The two reach the hub in either order: when the
hook came first it made a row, which the file then ended (``pid:spare``, an ended row named
after the folder). A spare that takes a job keeps its argv and fires the job session's
hooks; its PID file then names the job's session. So a hook from a process started as a
spare, for a session its PID file does not name as a job's, is held here; the process's next
PID file releases the held hooks of the session it names (a job's: they are applied before
that file) and drops the others (a placeholder's: no row, ever). Pure: the hub reads the
process's argv and PID file, and applies what is released.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .hook_signals import HookSignal
from .signal_base import Signal
from .signals import PidRecord

__all__ = ["MAX_HELD", "Released", "SpareHooks", "spare_verdict"]

#: Hooks kept per process, and processes kept (a spare's placeholder fires one or two hooks;
#: a job's first hooks come within a second of its PID file naming it).
MAX_HELD = 64

Verdict = Literal["session", "spare", "hold"]


def is_spare(record: PidRecord) -> bool:
    """The PID file is a spare's own (the tracker's test too: ``rules_files.on_pid_file``)."""
    return record.spare or (record.kind == "bg" and not record.job_id)


def spare_verdict(record: PidRecord | None, session_id: str) -> Verdict:
    """What a hook for ``session_id`` from a process started as a spare is, given that
    process's PID file as read now (None: none yet, or unreadable): a session's (its file
    names it as a job's), a spare's own placeholder (its file names it as a spare), or
    not known yet (hold it)."""
    if record is None or record.session_id != session_id:
        return "hold"
    return "spare" if is_spare(record) else "session"


@dataclass(frozen=True, slots=True)
class Released:
    """What a PID file decides about the hooks held for its process."""

    apply: list[Signal] = field(default_factory=list)  # in the order they came
    not_sessions: list[str] = field(default_factory=list)  # ids whose hooks never make a row


class SpareHooks:
    """The held hooks, per process (hub thread only)."""

    def __init__(self, limit: int = MAX_HELD) -> None:
        self.limit = limit
        self._held: dict[int, list[HookSignal]] = {}

    def holding(self, pid: int) -> bool:
        return pid in self._held

    def held(self, pid: int) -> list[HookSignal]:
        return list(self._held.get(pid, ()))

    def held_hooks(self) -> list[HookSignal]:
        """Every hook held, of every process."""
        return [hook for hooks in self._held.values() for hook in hooks]

    def hold(self, pid: int, signal: HookSignal) -> None:
        if pid not in self._held and len(self._held) >= self.limit:
            del self._held[next(iter(self._held))]  # the oldest process: long gone
        hooks = self._held.setdefault(pid, [])
        if len(hooks) < self.limit:
            hooks.append(signal)

    def on_hook(self, pid: int, signal: HookSignal, record: PidRecord | None) -> Released:
        """A hook for a session not known yet, from the process ``pid`` started as a spare,
        with that process's PID file as it reads now: apply it (its file names it as a
        job's; hooks held for the process come first), drop it (a spare's own), or hold it."""
        match spare_verdict(record, signal.session_id):
            case "spare":
                return Released(not_sessions=[signal.session_id])
            case "hold":
                self.hold(pid, signal)
                return Released()
        earlier = self.on_record(record) if record is not None else Released()
        return Released(apply=[*earlier.apply, signal], not_sessions=earlier.not_sessions)

    def on_record(self, record: PidRecord) -> Released:
        """The process's PID file as applied now: a spare's releases nothing and drops its
        placeholder's hooks (a job's hooks, if any came before it named the job, stay held);
        a job's releases that session's hooks and drops every other (the placeholder's)."""
        hooks = self._held.get(record.pid)
        if not hooks:
            return Released()
        sid = record.session_id
        if is_spare(record):
            rest = [h for h in hooks if h.session_id != sid]
            if rest:
                self._held[record.pid] = rest
            else:
                del self._held[record.pid]
            dropped = [sid] if len(rest) < len(hooks) else []
            return Released(not_sessions=dropped)
        del self._held[record.pid]
        others = list(dict.fromkeys(h.session_id for h in hooks if h.session_id != sid))
        return Released(apply=[h for h in hooks if h.session_id == sid], not_sessions=others)
