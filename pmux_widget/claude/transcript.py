"""Incremental tail of a Claude Code transcript (JSONL): tokens, metadata, interrupt markers.

One :class:`TranscriptTailer` follows one ``<config>/projects/<enc>/<session>.jsonl``. Each
:meth:`~TranscriptTailer.poll` reads only the bytes appended since the last poll, buffers a
torn last line until its newline arrives, and notices a truncated or replaced file (size
shrank, inode changed, file vanished and came back) and then starts over from byte 0. The
state it keeps is small and independent of the file's size, and it can be saved
(:meth:`~TranscriptTailer.to_cursor`) and resumed (:meth:`~TranscriptTailer.from_cursor`)
without re-reading what was read.

How one poll works (the same code reads a 1 GB file at start-up and a 2 KB append later, so
the "cold" and the "incremental" paths cannot disagree):

1. **Forward pass** over the new complete lines, in 1 MiB chunks, without ``json.loads`` for
   most lines: each line's top-level layout is recognised from fixed byte prefixes, in the
   key order the CLI writes (``{"parentUuid":…,"isSidechain":false,"message":{…`` is an
   assistant line, with its message header either ``"id":…,"type":"message","role":
   "assistant","model":…`` as 2.1.197 wrote it in our recordings, or ``"model":…,"id":…``;
   ``…,"promptId":…,"type":"user"`` a user line, …). From assistant lines only the usage
   counters and the ids are cut out; user lines are only searched for the interrupt-marker
   text, system lines for ``compact_boundary``; only lines that contain one of those are
   parsed. A line of any other layout falls back to ``json.loads`` when it contains anything
   that may count. This pass yields the token totals (deduplicated per API response), the
   last context size and model, interrupt markers, compactions and the line counters.
2. **Backward settle scan**: the display metadata (current tool, last prompt, last answer, API
   error, how the transcript ends, last timestamp, cwd) depend only on the last few records:
   lines are parsed from the end backwards until every field is *settled* (e.g. the last prompt
   settles the pending tools, the last assistant text settles the snippet), then
3. **replayed forwards** from that point through the metadata reducer (:class:`_Meta`).
   For an append of one line, 2. and 3. look at that one line only.

Rules (``claude-code-facts.md`` §5): only the main thread counts (``isSidechain: true``
records are skipped). Tokens are grouped per ``(message.id, requestId)`` — a record without
``message.id`` is its own group keyed by ``uuid`` — with input and cache counted once per
group and output the maximum over the group's lines; ``<synthetic>`` and API-error lines do
not count. The lines of one response are contiguous in the file, so the dedup state is the
last group plus a small LRU of recent ones. Context = input + cache of the last counted line.
Current tool: the newest ``tool_use`` without a ``tool_result``, cleared by an interrupt marker
or a new prompt. Last answer: the last non-empty text block of a non-error assistant record.
Last prompt: a user record that is not meta, not a compact summary, not a slash-command or
local-command wrapper, not a tool result and not a marker. API error: the text of an
``isApiErrorMessage`` record, until a normal assistant record or a prompt. Ending: how the
last user/assistant record (API errors aside) ends — ``interrupt``, ``clean`` or ``open``.

Limits, on purpose: the fast path does not check the full JSON grammar of the lines it
accepts (a torn line that still starts with ``{`` and ends with ``}`` may be counted);
identity is (device, inode, size ≥ offset), so an in-place rewrite of the same file to a
larger size is not noticed (Claude Code only appends); lines over :data:`MAX_LINE` are skipped.

No threads, no I/O beyond reading the transcript (and, for :func:`subagent_summary`, the
session's ``subagents/`` directory); nothing here raises on bad input.
"""

from __future__ import annotations

import base64
import json
import os
import re
import stat as stat_mod
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pmux_widget.core.model import Tokens, TranscriptEnding, clip
from pmux_widget.core.signals import TranscriptUpdate
from pmux_widget.core.summaries import summarize_tool

__all__ = [
    "CHUNK_SIZE",
    "MAX_LINE",
    "SubagentSummary",
    "TailResult",
    "TailStats",
    "TranscriptFacts",
    "TranscriptTailer",
    "is_interrupt_marker",
    "parse_timestamp",
    "scan_transcript",
    "scan_transcript_stats",
    "subagent_summary",
]

#: Bytes read per ``pread``: big enough for speed, small enough for the memory budget.
CHUNK_SIZE = 1 << 20
#: Lines longer than this are skipped (counted as ``oversized``) instead of being buffered and
#: parsed; a transcript line this big is a pasted image or similar, never a status record.
MAX_LINE = 8 << 20
#: Recent response keys remembered besides the current one (out-of-order safety net).
DEDUP_RECENT = 64
#: Pending (unanswered) tool calls remembered; the newest is the current tool.
MAX_PENDING = 64
#: Settle-scan events kept in memory for the replay (beyond this, the replay re-reads).
MAX_REPLAY_EVENTS = 20_000
CURSOR_VERSION = 1

INTERRUPT_MARKERS = frozenset(
    {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
)
TOOL_INTERRUPT_MARKER = "[Request interrupted by user for tool use]"
FINAL_STOP_REASONS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})
#: User "prompts" that are really slash-command / shell-mode / local-command wrappers.
WRAPPER_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)

# byte patterns of the forward pass
_NL = b"\n"
_USAGE = b'"usage"'  # any spacing: the fallback must not miss pretty-printed lines
_MARKER = b"[Request interrupted by user"
_COMPACT = b'"compact_boundary"'
_PARENT = b'{"parentUuid":'
_LOGICAL = b',"logicalParentUuid":'
_SIDE_FALSE = b',"isSidechain":false,'
_SIDE_TRUE = b',"isSidechain":true,'
_SIMPLE_KEYS = (b'"agentId":"', b'"promptId":"', b'"teamName":"', b'"agentName":"')
_ID = b'","id":"'
_TYPE = b'"type":"'
_TYPE_USER = b'"type":"user"'
_USAGE_IN = b'"usage":{"input_tokens":'
_MAIN_MESSAGE = b',"isSidechain":false,"message":{"'
_ID_FIRST_TAIL = b'","type":"message","role":"assistant","model":"'
_END_REQUEST = b'},"requestId":"'
_TYPE_ASSISTANT = b'","type":"assistant"'
_MAIN_ATTACHMENT = b',"isSidechain":false,"attachment":{'
_MAIN_USER = b',"isSidechain":false,"promptId":"'
_USER_AFTER_PROMPT = b'","type":"user"'
_MAIN_TYPE = b',"isSidechain":false,"type":"'
_TYPE_INITIALS = frozenset(b"aus")  # first letters of assistant, user, system
_TYPE_SYSTEM = b'"type":"system"'
_TOP_TYPE = b'{"type":"'
_API_ERROR = b'"isApiErrorMessage":true'
_SYNTHETIC = b"<synthetic>"
_N_MAIN_MESSAGE, _N_ID_FIRST_TAIL, _N_END_REQUEST = map(
    len, (_MAIN_MESSAGE, _ID_FIRST_TAIL, _END_REQUEST)
)
_N_MAIN_USER, _N_MAIN_TYPE, _N_TYPE_ASSISTANT = map(len, (_MAIN_USER, _MAIN_TYPE, _TYPE_ASSISTANT))
_OPEN, _CLOSE, _QUOTE, _BACKSLASH, _COMMA, _N = 123, 125, 34, 92, 44, 110  # { } " \ , n

#: The four counters at the start of an assistant line's usage, in the CLI's key orders
#: (with or without the cache_creation object before output_tokens); else: json fallback.
_USAGE_RX = re.compile(
    rb'"usage":\{"input_tokens":(\d+),"cache_creation_input_tokens":(\d+),'
    rb'"cache_read_input_tokens":(\d+),(?:"cache_creation":\{"ephemeral_5m_input_tokens":\d+,'
    rb'"ephemeral_1h_input_tokens":\d+\},)?"output_tokens":(\d+)[,}]'
)

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)


# ------------------------------------------------------------------------------ values


@dataclass(frozen=True, slots=True)
class TranscriptFacts:
    """What a transcript says about its session now (main thread only).

    ``ending``: how the last main-thread user/assistant record ends — ``"interrupt"`` (an
    interrupt marker), ``"clean"`` (an assistant record with a final stop reason and a text
    block, no tool pending), ``"meta"`` (a harness record: compact summary, slash command and
    its output — nothing in flight) or ``"open"``; None before any such record. ``last_record_at``:
    ms epoch of the newest record's ``timestamp``. ``compactions``: compact boundaries seen.
    """

    model: str | None = None
    current_tool: str | None = None
    tool_summary: str | None = None
    last_assistant: str | None = None
    last_prompt: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    context_tokens: int = 0
    api_error: str | None = None
    ending: TranscriptEnding | None = None
    last_record_at: int | None = None
    cwd: str | None = None
    compactions: int = 0

    def to_update(
        self, session_id: str, transcript_path: str | None = None, *, live: bool = True
    ) -> TranscriptUpdate:
        """The tracker's signal for these facts (``at``: the newest record's time)."""
        return TranscriptUpdate(
            at=self.last_record_at or 0,
            live=live,
            session_id=session_id,
            transcript_path=transcript_path,
            model=self.model,
            current_tool=self.current_tool,
            tool_summary=self.tool_summary,
            last_assistant=self.last_assistant,
            last_prompt=self.last_prompt,
            tokens=self.tokens,
            context_tokens=self.context_tokens,
            api_error=self.api_error,
            ending=self.ending,
            cwd=self.cwd,
        )


@dataclass(slots=True)
class TailStats:
    """Counters of one tailer (diagnostics; they never change the facts).

    ``records``: lines taken as records (on the fast path a line that starts with ``{`` and
    ends with ``}`` is not fully validated); ``unparseable``: non-blank lines that are not a
    JSON object; ``blank``: empty or whitespace-only lines; ``oversized``: lines over
    :data:`MAX_LINE`, skipped; ``read_errors``: stat/open/read failures other than a missing
    file; ``missing``: polls that found no file; ``rescans``: starts over from byte 0 after
    truncation, replacement or re-creation; ``bytes_read``: total bytes read from disk.
    """

    polls: int = 0
    records: int = 0
    unparseable: int = 0
    blank: int = 0
    oversized: int = 0
    read_errors: int = 0
    missing: int = 0
    rescans: int = 0
    bytes_read: int = 0
    last_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> TailStats:
        stats = cls()
        if isinstance(data, dict):
            for name in cls.__slots__:  # type: ignore[attr-defined]
                value = data.get(name)
                if name == "last_error":
                    stats.last_error = value if isinstance(value, str) else None
                elif isinstance(value, int) and not isinstance(value, bool):
                    setattr(stats, name, value)
        return stats


@dataclass(frozen=True, slots=True)
class TailResult:
    """One poll: did the facts change, interrupt markers in the new bytes (ms epoch, in file
    order), the facts now, and how many bytes were read from disk."""

    changed: bool
    interrupts: list[int]
    facts: TranscriptFacts
    bytes_read: int


@dataclass(frozen=True, slots=True)
class SubagentSummary:
    """Sub-agent transcripts of a session (``<project>/<sid>/subagents/**/agent-*.jsonl``)."""

    count: int
    tokens: Tokens


# ----------------------------------------------------------------------- record helpers


def _loads(line: bytes) -> dict[str, Any] | None:
    """The line as a JSON object, or None (not JSON, not an object, not UTF-8, too deep)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    return value if isinstance(value, dict) else None


def parse_timestamp(value: object) -> int | None:
    """ISO-8601 (``2026-06-30T09:14:12.480Z``) → ms epoch; naive times are UTC; else None."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return (moment - _EPOCH) // _MS


def _int(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value == value and abs(value) < 1e18:
        return max(int(value), 0)
    return 0


def _text_blocks(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    return []


def is_interrupt_marker(record: dict[str, Any]) -> bool:
    """A main-thread user record that marks an interrupt (Esc).

    Either the standalone marker — content exactly one text block (or a plain string) equal to
    ``[Request interrupted by user]`` / ``…for tool use]`` — or a ``tool_result`` whose content
    (string or text blocks) contains ``[Request interrupted by user for tool use]``.
    """
    if record.get("type") != "user" or record.get("isSidechain") is True:
        return False
    message = record.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return content in INTERRUPT_MARKERS
    if not isinstance(content, list):
        return False
    if len(content) == 1:
        block = content[0]
        if (
            isinstance(block, dict)
            and block.get("type") == "text"
            and block.get("text") in INTERRUPT_MARKERS
        ):
            return True
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            for text in _text_blocks(block.get("content")):
                if TOOL_INTERRUPT_MARKER in text:
                    return True
    return False


def _is_compaction(record: dict[str, Any]) -> bool:
    return (
        record.get("type") == "system"
        and record.get("subtype") == "compact_boundary"
        and record.get("isSidechain") is not True
    )


_UsageRow = tuple[tuple[bytes, bytes], int, int, int, int, bytes]


def _usage_of(record: dict[str, Any], main_only: bool) -> _UsageRow | None:
    """(key, input, cache_creation, cache_read, output, model) of an assistant record that
    counts for tokens; None for anything else (user, sidechain, synthetic, API error, …).

    The fast path of the forward pass must give exactly this for the lines it accepts.
    """
    if record.get("type") != "assistant":
        return None
    if main_only and record.get("isSidechain") is True:
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    model = message.get("model")
    if model == "<synthetic>" or record.get("isApiErrorMessage") is True:
        return None
    mid = message.get("id")
    if isinstance(mid, str) and mid:
        rid = record.get("requestId")
        key = (mid.encode(), rid.encode() if isinstance(rid, str) else b"")
    else:
        uid = record.get("uuid")
        key = (b"", uid.encode() if isinstance(uid, str) else b"?")
    return (
        key,
        _int(usage.get("input_tokens")),
        _int(usage.get("cache_creation_input_tokens")),
        _int(usage.get("cache_read_input_tokens")),
        _int(usage.get("output_tokens")),
        model.encode() if isinstance(model, str) else b"",
    )


# ----------------------------------------------------------------------- metadata events

# event kinds
_K_NONE, _K_ASSISTANT, _K_API_ERROR, _K_PROMPT, _K_MARKER, _K_USER, _K_META = range(7)


@dataclass(frozen=True, slots=True)
class _Event:
    """What one record means for the display metadata (small: the settle scan caches them)."""

    at: int | None
    cwd: str | None
    kind: int = _K_NONE
    text: str | None = None  # clipped: assistant snippet, prompt, or API error
    tools: tuple[tuple[str, str, str], ...] = ()  # (id, name, summary) of tool_use blocks
    results: tuple[str, ...] = ()  # tool_use_ids answered
    final: bool = False  # assistant: a final stop_reason and a text block in this record


def _event(record: dict[str, Any]) -> _Event:
    """Classify a parsed record for the metadata reducer (see :class:`_Meta`)."""
    at = parse_timestamp(record.get("timestamp"))
    cwd = record.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd else None
    if record.get("isSidechain") is True:
        return _Event(at, cwd)
    kind = record.get("type")
    message = record.get("message")
    if not isinstance(message, dict) or kind not in ("user", "assistant"):
        return _Event(at, cwd)
    content = message.get("content")
    if kind == "assistant":
        texts = _text_blocks(content)
        if record.get("isApiErrorMessage") is True:
            detail = " ".join(t for t in texts if t.strip())
            error = record.get("error")
            return _Event(
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
        return _Event(at, cwd, _K_ASSISTANT, snippet, tuple(tools), final=final)
    # a main-thread user record
    if is_interrupt_marker(record):
        return _Event(at, cwd, _K_MARKER)
    results: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tid = block.get("tool_use_id")
                if isinstance(tid, str):
                    results.append(tid)
    if results or not (isinstance(content, str) or (isinstance(content, list) and content)):
        return _Event(at, cwd, _K_USER, results=tuple(results))
    # Harness records (compact summary, slash-command wrappers and their output): no turn is
    # in flight after them (/clear, /compact end like this, with no answer to review).
    if record.get("isMeta") is True or record.get("isCompactSummary") is True:
        return _Event(at, cwd, _K_META)
    text = "\n".join(_text_blocks(content))
    if text.lstrip().startswith(WRAPPER_PREFIXES):
        return _Event(at, cwd, _K_META)
    return _Event(at, cwd, _K_PROMPT, clip(text))


# settle keys: a field is settled by a record when feeding that record overwrites it entirely
_S_AT, _S_CWD, _S_PENDING, _S_PROMPT, _S_ANSWER, _S_ERROR, _S_ENDING = (1 << i for i in range(7))
_S_ALL = (1 << 7) - 1
#: what a prompt settles only once a record at least as old as it is found above it
_S_HELD = _S_PENDING | _S_ENDING | _S_ERROR


def _settles(event: _Event) -> int:
    """Which metadata fields :meth:`_Meta.feed` overwrites regardless of earlier records."""
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
    elif kind == _K_PROMPT:
        bits |= _S_PENDING | _S_ERROR | _S_ENDING | (_S_PROMPT if event.text else 0)
    elif kind == _K_MARKER:
        bits |= _S_PENDING | _S_ENDING
    elif kind in (_K_USER, _K_META):
        bits |= _S_ENDING
    return bits


class _Meta:
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

    def feed(self, ev: _Event) -> None:
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
        elif kind == _K_PROMPT:
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
    def from_json(cls, data: dict[str, Any]) -> _Meta:
        meta = cls()
        for tid, name, summary in data.get("pending") or []:
            meta.pending[str(tid)] = (str(name), str(summary))
        for name in ("last_assistant", "last_prompt", "api_error", "ending", "cwd"):
            value = data.get(name)
            setattr(meta, name, value if isinstance(value, str) else None)
        at = data.get("at")
        meta.at = at if isinstance(at, int) and not isinstance(at, bool) else None
        return meta


# ------------------------------------------------------------------------- token state


class _TokenState:
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
    def from_json(cls, data: dict[str, Any]) -> _TokenState:
        def key(a: Any, b: Any) -> tuple[bytes, bytes]:
            return (
                str(a).encode("utf-8", "surrogateescape"),
                str(b).encode("utf-8", "surrogateescape"),
            )

        state = cls()
        for name in ("input", "output", "cache_read", "cache_creation", "context", "last_out"):
            setattr(state, name, _int(data.get(name)))
        state.model = str(data.get("model") or "").encode("utf-8", "surrogateescape")
        last = data.get("last_key")
        state.last_key = key(*last) if isinstance(last, list) and len(last) == 2 else None
        for row in data.get("recent") or []:
            if isinstance(row, list) and len(row) == 3:
                state.recent[key(row[0], row[1])] = _int(row[2])
        return state


# ------------------------------------------------------------------------------ tailer


class TranscriptTailer:
    """Follows one transcript file; call :meth:`poll` whenever it may have changed.

    ``main_thread_only=False`` counts sidechain records too (for sub-agent files, whose
    records are all sidechain); ``metadata=False`` skips the display metadata (snippets,
    current tool, ending…) and keeps only tokens, context, model, markers and compactions.
    ``max_line``: longer lines are skipped (see :data:`MAX_LINE`).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        main_thread_only: bool = True,
        metadata: bool = True,
        max_line: int = MAX_LINE,
    ) -> None:
        self.path = Path(path)
        self.main_thread_only = main_thread_only
        self.metadata = metadata
        self.max_line = max_line
        self.stats = TailStats()
        self._reset_state()
        self._facts = TranscriptFacts()
        self._lost = False

    # -- state ---------------------------------------------------------------------------
    def _reset_state(self) -> None:
        self._ident: tuple[int, int] | None = None
        self._offset = 0  # bytes consumed (including a buffered partial line)
        self._line_start = 0  # file offset where the buffered partial line starts
        self._partial: list[bytes] = []
        self._partial_len = 0
        self._skipping = False  # inside an oversized line, dropping bytes until its newline
        self._tokens = _TokenState()
        self._meta = _Meta()
        self._compactions = 0

    @property
    def facts(self) -> TranscriptFacts:
        """The facts as of the last poll."""
        return self._facts

    @property
    def offset(self) -> int:
        """Bytes of the file consumed so far (a buffered torn line included)."""
        return self._offset

    def _build_facts(self) -> TranscriptFacts:
        meta, tok = self._meta, self._tokens
        tool = next(reversed(meta.pending.values()), None) if meta.pending else None
        return TranscriptFacts(
            model=tok.model.decode("utf-8", "replace") or None,
            current_tool=tool[0] if tool else None,
            tool_summary=tool[1] if tool else None,
            last_assistant=meta.last_assistant,
            last_prompt=meta.last_prompt,
            tokens=tok.tokens(),
            context_tokens=tok.context,
            api_error=meta.api_error,
            ending=meta.ending,
            last_record_at=meta.at,
            cwd=meta.cwd,
            compactions=self._compactions,
        )

    # -- polling -------------------------------------------------------------------------
    def poll(self) -> TailResult:
        """Read what was appended since the last poll; never raises for file problems."""
        self.stats.polls += 1
        before = self._facts
        interrupts: list[int] = []
        read = 0
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            self.stats.missing += 1
            self._lost = True
            return TailResult(False, [], before, 0)
        except OSError as exc:
            return self._error(exc, before)
        try:
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode):
                raise IsADirectoryError(f"not a regular file: {self.path}")
            ident = (st.st_dev, st.st_ino)
            if self._ident is not None and (
                ident != self._ident or st.st_size < self._offset or self._lost
            ):
                self._reset_state()
                self._facts = TranscriptFacts()
                self.stats.rescans += 1
            self._lost = False
            self._ident = ident
            if st.st_size > self._offset:
                read = self._consume(fd, st.st_size, interrupts)
        except OSError as exc:
            return self._error(exc, before, read)
        finally:
            os.close(fd)
        self._facts = self._build_facts()
        changed = self._facts != before
        return TailResult(changed, interrupts, self._facts, read)

    def _error(self, exc: OSError, facts: TranscriptFacts, read: int = 0) -> TailResult:
        self.stats.read_errors += 1
        self.stats.last_error = f"{type(exc).__name__}: {exc}"
        return TailResult(False, [], facts, read)

    def _pread(self, fd: int, size: int, offset: int) -> bytes:
        data = os.pread(fd, size, offset)
        self.stats.bytes_read += len(data)
        return data

    def _consume(self, fd: int, size: int, interrupts: list[int]) -> int:
        """Read [offset, size): forward pass over complete lines, then settle + replay."""
        region_start = self._line_start
        pos = self._offset
        read = 0
        mem: tuple[bytes, bytes, int, int] | None = None
        mem_start = mem_end = -1
        max_line = self.max_line
        holes: list[tuple[int, int]] = []  # oversized lines skipped in this poll: [start, end)
        hole_start = self._line_start if self._skipping else -1
        while pos < size:
            chunk = self._pread(fd, min(CHUNK_SIZE, size - pos), pos)
            if not chunk:
                break
            read += len(chunk)
            chunk_start = pos
            pos += len(chunk)
            if self._skipping:  # inside an oversized line: drop bytes up to its newline
                nl = chunk.find(_NL)
                if nl < 0:
                    continue
                self._skipping = False
                self.stats.oversized += 1
                chunk_start += nl + 1
                chunk = chunk[nl + 1 :]
                holes.append((hole_start, chunk_start))
                self._line_start = chunk_start
                if not chunk:
                    continue
            end = chunk.rfind(_NL) + 1
            if end == 0:  # no line ends in this chunk: keep it (bounded by max_line)
                self._partial.append(chunk)
                self._partial_len += len(chunk)
                if self._partial_len > max_line:
                    self._partial.clear()
                    self._partial_len = 0
                    self._skipping = True
                    hole_start = self._line_start
                continue
            first = 0
            if self._partial:  # complete the torn line alone: no copy of the whole chunk
                first = chunk.find(_NL) + 1
                self._partial.append(chunk[:first])
                line = b"".join(self._partial)
                self._partial.clear()
                self._partial_len = 0
                self._forward(line, 0, len(line), interrupts)
                mem_first = line
            else:
                mem_first = b""
            self._forward(chunk, first, end, interrupts)
            self._line_start = chunk_start + end
            mem, mem_start, mem_end = (mem_first, chunk, first, end), chunk_start, chunk_start + end
            rest = len(chunk) - end
            if rest > max_line:
                self._skipping = True
                hole_start = self._line_start
            elif rest:
                self._partial.append(chunk[end:])
                self._partial_len = rest
        self._offset = pos
        region_end = self._line_start
        if region_end > region_start and self.metadata:
            data, data_start = b"", region_end
            if mem is not None and mem_end == region_end:  # the last lines are in memory
                line, chunk, first, end = mem
                data = line + chunk[first:end] if line else chunk[first:end]
                data_start = mem_start + first - len(line)
            # the complete lines of this poll, without the oversized ones skipped
            segments, lo = [], region_start
            for start, stop in holes:
                if start > lo:
                    segments.append((lo, start))
                lo = max(lo, stop)
            if region_end > lo:
                segments.append((lo, region_end))
            read += self._settle_and_replay(fd, segments, data, data_start)
        return read

    # -- pass 1: forward --------------------------------------------------------------------
    def _forward(self, buf: bytes, s: int, end: int, interrupts: list[int]) -> None:
        """Tokens, interrupts, compactions and counters for the complete lines in buf[s:end].

        The hot loop of a cold scan: one ``find`` per line to split it, fixed-offset prefix
        checks to classify it, a few ``find``/``match`` calls to cut the ids and usage out of
        an assistant line, and ``json.loads`` only for lines that need it. Every shortcut gives
        what :meth:`_apply` gives on the parsed line; a layout it does not recognise goes to
        :meth:`_generic`, which parses the line when it contains anything that may count.
        """
        find, rfind, startswith = buf.find, buf.rfind, buf.startswith
        tok = self._tokens
        usage_match = _USAGE_RX.match
        max_line = self.max_line
        records = 0
        # the previous fast-path line: its key (identity), its `","id":"…"` and usage bytes
        rep_key: object = None
        rep_head = rep_usage = b"\xff"
        while s < end:
            e = find(_NL, s)
            if buf[e - 1] != _CLOSE or buf[s] != _OPEN or e - s > max_line:
                self._irregular(buf, s, e, interrupts)
                s = e + 1
                continue
            records += 1
            if startswith(_PARENT, s):
                # {"parentUuid":null  or  {"parentUuid":"<uuid>"
                p = s + 14
                if buf[p] == _N:
                    p += 4
                elif p + 37 < e and buf[p + 37] == _QUOTE:
                    p += 38
                else:
                    p = find(b'"', p + 1, e) + 1
                if startswith(_MAIN_MESSAGE, p):
                    # an assistant line: …,"isSidechain":false,"message":{ HEADER ,"content":[…],
                    #   …,"usage":{"input_tokens":…},…},"requestId":"R","type":"assistant",…
                    # HEADER is "id":"I","type":"message","role":"assistant","model":"M" (what
                    # 2.1.197 wrote in our recordings) or "model":"M","id":"I" (model first).
                    h = p + _N_MAIN_MESSAGE
                    # usage is the message's last object but one at most: its "{" is found
                    # from the end with two memrchr calls, faster than searching for the key
                    k = rfind(b"{", h, rfind(b"{", h, e)) - 8
                    if not startswith(_USAGE_IN, k):
                        k = rfind(_USAGE_IN, h, e)
                    if (
                        rep_key is tok.last_key
                        and startswith(rep_head, h)
                        and startswith(rep_usage, k)
                    ):
                        s = e + 1  # same response, same usage bytes as the line before
                        continue
                    if startswith(b'id":"', h):
                        ms = h + 5
                        me = find(b'"', ms, e)
                        a = me + _N_ID_FIRST_TAIL
                        q = find(b'"', a, e)
                        ok = startswith(_ID_FIRST_TAIL, me)
                        head_end = q
                    elif startswith(b'model":"', h):
                        a = h + 8
                        q = find(b'"', a, e)
                        ms = q + 8
                        me = find(b'"', ms, e)
                        ok = startswith(b'","id":"', q)
                        head_end = me
                    else:
                        ok = False
                    m = usage_match(buf, k, e) if ok and k > head_end else None
                    r = find(_END_REQUEST, m.end(), e) if m is not None else -1
                    q3 = find(b'"', r + _N_END_REQUEST, e) if r > 0 else -1
                    if (
                        q3 < 0
                        or not startswith(_TYPE_ASSISTANT, q3)
                        or buf[q - 1] == _BACKSLASH
                        or buf[me - 1] == _BACKSLASH
                    ):
                        self._generic(buf, s, e, interrupts)
                    elif find(_API_ERROR, q3, e) < 0 and (
                        q - a != 11 or not startswith(_SYNTHETIC, a)
                    ):
                        inp, cc, cr, out = m.groups()  # type: ignore[union-attr]
                        key = (buf[ms:me], buf[r + _N_END_REQUEST : q3])
                        out = int(out)
                        if key == tok.last_key:  # inlined _TokenState.add, common case
                            if out > tok.last_out:
                                tok.output += out - tok.last_out
                                tok.last_out = out
                            tok.context = int(inp) + int(cc) + int(cr)
                        else:
                            tok.add(key, int(inp), int(cc), int(cr), out)
                            tok.model = buf[a:q]
                        rep_key = tok.last_key
                        rep_head = buf[h : head_end + 1]
                        rep_usage = buf[k : q3 + _N_TYPE_ASSISTANT]
                    s = e + 1
                    continue
                if startswith(_MAIN_USER, p):  # ,"isSidechain":false,"promptId":"<uuid>"
                    q = p + _N_MAIN_USER + 36  # a promptId is a UUID
                    if q >= e or buf[q] != _QUOTE:
                        q = find(b'"', p + _N_MAIN_USER, e)
                    if startswith(_USER_AFTER_PROMPT, q):
                        if find(_MARKER, q, e) >= 0:
                            self._generic(buf, s, e, interrupts)
                        s = e + 1
                        continue
                elif startswith(_MAIN_ATTACHMENT, p):
                    s = e + 1  # an attachment record: nothing to count
                    continue
                elif startswith(_MAIN_TYPE, p):  # ,"isSidechain":false,"type":"
                    t = p + _N_MAIN_TYPE
                    if startswith(b'user"', t):
                        if find(_MARKER, t, e) >= 0:
                            self._generic(buf, s, e, interrupts)
                    elif startswith(b'system"', t):
                        if find(_COMPACT, t, e) >= 0:
                            self._generic(buf, s, e, interrupts)
                    elif startswith(b'assistant"', t):
                        self._generic(buf, s, e, interrupts)
                    # another type (progress, attachment, …): nothing to count
                    s = e + 1
                    continue
                self._walk(buf, s, p, e, interrupts)
            elif startswith(_TOP_TYPE, s) and buf[s + 9] not in _TYPE_INITIALS:
                pass  # metadata or bookkeeping (file-history-snapshot, queue-operation, …)
            else:
                self._generic(buf, s, e, interrupts)
            s = e + 1
        self.stats.records += records

    def _walk(self, buf: bytes, s: int, p: int, e: int, interrupts: list[int]) -> None:
        """A conversation record in a less common layout: skip the simple leading keys
        (logicalParentUuid, isSidechain, agentId, promptId, …) to find its type."""
        startswith, find = buf.startswith, buf.find
        if startswith(_LOGICAL, p):
            p += 21
            if buf[p] == _N:
                p += 4
            else:
                p = find(b'"', p + 1, e) + 1
        if startswith(_SIDE_FALSE, p):
            p += 21
        elif startswith(_SIDE_TRUE, p):
            if self.main_thread_only:
                return  # sidechain: nothing here counts for the main thread
            p += 20
        else:
            self._generic(buf, s, e, interrupts)
            return
        while True:  # simple string keys before the type: agentId, promptId, teamName, …
            for key in _SIMPLE_KEYS:
                if startswith(key, p):
                    q = find(b'"', p + len(key), e)
                    if buf[q - 1] == _BACKSLASH or buf[q + 1] != _COMMA:
                        self._generic(buf, s, e, interrupts)
                        return
                    p = q + 2
                    break
            else:
                break
        if startswith(_TYPE_USER, p):
            if find(_MARKER, p, e) >= 0:
                self._generic(buf, s, e, interrupts)
        elif startswith(_TYPE_SYSTEM, p):
            if find(_COMPACT, p, e) >= 0:
                self._generic(buf, s, e, interrupts)
        elif not startswith(_TYPE, p) or startswith(b'"type":"assistant"', p):
            self._generic(buf, s, e, interrupts)
        # else: another top-level type (progress, attachment, …): nothing to count

    def _irregular(self, buf: bytes, s: int, e: int, interrupts: list[int]) -> None:
        """A line that is not ``{…}``: blank, oversized, junk, or JSON with odd spacing."""
        if e - s > self.max_line:
            self.stats.oversized += 1
            return
        line = buf[s:e]
        if not line.strip():
            self.stats.blank += 1
            return
        record = _loads(line)
        if record is None:
            self.stats.unparseable += 1
            return
        self.stats.records += 1
        self._apply(record, interrupts)

    def _generic(self, buf: bytes, s: int, e: int, interrupts: list[int]) -> None:
        """A record of unknown layout: parse it only if it may matter to the forward pass."""
        if (
            buf.find(_USAGE, s, e) < 0
            and buf.find(_MARKER, s, e) < 0
            and buf.find(_COMPACT, s, e) < 0
        ):
            return
        record = _loads(buf[s:e])
        if record is None:  # looked like an object, is not one: recount it
            self.stats.records -= 1
            self.stats.unparseable += 1
            return
        self._apply(record, interrupts)

    def _apply(self, record: dict[str, Any], interrupts: list[int]) -> None:
        row = _usage_of(record, self.main_thread_only)
        if row is not None:
            key, inp, cc, cr, out, model = row
            self._tokens.add(key, inp, cc, cr, out)
            self._tokens.model = model
            return
        if is_interrupt_marker(record):
            at = parse_timestamp(record.get("timestamp"))
            if at is not None:
                interrupts.append(at)
        elif _is_compaction(record):
            self._compactions += 1

    # -- pass 2 and 3: settle backwards, replay forwards ----------------------------------
    def _settle_and_replay(
        self, fd: int, segments: list[tuple[int, int]], mem: bytes, mem_start: int
    ) -> int:
        """Find the last records that decide each metadata field, then feed them in order.

        ``segments``: the [start, end) spans of complete lines read by this poll, in file
        order; ``mem`` holds the bytes from ``mem_start`` to the end of the last span.
        """
        need = _S_ALL
        held_at: int | None = None
        events: list[_Event] | None = []
        settle_at = segments[0][0] if segments else 0
        read_box = [0]
        for start, end in reversed(segments):
            block = mem if end == mem_start + len(mem) else b""
            for offset, line in self._lines_backward(fd, start, end, block, mem_start, read_box):
                if line is None:
                    continue
                record = _loads(line)
                if record is None:
                    continue
                event = _event(record)
                if events is not None:
                    events.append(event)
                    if len(events) > MAX_REPLAY_EVENTS:
                        events = None
                bits = _settles(event)
                if held_at is not None and event.at is not None and event.at <= held_at:
                    need &= ~_S_HELD  # back before the prompt in time too: it does settle
                    held_at = None
                if event.kind == _K_PROMPT and event.at is not None and held_at is None:
                    # The CLI can write a turn's first records before its prompt (seen with
                    # 2.1.197): records above this prompt in the file may be newer than it.
                    bits &= ~_S_HELD
                    held_at = event.at
                need &= ~bits
                if not need:
                    settle_at = offset
                    break
            if not need:
                break
        if events is not None:
            for event in reversed(events):
                self._meta.feed(event)
        else:  # too many to keep: read the lines again from the settle point
            for start, end in segments:
                if end <= settle_at:
                    continue
                for _offset, line in self._lines_forward(fd, max(start, settle_at), end, read_box):
                    record = _loads(line) if line is not None else None
                    if record is not None:
                        self._meta.feed(_event(record))
        return read_box[0]

    def _lines_backward(
        self, fd: int, start: int, end: int, mem: bytes, mem_start: int, read_box: list[int]
    ) -> Iterator[tuple[int, bytes | None]]:
        """Non-blank complete lines of [start, end), last first, as (offset, bytes or None
        when oversized). ``start`` is a line start and ``end`` follows a newline.

        ``mem`` holds bytes from ``mem_start`` up to ``end`` already in memory (the forward
        pass's last buffer); only bytes before it are read again, one chunk at a time.
        """
        max_line = self.max_line
        if mem and mem_start < end:
            lo = max(start, mem_start)
            block = mem[lo - mem_start : end - mem_start]
        else:
            lo = max(start, end - CHUNK_SIZE)
            block = self._pread(fd, end - lo, lo)
            read_box[0] += len(block)
        rest = b""  # the end of a line whose start lies before ``lo`` (ends with a newline)
        too_long = False  # walking back through an oversized line
        while True:
            data = block + rest if rest else block
            stop = len(data)  # data[stop - 1] is a newline, unless walking an oversized line
            if too_long:
                nl = data.rfind(_NL)
                if nl >= 0:
                    too_long = False
                    yield lo + nl + 1, None
                    stop = nl + 1
                elif lo <= start:
                    yield lo, None
                    return
                else:
                    stop = 0
            while stop > 0:
                nl = data.rfind(_NL, 0, stop - 1)
                if nl < 0:
                    break
                if stop - 2 - nl > max_line:
                    yield lo + nl + 1, None
                else:
                    line = data[nl + 1 : stop - 1]
                    if line.strip():
                        yield lo + nl + 1, line
                stop = nl + 1
            rest = data[:stop]
            if lo <= start:
                if stop > 0:
                    if stop - 1 > max_line:
                        yield lo, None
                    elif rest[:-1].strip():
                        yield lo, rest[:-1]
                return
            if len(rest) > max_line + 1:
                rest = b""
                too_long = True
            hi = lo
            lo = max(start, hi - CHUNK_SIZE)
            block = self._pread(fd, hi - lo, lo)
            read_box[0] += len(block)
            if len(block) < hi - lo:  # the file shrank under us; the next poll rescans
                return

    def _lines_forward(
        self, fd: int, start: int, end: int, read_box: list[int]
    ) -> Iterator[tuple[int, bytes | None]]:
        """Complete lines of [start, end) in order, as (offset, bytes or None if oversized)."""
        max_line = self.max_line
        pos = start
        carry: list[bytes] = []
        carry_len = 0
        skipping = False
        while pos < end:
            chunk = self._pread(fd, min(CHUNK_SIZE, end - pos), pos)
            read_box[0] += len(chunk)
            if not chunk:
                return
            chunk_start = pos
            pos += len(chunk)
            s = 0
            while True:
                nl = chunk.find(_NL, s)
                if nl < 0:
                    if not skipping:
                        carry.append(chunk[s:])
                        carry_len += len(chunk) - s
                        if carry_len > max_line:
                            carry.clear()
                            carry_len = 0
                            skipping = True
                    break
                line_start = chunk_start + s - carry_len
                if skipping or carry_len + nl - s > max_line:
                    skipping = False
                    yield line_start, None
                elif carry:
                    carry.append(chunk[s:nl])
                    yield line_start, b"".join(carry)
                else:
                    yield line_start, chunk[s:nl]
                carry.clear()
                carry_len = 0
                s = nl + 1

    # -- cursor --------------------------------------------------------------------------
    def to_cursor(self) -> dict[str, Any]:
        """JSON-serialisable state: resume with :meth:`from_cursor` without re-reading."""
        return {
            "version": CURSOR_VERSION,
            "main_thread_only": self.main_thread_only,
            "metadata": self.metadata,
            "offset": self._offset,
            "line_start": self._line_start,
            "dev": self._ident[0] if self._ident else None,
            "ino": self._ident[1] if self._ident else None,
            "partial": base64.b64encode(b"".join(self._partial)).decode("ascii"),
            "skipping": self._skipping,
            "tokens": self._tokens.to_json(),
            "meta": self._meta.to_json(),
            "compactions": self._compactions,
            "stats": self.stats.to_json(),
        }

    @classmethod
    def from_cursor(
        cls, path: str | os.PathLike[str], cursor: object, *, max_line: int = MAX_LINE
    ) -> TranscriptTailer:
        """A tailer that continues where ``cursor`` (from :meth:`to_cursor`) left off.

        A cursor that cannot be used (other version, garbage) gives a fresh tailer, which
        rescans from byte 0; so does a file that was replaced or truncated meanwhile (noticed
        at the first poll).
        """
        flags = {"main_thread_only": True, "metadata": True}
        if isinstance(cursor, dict):
            for name in flags:
                if isinstance(cursor.get(name), bool):
                    flags[name] = cursor[name]
        tailer = cls(path, max_line=max_line, **flags)
        try:
            tailer._load_cursor(cursor)
        except (TypeError, ValueError, KeyError, AttributeError):
            fresh = cls(path, max_line=max_line, **flags)
            fresh.stats.rescans += 1
            return fresh
        return tailer

    def _load_cursor(self, cursor: object) -> None:
        if not isinstance(cursor, dict) or cursor.get("version") != CURSOR_VERSION:
            raise ValueError("unknown cursor")
        offset, line_start = cursor["offset"], cursor["line_start"]
        dev, ino = cursor.get("dev"), cursor.get("ino")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (offset, line_start)):
            raise ValueError("bad offsets")
        partial = base64.b64decode(cursor.get("partial") or "", validate=True)
        skipping = bool(cursor.get("skipping"))
        if not 0 <= line_start <= offset or (not skipping and offset - line_start != len(partial)):
            raise ValueError("inconsistent offsets")
        self._ident = (dev, ino) if isinstance(dev, int) and isinstance(ino, int) else None
        self._offset, self._line_start = offset, line_start
        self._partial = [partial] if partial else []
        self._partial_len = len(partial)
        self._skipping = skipping
        self._tokens = _TokenState.from_json(cursor["tokens"])
        self._meta = _Meta.from_json(cursor["meta"])
        self._compactions = _int(cursor.get("compactions"))
        self.stats = TailStats.from_json(cursor.get("stats"))
        self._facts = self._build_facts()


# ------------------------------------------------------------------------------ one-shot


def scan_transcript(
    path: str | os.PathLike[str], *, main_thread_only: bool = True, metadata: bool = True
) -> TranscriptFacts:
    """Facts of a whole transcript, read once (a missing or unreadable file gives empty facts).

    Batch semantics: a final line without its newline is unparseable and ignored.
    ``metadata=False`` computes only tokens, context, model, markers and compactions.
    """
    return scan_transcript_stats(path, main_thread_only=main_thread_only, metadata=metadata)[0]


def scan_transcript_stats(
    path: str | os.PathLike[str], *, main_thread_only: bool = True, metadata: bool = True
) -> tuple[TranscriptFacts, TailStats]:
    """:func:`scan_transcript` plus the counters (the unterminated last line is unparseable)."""
    tailer = TranscriptTailer(path, main_thread_only=main_thread_only, metadata=metadata)
    result = tailer.poll()
    stats = replace(tailer.stats)
    if tailer._partial_len or tailer._skipping:
        if tailer._skipping:
            stats.oversized += 1
        elif b"".join(tailer._partial).strip():
            stats.unparseable += 1
        else:
            stats.blank += 1
    return result.facts, stats


def subagent_summary(transcript_path: str | os.PathLike[str]) -> SubagentSummary:
    """Count the session's sub-agent transcripts and sum their deduplicated tokens.

    Layout of 2.1.x: ``<project>/<session-id>/subagents/agent-<id>.jsonl`` (workflow agents
    one level deeper). Their records are all ``isSidechain: true``, so every record counts.
    Older versions wrote sub-agents inline in the main file (those are skipped by the tailer).
    """
    path = Path(transcript_path)
    root = path.parent / path.stem / "subagents"
    files = sorted(root.rglob("agent-*.jsonl")) if root.is_dir() else []
    totals = [0, 0, 0, 0]
    for file in files:
        tok = scan_transcript(file, main_thread_only=False, metadata=False).tokens
        totals[0] += tok.input
        totals[1] += tok.output
        totals[2] += tok.cache_read
        totals[3] += tok.cache_creation
    return SubagentSummary(
        count=len(files),
        tokens=Tokens(
            input=totals[0], output=totals[1], cache_read=totals[2], cache_creation=totals[3]
        ),
    )
