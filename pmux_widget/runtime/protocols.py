"""The seams inside the runtime, as small protocols: what a signal source sees of the hub
(:class:`HubView`), what the hub sees of a source (:class:`Source`), and the cursor store the
transcript follower resumes from. The hub is handed its sources as factories, so
``runtime/hub.py`` never imports them and they never import the hub.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from pmux_widget.core.model import Change, Session
from pmux_widget.core.signals import Signal

__all__ = ["CursorStore", "HubView", "Listener", "Source", "SourceFactory"]

#: ``listener(changes, fleet)``, run on the hub thread after each step.
Listener = Callable[[list[Change], dict[str, Session]], None]


class CursorStore(Protocol):
    """Where transcript cursors persist (the hub's store)."""

    def load_cursor(self, path: str) -> dict[str, Any] | None: ...

    def save_cursor(
        self, path: str, session_id: str | None, cursor: dict[str, Any], now: int
    ) -> None: ...


class HubView(Protocol):
    """The hub as a source uses it, on the hub thread."""

    @property
    def claude_dir(self) -> Path: ...

    @property
    def fleet(self) -> Mapping[str, Session]: ...

    @property
    def cursors(self) -> CursorStore | None: ...

    def apply(self, signal: Signal) -> list[Change]: ...

    def add_listener(self, listener: Listener) -> Callable[[], None]: ...


class Source(Protocol):
    """A started source of signals; the hub stops it at shutdown (on the hub loop)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


#: Builds a source for one hub; called on the hub thread once its store and server run.
SourceFactory = Callable[[HubView], Source]
