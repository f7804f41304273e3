"""``Stream``: the status widget's feed over websockets (``pmux/api/stream``).

The same :class:`~pmux_widget.notebook.feed.Feed` a kernel's ``StatusWidget`` drives, with a plain
dict for its traits: one model for the whole server, every open page a view of it
(docs/widget-protocol.md has the frames). A page's first frame is every trait
(``{"type": "traits", "traits": {...}}``); then ``{"type": "traits"}`` frames with the traits
that changed (``env``; a setting another page wrote) and ``{"type": "msg", "content": ...}``
frames, exactly what the widget sends (patch, notify; a page's own action_result,
peek_result, install_result).

Threads: the feed works on the hub's thread and on worker threads; a frame is made there and
written by the server's loop (``IOLoop.add_callback``), the only thread that touches a
websocket. A page's first frame is serialized off the loop (the history may be large); frames
made meanwhile wait for it, so none is lost (a patch the first frame already holds has a
``seq`` that is not newer: the page ignores it).

``seq`` starts from the clock's milliseconds when the server's hub starts, so a page that
reconnects to a restarted server still sees it grow (at most ~20 patches a second).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tornado.ioloop import IOLoop

from pmux_widget.core.contract import KernelMessage
from pmux_widget.notebook.feed import Feed
from pmux_widget.system.clock import now_ms

if TYPE_CHECKING:
    from pmux_widget.runtime.hub import Hub

__all__ = ["SETTABLE", "Client", "Stream"]

#: The traits a page may write (its switches), as the widget's views do with model.set().
SETTABLE = frozenset({"desktop_notifications", "show_non_interactive", "title_prefix"})


class Client:
    """One open websocket, as the stream sees it: ``write(text)`` on the server's loop."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._pending: list[str] | None = []  # frames made before the first one went out

    def deliver(self, text: str) -> None:
        """Server's loop."""
        if self._pending is not None:
            self._pending.append(text)
        else:
            self._write(text)

    def started(self, first: str) -> None:
        """Server's loop: the first frame, then what waited for it."""
        pending, self._pending = self._pending or [], None
        self._write(first)
        for text in pending:
            self._write(text)


class Stream:
    """The feed's model on the server: values in a dict, frames to every open page."""

    def __init__(self, hub: Hub) -> None:
        self.feed = Feed(hub, seq=now_ms())
        self._values: dict[str, Any] = {
            **self.feed.initial(),
            "title_prefix": True,
            "desktop_notifications": False,
            "sidebar_note": "",
            "mode": "full",
            "show_non_interactive": None,
        }
        self._clients: set[Client] = set()
        self._loop: IOLoop | None = None
        self._lock = threading.Lock()
        self._open = True
        self.feed.attach(self)

    # ------------------------------------------------------------------ the feed's model

    @property
    def open(self) -> bool:
        return self._open

    def get(self, name: str) -> Any:
        return self._values.get(name)

    def put(self, name: str, value: Any, *, sync: bool) -> None:
        self._values[name] = value
        if sync:
            self._broadcast({"type": "traits", "traits": {name: value}})

    def send(self, message: KernelMessage) -> None:
        self._broadcast({"type": "msg", "content": message})

    def close(self) -> None:
        self._open = False
        self.feed.close()

    # ------------------------------------------------------------------ pages

    def add(self, client: Client) -> None:
        """Server's loop: a page opened (it gets frames from now on, after its first)."""
        with self._lock:
            self._loop = IOLoop.current()
            self._clients.add(client)

    def remove(self, client: Client) -> None:
        with self._lock:
            self._clients.discard(client)

    def first_frame(self) -> str:
        """Every trait, as a page's first frame (any thread; not the loop: it may be big)."""
        return self.feed.dumps({"type": "traits", "traits": self._values})

    def reply_to(self, client: Client) -> Callable[[KernelMessage], None]:
        """Where a page's own answers go (any thread)."""

        def reply(message: KernelMessage) -> None:
            self._to_loop(_frame({"type": "msg", "content": message}), [client])

        return reply

    def set_traits(self, traits: Any, sender: Client) -> None:
        """A page wrote its switches: kept for pages opened later, sent to the others.
        Anything but :data:`SETTABLE` names with JSON scalars is ignored."""
        if not isinstance(traits, dict):
            return
        accepted = {
            name: value
            for name, value in traits.items()
            if name in SETTABLE and (value is None or isinstance(value, bool))
        }
        if not accepted:
            return
        self._values.update(accepted)
        with self._lock:
            others = [c for c in self._clients if c is not sender]
        self._to_loop(_frame({"type": "traits", "traits": accepted}), others)

    @property
    def clients(self) -> int:
        return len(self._clients)

    # ------------------------------------------------------------------ delivery

    def _broadcast(self, frame: dict[str, Any]) -> None:
        with self._lock:
            if not self._clients:
                return
            clients = list(self._clients)
        self._to_loop(_frame(frame), clients)

    def _to_loop(self, text: str, clients: list[Client]) -> None:
        loop = self._loop
        if loop is None or not clients:
            return
        # thread-safe; a closed loop (the server stopped) drops it
        with contextlib.suppress(RuntimeError):
            loop.add_callback(_deliver, text, clients)


def _deliver(text: str, clients: list[Client]) -> None:
    for client in clients:
        client.deliver(text)


def _frame(frame: dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"))
