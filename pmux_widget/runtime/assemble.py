"""The default wiring: a hub with the file sources. The only runtime module that imports
both the hub and the sources; the façades (``api.start``, ``pmux-widget serve``) build hubs
through :func:`make_hub`.
"""

from __future__ import annotations

import os

from .hub import Hub
from .protocols import SourceFactory
from .sources import FileSources

__all__ = ["default_sources", "make_hub"]


def default_sources() -> tuple[SourceFactory, ...]:
    """PID files, transcripts, process exits and the poller."""
    return (FileSources,)


def make_hub(
    *,
    home: str | os.PathLike[str] | None = None,
    claude_home: str | os.PathLike[str] | None = None,
    port: int = 0,
    sources: bool = True,
    retain_days: float | None = 30.0,
) -> Hub:
    """A hub (not started) with the default sources, or with none (``sources=False``: hooks
    only, as the server tests and benchmarks want)."""
    return Hub(
        home=home,
        claude_home=claude_home,
        port=port,
        sources=default_sources() if sources else (),
        retain_days=retain_days,
    )
