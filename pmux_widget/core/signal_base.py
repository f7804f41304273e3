"""The two types every signal module shares: :class:`Signal`, the base (``at``: when the thing
happened; ``live``: may it notify), and :class:`Invalid`, what a parser returns for bad input.

A module of its own so ``hook_signals`` and ``signals`` both build on it without importing
each other (``signals`` re-exports the hook signals).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Invalid", "Signal"]


@dataclass(frozen=True, slots=True)
class Invalid:
    """A rejected input and why (e.g. ``"session_id: missing"``)."""

    reason: str

    def __bool__(self) -> bool:  # lets callers write ``if not result: ...``
        return False


@dataclass(frozen=True, kw_only=True, slots=True)
class Signal:
    """Base of all signals. ``at``: when it happened (ms epoch); ``live``: may notify."""

    at: int
    live: bool = True
