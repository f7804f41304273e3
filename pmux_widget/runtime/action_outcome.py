"""What an action comes to: delivered (:class:`ActionResult`) or refused (:class:`ActionError`),
for ``runtime.actions`` and the modules it delegates to."""

from __future__ import annotations

from dataclasses import dataclass

from pmux_widget.core.model import ActionName

__all__ = ["ActionError", "ActionResult"]


class ActionError(Exception):
    """An action was refused (nothing was typed) or failed; ``reason`` says why.

    ``unknown`` is true when no such session exists (HTTP 404 rather than 409).
    """

    def __init__(self, reason: str, *, unknown: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unknown = unknown


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What was delivered: the keys typed, and ``queued`` for a prompt sent while busy."""

    session_id: str
    action: ActionName
    keys: tuple[str, ...]
    queued: bool = False
    dialog: str | None = None
