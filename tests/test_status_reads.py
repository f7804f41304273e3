"""``status --watch`` with no hub keeps its transcript tailers between refreshes: each refresh
reads only what the transcripts gained, and still answers what a fresh snapshot would
(the facts, and every interrupt marker since the start, as a first read gives them)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.paths import ClaudeHome, transcript_path_for
from pmux_widget.hooks.spool import write_spool_entry
from pmux_widget.runtime.snapshot import TranscriptReads, compute_snapshot
from pmux_widget.system.clock import now_ms

from .conftest import Homes

FIXTURE = Path(__file__).parent / "fixtures" / "real" / "2.1.332" / "esc_dialog" / "transcripts"
CWD = "/home/dev/project"


def _rows(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "state_since"} for row in snapshot["sessions"]]


def test_refreshes_read_what_was_appended_and_answer_as_a_fresh_snapshot(homes: Homes) -> None:
    [source] = sorted(FIXTURE.glob("*.jsonl"))
    sid = source.stem
    lines = source.read_bytes().splitlines(keepends=True)
    markers = [i for i, line in enumerate(lines) if b"[Request interrupted" in line]
    assert len(markers) == 2  # one in each half
    path = transcript_path_for(ClaudeHome.resolve(homes.claude), CWD, sid)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(lines[: markers[0] + 1]))
    hook = {
        "session_id": sid,
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": CWD,
        "transcript_path": str(path),
    }
    write_spool_entry(homes.pmux, json.dumps(hook).encode() + b"\n", sent=now_ms() - 60_000)

    reads = TranscriptReads()
    first = compute_snapshot(homes.pmux, homes.claude, reads=reads)
    assert _rows(first) == _rows(compute_snapshot(homes.pmux, homes.claude))
    assert first["sessions"][0]["tokens"]["output"] > 0

    with path.open("ab") as out:
        out.writelines(lines[markers[0] + 1 :])
    again = compute_snapshot(homes.pmux, homes.claude, reads=reads)
    fresh = compute_snapshot(homes.pmux, homes.claude)
    assert _rows(again) == _rows(fresh)
    assert _rows(again) != _rows(first)  # the second half moved something
    # nothing appended: the refresh reads nothing and still tells it all
    assert _rows(compute_snapshot(homes.pmux, homes.claude, reads=reads)) == _rows(fresh)
    # each byte was read once by the kept tailer
    [followed] = reads._followed.values()
    assert followed.tailer.stats.bytes_read == path.stat().st_size

    # a transcript replaced by a shorter one: read anew from its first byte
    shutil.copy(source, path.with_suffix(".tmp"))
    path.with_suffix(".tmp").replace(path)
    path.write_bytes(b"".join(lines[: markers[0]]))
    assert _rows(compute_snapshot(homes.pmux, homes.claude, reads=reads)) == _rows(
        compute_snapshot(homes.pmux, homes.claude)
    )
