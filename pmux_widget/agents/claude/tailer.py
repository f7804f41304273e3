"""The incremental transcript tailer: one :class:`TranscriptTailer` follows one transcript,
reading only appended bytes, surviving torn lines, truncation and replacement, with a cursor
to resume from. How a poll works and why: ``docs/transcripts.md``.

This module is long on purpose: the forward pass (``_forward`` / ``_walk``) is the hot loop
that reads a 1 GB transcript at start-up; its byte patterns and the per-line dispatch stay in
one place so the fast path and its ``json`` fallback (``records.usage_of``) can be compared
side by side.
"""

from __future__ import annotations

import base64
import os
import re
import stat as stat_mod
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pmux_widget.core.model import Tokens, TranscriptEnding
from pmux_widget.core.signals import TranscriptUpdate

from .meta import K_PROMPT, S_ALL, S_HELD, Event, MetaState, classify, settles
from .records import (
    count_int,
    is_compaction,
    is_interrupt_marker,
    loads_object,
    parse_timestamp,
    usage_of,
)
from .tokens import TokenState

__all__ = [
    "CHUNK_SIZE",
    "MAX_LINE",
    "TailResult",
    "TailStats",
    "TranscriptFacts",
    "TranscriptTailer",
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
            for name in cls.__slots__:
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
        self._tokens = TokenState()
        self._meta = MetaState()
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
                        if key == tok.last_key:  # inlined TokenState.add, common case
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
        record = loads_object(line)
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
        record = loads_object(buf[s:e])
        if record is None:  # looked like an object, is not one: recount it
            self.stats.records -= 1
            self.stats.unparseable += 1
            return
        self._apply(record, interrupts)

    def _apply(self, record: dict[str, Any], interrupts: list[int]) -> None:
        row = usage_of(record, self.main_thread_only)
        if row is not None:
            key, inp, cc, cr, out, model = row
            self._tokens.add(key, inp, cc, cr, out)
            self._tokens.model = model
            return
        if is_interrupt_marker(record):
            at = parse_timestamp(record.get("timestamp"))
            if at is not None:
                interrupts.append(at)
        elif is_compaction(record):
            self._compactions += 1

    # -- pass 2 and 3: settle backwards, replay forwards ----------------------------------
    def _settle_and_replay(
        self, fd: int, segments: list[tuple[int, int]], mem: bytes, mem_start: int
    ) -> int:
        """Find the last records that decide each metadata field, then feed them in order.

        ``segments``: the [start, end) spans of complete lines read by this poll, in file
        order; ``mem`` holds the bytes from ``mem_start`` to the end of the last span.
        """
        need = S_ALL
        held_at: int | None = None
        events: list[Event] | None = []
        settle_at = segments[0][0] if segments else 0
        read_box = [0]
        for start, end in reversed(segments):
            block = mem if end == mem_start + len(mem) else b""
            for offset, line in self._lines_backward(fd, start, end, block, mem_start, read_box):
                if line is None:
                    continue
                record = loads_object(line)
                if record is None:
                    continue
                event = classify(record)
                if events is not None:
                    events.append(event)
                    if len(events) > MAX_REPLAY_EVENTS:
                        events = None
                bits = settles(event)
                if held_at is not None and event.at is not None and event.at <= held_at:
                    need &= ~S_HELD  # back before the prompt in time too: it does settle
                    held_at = None
                if event.kind == K_PROMPT and event.at is not None and held_at is None:
                    # The CLI can write a turn's first records before its prompt (seen with
                    # 2.1.197): records above this prompt in the file may be newer than it.
                    bits &= ~S_HELD
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
                    record = loads_object(line) if line is not None else None
                    if record is not None:
                        self._meta.feed(classify(record))
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
    def batch_stats(self) -> TailStats:
        """The counters as a one-shot read sees them: the unterminated last line (held back
        by :meth:`poll`, waiting for its newline) counts as unparseable, blank or oversized."""
        stats = replace(self.stats)
        if self._partial_len or self._skipping:
            if self._skipping:
                stats.oversized += 1
            elif b"".join(self._partial).strip():
                stats.unparseable += 1
            else:
                stats.blank += 1
        return stats

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
        self._tokens = TokenState.from_json(cursor["tokens"])
        self._meta = MetaState.from_json(cursor["meta"])
        self._compactions = count_int(cursor.get("compactions"))
        self.stats = TailStats.from_json(cursor.get("stats"))
        self._facts = self._build_facts()
