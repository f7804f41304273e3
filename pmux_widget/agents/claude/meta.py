"""The display metadata of a transcript (current tool, last prompt, last answer, API error,
how it ends): what one record means for it (:func:`classify`), when a backward scan may stop
(:func:`settles`), and the reducer that replays events forwards (:class:`MetaState`). Rules:
``docs/transcripts.md``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from pmux_widget.core.model import TranscriptEnding, clip
from pmux_widget.core.summaries import summarize_tool

from .records import (
    FINAL_STOP_REASONS,
    WRAPPER_PREFIXES,
    is_interrupt_marker,
    parse_timestamp,
    text_blocks,
)

__all__ = [
    "K_PROMPT",
    "MAX_PENDING",
    "S_ALL",
    "S_HELD",
    "Event",
    "MetaState",
    "classify",
    "settles",
]

#: Pending (unanswered) tool calls remembered; the newest is the current tool.
MAX_PENDING = 64

# event kinds
_K_NONE, _K_ASSISTANT, _K_API_ERROR, K_PROMPT, _K_MARKER, _K_USER, _K_META = range(7)


@dataclass(frozen=True, slots=True)
class Event:
    """What one record means for the display metadata (small: the settle scan caches them)."""

    at: int | None
    cwd: str | None
    kind: int = _K_NONE
    text: str | None = None  # clipped: assistant snippet, prompt, or API error
    tools: tuple[tuple[str, str, str], ...] = ()  # (id, name, summary) of tool_use blocks
    results: tuple[str, ...] = ()  # tool_use_ids answered
    final: bool = False  # assistant: a final stop_reason and a text block in this record


def classify(record: dict[str, Any]) -> Event:
    """Classify a parsed record for the metadata reducer (see :class:`MetaState`)."""
    at = parse_timestamp(record.get("timestamp"))
    cwd = record.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd else None
    if record.get("isSidechain") is True:
        return Event(at, cwd)
    kind = record.get("type")
    message = record.get("message")
    if not isinstance(message, dict) or kind not in ("user", "assistant"):
        return Event(at, cwd)
    content = message.get("content")
    if kind == "assistant":
        texts = text_blocks(content)
        if record.get("isApiErrorMessage") is True:
            detail = " ".join(t for t in texts if t.strip())
            error = record.get("error")
            return Event(
                at,
                cwd,
                _K_API_ERROR,
                clip(detail or (error if isinstance(error, str) else "API error")),
            )
        snippet = None
        for text in texts:
            snippet = clip(text) or snippet
        tools = []
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tid, name = block.get("id"), block.get("name")
                    if isinstance(tid, str) and isinstance(name, str) and name:
                        tools.append((tid, name, summarize_tool(name, block.get("input"))))
        final = message.get("stop_reason") in FINAL_STOP_REASONS and any(t.strip() for t in texts)
        return Event(at, cwd, _K_ASSISTANT, snippet, tuple(tools), final=final)
    # a main-thread user record
    if is_interrupt_marker(record):
        return Event(at, cwd, _K_MARKER)
    results: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tid = block.get("tool_use_id")
                if isinstance(tid, str):
                    results.append(tid)
    if results or not (isinstance(content, str) or (isinstance(content, list) and content)):
        return Event(at, cwd, _K_USER, results=tuple(results))
    # Harness records (compact summary, slash-command wrappers and their output): no turn is
    # in flight after them (/clear, /compact end like this, with no answer to review).
    if record.get("isMeta") is True or record.get("isCompactSummary") is True:
        return Event(at, cwd, _K_META)
    text = "\n".join(text_blocks(content))
    if text.lstrip().startswith(WRAPPER_PREFIXES):
        return Event(at, cwd, _K_META)
    if text.lstrip().startswith("<task-notification>"):
        # 2.1.332 wakes itself when a background task ends: a turn starts, but the prompt is
        # the CLI's, not the user's (last_prompt keeps theirs)
        return Event(at, cwd, K_PROMPT)
    return Event(at, cwd, K_PROMPT, clip(text))


# settle keys: a field is settled by a record when feeding that record overwrites it entirely
_S_AT, _S_CWD, _S_PENDING, _S_PROMPT, _S_ANSWER, _S_ERROR, _S_ENDING = (1 << i for i in range(7))
S_ALL = (1 << 7) - 1
#: what a prompt settles only once a record at least as old as it is found above it
S_HELD = _S_PENDING | _S_ENDING | _S_ERROR


def settles(event: Event) -> int:
    """Which metadata fields :meth:`MetaState.feed` overwrites regardless of earlier records."""
    bits = 0
    if event.at is not None:
        bits |= _S_AT
    if event.cwd is not None:
        bits |= _S_CWD
    kind = event.kind
    if kind == _K_ASSISTANT:
        bits |= _S_ERROR | _S_ENDING | (_S_ANSWER if event.text else 0)
    elif kind == _K_API_ERROR:
        bits |= _S_ERROR
    elif kind == K_PROMPT:
        bits |= _S_PENDING | _S_ERROR | _S_ENDING | (_S_PROMPT if event.text else 0)
    elif kind == _K_MARKER:
        bits |= _S_PENDING | _S_ENDING
    elif kind in (_K_USER, _K_META):
        bits |= _S_ENDING
    return bits


class MetaState:
    """The display metadata reducer. Its fields are exactly the settle keys above."""

    __slots__ = ("api_error", "at", "cwd", "ending", "last_assistant", "last_prompt", "pending")

    def __init__(self) -> None:
        self.pending: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self.last_assistant: str | None = None
        self.last_prompt: str | None = None
        self.api_error: str | None = None
        self.ending: TranscriptEnding | None = None
        self.at: int | None = None
        self.cwd: str | None = None

    def feed(self, ev: Event) -> None:
        late = ev.at is not None and self.at is not None and ev.at < self.at
        if ev.at is not None and not late:
            self.at = ev.at
        if ev.cwd is not None:
            self.cwd = ev.cwd
        kind = ev.kind
        if kind == _K_ASSISTANT:
            self.api_error = None
            if ev.text:
                self.last_assistant = ev.text
            for tid, name, summary in ev.tools:
                self.pending.pop(tid, None)
                self.pending[tid] = (name, summary)
                if len(self.pending) > MAX_PENDING:
                    self.pending.popitem(last=False)
            self.ending = "clean" if ev.final and not self.pending else "open"
        elif kind == _K_API_ERROR:
            self.api_error = ev.text
        elif kind == K_PROMPT:
            if ev.text:
                self.last_prompt = ev.text
            if late:  # written after its turn's first records: they stand
                return
            self.pending.clear()
            self.api_error = None
            self.ending = "open"
        elif kind == _K_MARKER:
            self.pending.clear()
            self.ending = "interrupt"
        elif kind == _K_USER:
            for tid in ev.results:
                self.pending.pop(tid, None)
            self.ending = "open"
        elif kind == _K_META:
            self.ending = "meta"

    def to_json(self) -> dict[str, Any]:
        return {
            "pending": [[tid, name, summary] for tid, (name, summary) in self.pending.items()],
            "last_assistant": self.last_assistant,
            "last_prompt": self.last_prompt,
            "api_error": self.api_error,
            "ending": self.ending,
            "at": self.at,
            "cwd": self.cwd,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MetaState:
        meta = cls()
        for tid, name, summary in data.get("pending") or []:
            meta.pending[str(tid)] = (str(name), str(summary))
        for name in ("last_assistant", "last_prompt", "api_error", "ending", "cwd"):
            value = data.get(name)
            setattr(meta, name, value if isinstance(value, str) else None)
        at = data.get("at")
        meta.at = at if isinstance(at, int) and not isinstance(at, bool) else None
        return meta
