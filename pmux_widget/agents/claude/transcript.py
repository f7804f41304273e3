"""Reading a whole transcript at once (``status`` without a hub, sub-agent summaries), on top
of the incremental tailer; and this package's transcript names in one place. The rules a
transcript is read by: ``docs/transcripts.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pmux_widget.core.model import Tokens

from .records import is_interrupt_marker, loads_object, parse_timestamp, text_blocks
from .tailer import CHUNK_SIZE, MAX_LINE, TailResult, TailStats, TranscriptFacts, TranscriptTailer

__all__ = [
    "CHUNK_SIZE",
    "MAX_LINE",
    "SubagentSummary",
    "TailResult",
    "TailStats",
    "TranscriptFacts",
    "TranscriptTailer",
    "is_interrupt_marker",
    "last_answer",
    "parse_timestamp",
    "scan_transcript",
    "scan_transcript_stats",
    "subagent_summary",
]


@dataclass(frozen=True, slots=True)
class SubagentSummary:
    """Sub-agent transcripts of a session (``<project>/<sid>/subagents/**/agent-*.jsonl``)."""

    count: int
    tokens: Tokens


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
    return result.facts, tailer.batch_stats()


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


#: How much of a transcript's end :func:`last_answer` reads (a turn's records are near it).
ANSWER_WINDOW = 4 << 20


def last_answer(path: str | os.PathLike[str], since_ms: int = 0) -> str | None:
    """The full text of the newest main-thread assistant answer written at or after
    ``since_ms`` (a record's ``timestamp``), or None. Reads only the file's last few MB.

    The session's ``last_assistant`` is clipped for display; ``Session.ask`` returns this.
    """
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            start = max(0, size - ANSWER_WINDOW)
            handle.seek(start)
            data = handle.read()
    except OSError:
        return None
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first one is cut
    for line in reversed(lines):
        record = loads_object(line) if line.strip() else None
        if record is None or record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        at = parse_timestamp(record.get("timestamp")) or 0
        if at < since_ms:
            return None
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        text = "\n".join(text_blocks(content)).strip()
        if text:
            return text
    return None
