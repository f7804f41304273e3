"""The ``status`` table says what the widget's rows say, in the same words (core.wording.lines,
contract.describe_source), and fits the terminal; ``status --watch`` redraws in place and
ends cleanly on Ctrl+C."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pmux_widget.cli.table import format_table, redraw
from pmux_widget.core.contract import counts, describe_source
from pmux_widget.core.model import Session, State, TmuxLocation, Tokens
from pmux_widget.core.tracking import Tracking
from pmux_widget.core.wording import lines, need_you, needs_you

from .helpers import wait_until

NOW = 1_800_000_000_000
CWD = "/home/dev/checkout/.demo/projects/acme-api"
ROOT = Path(__file__).resolve().parents[1]


def _fleet() -> list[Session]:
    tmux = TmuxLocation(session="demo", window="0", pane="%1", title="")
    return [
        # a new prompt, a tool at work: the previous turn's answer must not show
        Session(
            "busy-0001",
            State.BUSY,
            running=True,
            state_since=NOW - 4_000,
            cwd=CWD,
            project="acme-api",
            tmux=tmux,
            current_tool="Edit",
            tool_summary=f"Edit {CWD}/src/acme/pagination.py (+3, -1)",
            last_assistant="The README says hello.",
            last_prompt="fix the pagination bug",
            tokens=Tokens(input=173, output=313, cache_read=14_000, cache_creation=0),
            context_tokens=1_119,
            source="hook:PreToolUse",
            tracking=Tracking(prompt_at=NOW - 5_000, assistant_at=NOW - 60_000),
        ),
        Session(
            "asks-0002",
            State.NEEDS_INPUT,
            running=True,
            state_since=NOW - 90_000,
            cwd=CWD,
            project="web-frontend",
            current_tool="Bash",
            tool_summary="$ pytest -q tests/test_api.py",
            last_assistant="Older answer.",
            last_prompt="run the tests",
            source="hook:PermissionRequest",
        ),
        Session(
            "done-0003",
            State.REVIEW,
            running=True,
            state_since=NOW - 7_000,
            project="infra",
            last_assistant="The long command finished.\nAll 12 checks passed.",
            last_prompt="run a long command",
            source="hook:Stop",
        ),
        Session(
            "wait-0004",
            State.BUSY,
            running=True,
            state_since=NOW - 3_000,
            project="agents",
            subagents=1,
            last_prompt="start a background agent please",
            source="wait:background-agent",
        ),
        # a turn that ended in an API error: its answer is the turn before's
        Session(
            "fail-0006",
            State.REVIEW,
            running=True,
            state_since=NOW - 2_000,
            project="pipeline",
            error="rate_limit",
            last_assistant="The README says hello.",
            last_prompt="please fail with 429",
            source="hook:StopFailure",
            tracking=Tracking(prompt_at=NOW - 3_000, assistant_at=NOW - 60_000),
        ),
        Session(
            "gone-0005",
            State.IDLE,
            running=False,
            state_since=NOW - 3_600_000,
            project="old",
            source="process:gone",
        ),
    ]


def _snapshot(as_json: bool) -> dict[str, object]:
    sessions = _fleet()
    counts = {"idle": 1, "busy": 2, "needs-input": 1, "review": 2, "unknown": 0, "attention": 3}
    return {"sessions": [s.to_json() if as_json else s for s in sessions], "counts": counts}


def _row(table: str, sid: str) -> list[str]:
    """The line of ``sid`` and, on a narrow table, the line under it."""
    rows = table.splitlines()
    at = next(i for i, line in enumerate(rows) if sid[:8] in line)
    return rows[at : at + 2]


@pytest.mark.parametrize("width", [80, 200])
def test_each_state_says_what_the_widget_says(width: int) -> None:
    table = format_table(_snapshot(as_json=False), NOW, width=width)
    print(table)
    busy = " ".join(_row(table, "busy-0001"))
    assert "Edit src/acme/pagination.py (+3, -1)" in busy  # relative, the file name whole
    assert "“fix the pagination bug”" in busy
    assert "README says hello" not in busy  # the previous turn's answer
    assert CWD not in table
    asks = " ".join(_row(table, "asks-0002"))
    assert "asks to run: pytest -q tests/test_api.py · “run the tests”" in asks
    review = " ".join(_row(table, "done-0003"))
    assert "The long command finished. All 12 checks passed." in review  # one line
    waiting = " ".join(_row(table, "wait-0004"))
    assert "[1 sub-agent] thinking · “start a background agent please”" in waiting
    failed = " ".join(_row(table, "fail-0006"))
    assert "error: rate_limit" in failed and "README" not in failed
    # why, in plain words; the raw sources only with --why
    for sid, source in (("busy-0001", "hook:PreToolUse"), ("asks-0002", "hook:PermissionRequest")):
        assert describe_source(source) in _row(table, sid)[0]
    assert "waiting for a background agent" in table
    assert "not running · its process exited" in table
    assert "hook:" not in table and "wait:" not in table
    raw = format_table(_snapshot(as_json=False), NOW, width=200, raw_why=True)
    assert "asked for permission [hook:PermissionRequest]" in raw


def test_narrow_fits_80_columns_and_wide_uses_more() -> None:
    narrow = format_table(_snapshot(as_json=False), NOW, width=80)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert "TOKENS" not in narrow and "CTX" not in narrow  # left to --json at 80 columns
    # each session's row, then what it does on a line of its own
    assert _row(narrow, "busy-0001")[1].startswith("  Edit src/acme/pagination.py")

    wide = format_table(_snapshot(as_json=False), NOW, width=200)
    assert max(len(line) for line in wide.splitlines()) <= 200
    header = wide.splitlines()[1].split()
    assert header == ["STATE", "FOR", "ID", "SESSION", "TOKENS", "CTX", "WHY", "DOING"]
    assert len(wide.splitlines()) == 2 + len(_fleet())  # one line per session
    busy = _row(wide, "busy-0001")[0]
    assert "14.2k/313" in busy and "1%" in busy and "acme-api (demo:0.%1)" in busy

    # a very long answer is cut at the terminal's edge, never wrapped
    long = _fleet()[2].replace(last_assistant="word " * 200)
    table = format_table({"sessions": [long], "counts": {}}, NOW, width=100)
    assert max(len(line) for line in table.splitlines()) <= 100
    assert table.splitlines()[-1].endswith("…")


def test_the_hubs_json_reads_as_its_sessions() -> None:
    """What a hub answers (the contract's JSON, no bookkeeping) gives the same table, but
    for what only the bookkeeping knows (here: nothing the table shows)."""
    for width in (80, 160):
        assert format_table(_snapshot(as_json=True), NOW, width=width) == format_table(
            _snapshot(as_json=False), NOW, width=width
        )


def test_lines_are_the_rows_words() -> None:
    busy, asks, review, waiting, failed, gone = _fleet()
    assert lines(busy).primary == "Edit src/acme/pagination.py (+3, -1)"
    assert lines(busy).secondary == "“fix the pagination bug”"
    assert lines(asks).primary == "asks to run: pytest -q tests/test_api.py"
    assert lines(review).primary.startswith("The long command finished.")  # type: ignore[union-attr]
    assert lines(review.replace(last_assistant=None)).primary == "finished its turn"
    assert lines(waiting).primary == "thinking"
    assert lines(waiting.replace(compacting=True)).primary == "compacting its context"
    assert lines(gone).primary is None
    assert lines(failed).primary is None and lines(failed).error == "rate_limit"
    detailed = failed.replace(tracking=Tracking(error_detail="429 Too Many Requests"))
    assert lines(detailed).error == "rate_limit: 429 Too Many Requests"


def test_the_first_line_counts_what_needs_you_in_the_panels_words() -> None:
    """One meaning of "need you" (issue 30): the first line's count is the sessions in
    needs-input or review, in the words of the status bar and Notebook 7's top bar."""
    sessions = _fleet()
    table = format_table({"sessions": sessions, "counts": counts(sessions)}, NOW, width=120)
    waiting = sum(map(needs_you, sessions))
    assert waiting == 3
    assert table.splitlines()[0] == (
        f"{need_you(waiting)} · 1 needs-input · 2 review · 2 busy · 0 unknown · 1 idle"
    )
    assert table.startswith("3 need you · ")
    # the rows it counts are the table's needs-input and review rows
    states = [line.split()[0] for line in table.splitlines()[2:] if line and line[0] != " "]
    assert sum(state in ("needs-input", "review") for state in states) == waiting


def test_empty() -> None:
    assert format_table({"sessions": [], "counts": {}}, NOW, width=80).endswith("No sessions yet.")


def test_redraw_overwrites_in_place() -> None:
    frame = redraw("a\nbb")
    assert frame == "\x1b[Ha\x1b[K\nbb\x1b[K\n\x1b[J"
    assert "\x1b[2J" not in frame  # no clear before drawing: no blink


def _read_until(fd: int, marker: bytes, timeout: float) -> bytes:
    got = b""

    def more() -> bool:
        nonlocal got
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                got += os.read(fd, 65536)
            except OSError:
                return True  # the other end closed
        return marker in got

    wait_until(more, timeout, what=lambda: f"{marker!r} in {got[-500:]!r}")
    return got


def test_watch_redraws_in_place_and_exits_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    (tmp_path / "claude").mkdir()
    leader, follower = pty.openpty()
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "PMUX_WIDGET_HOME": str(tmp_path / "pmux"),
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "80",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "pmux_widget", "status", "--watch", "--interval", "0.2"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        start_new_session=True,
    )
    os.close(follower)
    try:
        first = _read_until(leader, b"No sessions yet.", 60)
        out = first + _read_until(leader, b"\x1b[H", 30)  # a second frame, drawn over the first
        assert out.count(b"\x1b[2J") == 1  # cleared once, at the start
        assert b"\x1b[?25l" in out  # the cursor hidden while it redraws
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl+C sends the terminal's foreground group
        assert proc.wait(30) == 0
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        assert b"Traceback" not in out and b"KeyboardInterrupt" not in out
        assert out.rstrip().endswith(b"\x1b[?25h")  # the cursor is back
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(leader)


@pytest.mark.parametrize("as_json", [False, True])
def test_a_background_session_says_background_where_a_pane_would_be(as_json: bool) -> None:
    """Claude Code's own background session (issue 26): its name and "background" in the NAME
    column (it has no pane); a stopped one says it does not run."""
    from pmux_widget.core.model import Background

    waiting = Session(
        "bgwait-0007",
        State.NEEDS_INPUT,
        running=True,
        state_since=NOW - 5_000,
        project="acme-api",
        background=Background("84ed038b", "late-a"),
        source="pid:waiting",
    )
    stopped = waiting.replace(
        session_id="bgstop-0008",
        state=State.IDLE,
        running=False,
        background=Background("319062b3", "late-b"),
        source="background:stopped",
    )
    sessions = [waiting, stopped]
    snapshot = {"sessions": [s.to_json() if as_json else s for s in sessions], "counts": {}}
    table = format_table(snapshot, NOW, width=200)
    print(table)
    assert "acme-api (background: late-a)" in " ".join(_row(table, "bgwait-0007"))
    stopped_line = " ".join(_row(table, "bgstop-0008"))
    assert "acme-api (background: late-b)" in stopped_line
    assert "not running · stopped" in stopped_line


@pytest.mark.parametrize("as_json", [False, True])
def test_a_codex_session_carries_the_rows_agent_mark(as_json: bool) -> None:
    """Issue 36: a Codex row's NAME carries its agent's mark, the word the widget's rows show
    (core.wording.agent_mark); Claude's rows none."""
    codex = Session(
        "codex-0009",
        State.NEEDS_INPUT,
        running=True,
        state_since=NOW - 5_000,
        project="acme-api",
        agent="codex",
        source="hook:PermissionRequest",
    )
    claude = codex.replace(session_id="claude-0010", agent="claude")
    snapshot = {"sessions": [s.to_json() if as_json else s for s in (codex, claude)]}
    table = format_table(snapshot, NOW, width=200)
    print(table)
    assert "acme-api [Codex]" in " ".join(_row(table, "codex-0009"))
    assert "[Codex]" not in " ".join(_row(table, "claude-0010"))
