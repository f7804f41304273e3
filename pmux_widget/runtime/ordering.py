"""The order sessions are shown in (most urgent first) and the ``{"sessions", "counts"}``
answer built from a fleet: shared by the hub, the file-only snapshot and the API.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pmux_widget.core.model import Session, count_states, priority_rank

__all__ = ["fleet_json", "sort_key"]


def sort_key(session: Session) -> tuple[int, str, str]:
    """Most urgent state first, then project, then session id (a stable order)."""
    return (priority_rank(session.state), session.project or "", session.session_id)


def fleet_json(sessions: Iterable[Session], host: str | None = None) -> dict[str, Any]:
    """``{"sessions": [...], "counts": {...}}`` as in the contract (``GET /api/sessions``).
    ``host``: the name of this machine, for sessions that do not carry one."""
    ordered = sorted(sessions, key=sort_key)
    rows = [s.to_json() for s in ordered]
    if host is not None:
        for row in rows:
            row["host"] = row["host"] or host
    return {"sessions": rows, "counts": count_states(ordered)}
