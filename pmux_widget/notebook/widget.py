"""``StatusWidget``: the anywidget that shows every session, fed by the hub on the hub thread.

The widget is one transport of :class:`~pmux_widget.notebook.feed.Feed` (the other is the Jupyter
server extension's websocket): the feed coalesces the hub's changes into patches, keeps the
``snapshot`` and ``history`` traits current in place (never synced: a view reads them when it
is created), follows ``env`` and answers the browser's messages; this class only maps its
values onto anywidget traits and its messages onto the comm (docs/widget-protocol.md).

Updates are sent from the hub thread: they reach the browser even while a cell blocks.
Messages from the browser (dismiss, install, action, peek) are handled only when the kernel is
idle — a Jupyter limit the front-end tells the user about while a click waits.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from pmux_widget.core.contract import KernelMessage, counts
from pmux_widget.notebook.feed import MACHINE, Feed, row, short_token

if TYPE_CHECKING:
    from pmux_widget.runtime.hub import Hub

__all__ = ["MACHINE", "StatusWidget", "row", "short_token"]

#: The built front-end (npm run build). `_esm` stays a Path: with ANYWIDGET_HMR=1, anywidget
#: watches the file and reloads open widgets on every rebuild (npm run watch).
STATIC = Path(__file__).parent.parent / "static"


class _Traits:
    """The feed's model over the widget: its traits, its comm."""

    def __init__(self, widget: StatusWidget) -> None:
        self._widget = widget

    @property
    def open(self) -> bool:
        return self._widget.comm is not None

    def get(self, name: str) -> Any:
        return self._widget._trait_values.get(name)

    def put(self, name: str, value: Any, *, sync: bool) -> None:
        if sync:
            setattr(self._widget, name, value)
        else:  # in place: views read it when they are created
            self._widget._trait_values[name] = value

    def send(self, message: KernelMessage) -> None:
        self._widget.send(message)  # looked up now: tests wrap it


class StatusWidget(anywidget.AnyWidget):
    """The session status widget. Create it with :func:`pmux_widget.show`."""

    _esm = STATIC / "widget.js"
    _css = STATIC / "widget.css"

    snapshot = traitlets.Dict().tag(sync=True)
    history = traitlets.Dict().tag(sync=True)
    env = traitlets.Dict().tag(sync=True)
    title_prefix = traitlets.Bool(True).tag(sync=True)
    desktop_notifications = traitlets.Bool(False).tag(sync=True)
    sidebar_note = traitlets.Unicode("").tag(sync=True)
    mode = traitlets.Unicode("full").tag(sync=True)
    show_non_interactive = traitlets.Bool(None, allow_none=True).tag(sync=True)

    def __init__(self, hub: Hub, **kwargs: Any) -> None:
        self._hub = hub
        self._feed = Feed(hub)
        # The fleet and the env travel WITH the comm_open. Set after super().__init__, they
        # would follow as an update whose seq (0) is not newer than the open's empty default,
        # so the front-end kept the empty fleet: a widget created over an existing fleet
        # showed "no sessions" until a change.
        for name, value in self._feed.initial().items():
            kwargs.setdefault(name, value)
        super().__init__(**kwargs)
        self.on_msg(self._on_front_end_msg)
        self._feed.attach(_Traits(self))

    @property
    def patches_sent(self) -> int:
        return self._feed.patches_sent

    @property
    def bytes_sent(self) -> int:
        return self._feed.bytes_sent

    def _on_front_end_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        self._feed.handle(content)

    def refresh_env(self) -> None:
        """Re-check Claude and the hooks (e.g. after installing them from a terminal)."""
        self._feed.refresh_env()

    # ----------------------------------------------------------------- lifecycle / text

    def close(self) -> None:
        feed = getattr(self, "_feed", None)
        if feed is not None:
            feed.close()
        super().close()

    def __repr__(self) -> str:
        """The text/plain fallback for front-ends without widgets: the status table."""
        from pmux_widget.cli.table import format_table

        hub = getattr(self, "_hub", None)
        if hub is None:
            return "<StatusWidget (starting)>"
        sessions = [s for s in hub.fleet.values() if not s.ended]
        # The sessions themselves, not their JSON: their bookkeeping tells whether an answer is
        # this turn's (the table then words it as the rows do).
        return format_table({"sessions": sessions, "counts": counts(sessions)})
