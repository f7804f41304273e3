"""Token totals of a transcript, deduplicated per API response (the CLI writes one line per
content block of a response, each repeating its usage). Rules: ``docs/transcripts.md``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from pmux_widget.core.model import Tokens

from .records import count_int

__all__ = ["DEDUP_RECENT", "TokenState"]

#: Recent response keys remembered besides the current one (out-of-order safety net).
DEDUP_RECENT = 64


class TokenState:
    """Running token totals, deduplicated per response; constant memory."""

    __slots__ = (
        "cache_creation",
        "cache_read",
        "context",
        "input",
        "last_key",
        "last_out",
        "model",
        "output",
        "recent",
    )

    def __init__(self) -> None:
        self.input = self.output = self.cache_read = self.cache_creation = 0
        self.context = 0
        self.model = b""
        self.last_key: tuple[bytes, bytes] | None = None
        self.last_out = 0
        self.recent: OrderedDict[tuple[bytes, bytes], int] = OrderedDict()

    def add(self, key: tuple[bytes, bytes], inp: int, cc: int, cr: int, out: int) -> None:
        """One main-thread assistant line (the hot path inlines the ``key == last_key`` case)."""
        if key == self.last_key:
            if out > self.last_out:
                self.output += out - self.last_out
                self.last_out = out
        else:
            recent = self.recent
            if self.last_key is not None:
                recent[self.last_key] = self.last_out
                if len(recent) > DEDUP_RECENT:
                    recent.popitem(last=False)
            seen = recent.pop(key, None)
            if seen is None:
                self.input += inp
                self.cache_creation += cc
                self.cache_read += cr
                self.output += out
                self.last_out = out
            else:  # a response came back after others: count only its growth
                if out > seen:
                    self.output += out - seen
                self.last_out = max(out, seen)
            self.last_key = key
        self.context = inp + cc + cr

    def tokens(self) -> Tokens:
        return Tokens(
            input=self.input,
            output=self.output,
            cache_read=self.cache_read,
            cache_creation=self.cache_creation,
        )

    def to_json(self) -> dict[str, Any]:
        def key(k: tuple[bytes, bytes]) -> list[str]:
            return [
                k[0].decode("utf-8", "surrogateescape"),
                k[1].decode("utf-8", "surrogateescape"),
            ]

        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_creation": self.cache_creation,
            "context": self.context,
            "model": self.model.decode("utf-8", "surrogateescape"),
            "last_key": key(self.last_key) if self.last_key is not None else None,
            "last_out": self.last_out,
            "recent": [[*key(k), out] for k, out in self.recent.items()],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TokenState:
        def key(a: Any, b: Any) -> tuple[bytes, bytes]:
            return (
                str(a).encode("utf-8", "surrogateescape"),
                str(b).encode("utf-8", "surrogateescape"),
            )

        state = cls()
        for name in ("input", "output", "cache_read", "cache_creation", "context", "last_out"):
            setattr(state, name, count_int(data.get(name)))
        state.model = str(data.get("model") or "").encode("utf-8", "surrogateescape")
        last = data.get("last_key")
        state.last_key = key(*last) if isinstance(last, list) and len(last) == 2 else None
        for row in data.get("recent") or []:
            if isinstance(row, list) and len(row) == 3:
                state.recent[key(row[0], row[1])] = count_int(row[2])
        return state
