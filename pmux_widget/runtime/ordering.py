"""The order sessions are shown in (most urgent first) and the ``{"sessions", "counts"}``
answer built from a fleet: shared by the hub, the file-only snapshot and the API.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pmux_widget.core.contract import counts
from pmux_widget.core.model import Session, priority_rank

__all__ = ["fleet_json", "sort_key"]


def sort_key(session: Session) -> tuple[int, str, str]:
    """Most urgent state first, then project, then session id (a stable order)."""
    return (priority_rank(session.state), session.project or "", session.session_id)


def fleet_json(
    sessions: Iterable[Session], *, include_ended: bool = False, host: str | None = None
) -> dict[str, Any]:
    """``{"sessions": [...], "counts": {...}}`` as in the contract (``GET /api/sessions``).

    The live sessions (ended ones too with ``include_ended``: they stay in the history);
    the counts are always the live sessions' (:func:`pmux_widget.core.contract.counts`, the
    one definition the widget, ``counts()`` and ``status`` share). ``host``: this machine's
    name, for sessions that do not carry one."""
    fleet = list(sessions)
    listed = sorted((s for s in fleet if include_ended or not s.ended), key=sort_key)
    rows = [s.to_json() for s in listed]
    if host is not None:
        for row in rows:
            row["host"] = row["host"] or host
    return {"sessions": rows, "counts": dict(counts(fleet))}
