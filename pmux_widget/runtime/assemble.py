"""The default wiring: a hub with the file sources. The only runtime module that imports
both the hub and the sources; the doors (``api.start``, ``pmux-widget serve``) build hubs
through :func:`make_hub`.
"""

from __future__ import annotations

import os

from pmux_widget.notify.config import configured, env_wants_notifier
from pmux_widget.notify.notifier import notifier_source
from pmux_widget.system.home import PmuxHome

from .hub import Hub
from .protocols import SourceFactory
from .sources import FileSources
from .warm_attach import warm_source

__all__ = ["default_sources", "make_hub"]


def default_sources() -> tuple[SourceFactory, ...]:
    """PID files, transcripts, process exits and the poller; warm attaches of background
    sessions waiting on a dialog."""
    return (FileSources, warm_source)


def make_hub(
    *,
    home: str | os.PathLike[str] | None = None,
    claude_home: str | os.PathLike[str] | None = None,
    port: int = 0,
    sources: bool = True,
    retain_days: float | None = 30.0,
    notify: bool | None = None,
) -> Hub:
    """A hub (not started) with the default sources, or with none (``sources=False``: hooks
    only, as the server tests and benchmarks want). ``notify``: run the notifier (phone
    notifications); None: when a channel or browser subscription is configured, or as
    ``PMUX_WIDGET_NOTIFY`` says."""
    chosen = list(default_sources()) if sources else []
    pmux_home = PmuxHome.resolve(home)
    if notify is None:
        notify = env_wants_notifier()
    if notify is None:
        notify = configured(pmux_home)
    if notify:
        chosen.append(notifier_source(pmux_home))
    return Hub(
        home=home, claude_home=claude_home, port=port, sources=chosen, retain_days=retain_days
    )
