"""Reading a whole transcript at once (``status`` without a hub, sub-agent summaries), on top
of the incremental tailer; and this package's transcript names in one place. The rules a
transcript is read by: ``docs/transcripts.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pmux_widget.core.model import Tokens

from .records import is_interrupt_marker, parse_timestamp
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
