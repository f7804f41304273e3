"""A look at a session (its JupyterLab terminal tab focused, its peek or attach opened) told to
every hub of this machine.

A look reaches one hub only: the page's (the Jupyter server's) or the kernel's. The machine's
other hubs (``pmux-widget serve``, other kernels) track the same sessions from the same
hooks, and the one that publishes to the fleet must end the review too, or the fleet's view
keeps it. Each live hub of the home gets ``POST /api/sessions/<id>/seen`` (its token is the
home's), on a thread of its own: never the caller's. A hub that does not answer is skipped
(it may be stopping). A look seen in tmux needs none of this: every hub asks tmux itself
(``sources.seen``).
"""

from __future__ import annotations

import threading
import urllib.request
from pathlib import Path
from urllib.parse import quote

from pmux_widget.hooks.hubs import live_hubs
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.json_post import HttpRefused, post_json

__all__ = ["SPREAD_TIMEOUT_S", "seen_request", "spread_seen"]

#: How long one hub may take to take a look (it only queues it).
SPREAD_TIMEOUT_S = 2.0


def seen_request(port: int, session_id: str, home: PmuxHome) -> urllib.request.Request:
    """The POST that tells the hub on ``port`` (one of ``home``'s) of a look."""
    return urllib.request.Request(
        f"http://127.0.0.1:{port}/api/sessions/{quote(session_id, safe='')}/seen",
        data=b"{}",
        method="POST",
        headers={"X-Pmux-Token": home.token(), "Content-Type": "application/json"},
    )


def spread_seen(home: PmuxHome, own: Path, session_id: str) -> threading.Thread:
    """Tell every live hub of ``home`` but the one whose runtime file is ``own``; returns the
    (started) thread that does it."""

    def tell() -> None:
        for hub in live_hubs(home):
            if hub.path == own:
                continue
            try:
                post_json(seen_request(hub.port, session_id, home), timeout=SPREAD_TIMEOUT_S)
            except (HttpRefused, OSError, ValueError):
                continue  # a hub stopping, or one that knows no such session

    thread = threading.Thread(target=tell, name="pmux-seen-spread", daemon=True)
    thread.start()
    return thread
