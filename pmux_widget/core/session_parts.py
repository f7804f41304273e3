"""The values a :class:`~.model.Session` holds besides plain fields: its token totals, where
it runs (a tmux pane, a JupyterLab terminal, the tmux window "Attach in a terminal" opened),
its background job and the tasks a turn left running. Frozen, each with its JSON form (the
contract's); ``model`` re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Background",
    "BackgroundTask",
    "TerminalLocation",
    "TmuxLocation",
    "TmuxWindow",
    "Tokens",
]


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token totals of a session's main thread, deduplicated per API response."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_creation": self.cache_creation,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Tokens:
        if not data:
            return cls()
        return cls(**{f: int(data.get(f, 0) or 0) for f in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True)
class TmuxLocation:
    """Where a session's Claude runs in tmux: session name, window index, pane id, pane title."""

    session: str
    window: str
    pane: str
    title: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "session": self.session,
            "window": self.window,
            "pane": self.pane,
            "title": self.title,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> TmuxLocation | None:
        if not data:
            return None
        return cls(
            session=str(data.get("session", "")),
            window=str(data.get("window", "")),
            pane=str(data.get("pane", "")),
            title=str(data.get("title", "")),
        )


@dataclass(frozen=True, slots=True)
class TmuxWindow:
    """Where "Attach in a terminal" opened (or found) a tmux window: ``target`` is
    ``session:window``; ``socket`` the server's ``tmux -L`` name (None: the default server);
    ``opened`` false when the window was open already (it was brought to the front)."""

    target: str
    socket: str | None
    opened: bool

    @property
    def attach_command(self) -> str:
        """What a user types to see it: ``tmux attach -t <target>``."""
        server = f"-L {self.socket} " if self.socket else ""
        return f"tmux {server}attach -t {self.target}"

    def __str__(self) -> str:
        return self.target


@dataclass(frozen=True, slots=True)
class TerminalLocation:
    """The JupyterLab terminal whose shell a session's Claude descends from: its name (what
    ``terminal:open`` and ``/api/terminals`` call it)."""

    name: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> TerminalLocation | None:
        if not data or not isinstance(data, Mapping) or not data.get("name"):
            return None
        return cls(name=str(data["name"]))


@dataclass(frozen=True, slots=True)
class BackgroundTask:
    """A task a turn left running (a ``Stop`` hook's ``background_tasks``, Claude Code ≥ 2.1.198):
    a background sub-agent (``subagent``; also ``workflow``, ``teammate``) or a ``shell``."""

    type: str
    description: str = ""
    status: str = "running"

    @property
    def is_shell(self) -> bool:
        return self.type == "shell"

    def to_json(self) -> dict[str, str]:
        return {"type": self.type, "description": self.description, "status": self.status}

    @classmethod
    def from_json(cls, data: object) -> BackgroundTask | None:
        """Lenient: a task with no string ``type`` is none (unknown fields are ignored)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
            return None
        text = {k: data.get(k) for k in ("description", "status")}
        return cls(
            type=str(data["type"]),
            description=text["description"] if isinstance(text["description"], str) else "",
            status=text["status"] if isinstance(text["status"], str) else "running",
        )


@dataclass(frozen=True, slots=True)
class Background:
    """A session Claude Code runs in the background (``claude --bg``, ``/background``): its
    worker's PID file says ``kind: "bg"`` with its job id (what ``claude attach|stop|rm`` take)
    and the name the agent view shows."""

    job: str
    name: str = ""

    def to_json(self) -> dict[str, str]:
        return {"job": self.job, "name": self.name}

    @classmethod
    def from_json(cls, data: object) -> Background | None:
        if not isinstance(data, Mapping) or not data.get("job"):
            return None
        name = data.get("name")
        return cls(job=str(data["job"]), name=name if isinstance(name, str) else "")
