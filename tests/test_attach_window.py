""" "Attach in a terminal" outside JupyterLab (issue 26): a window in the user's tmux running
``claude attach <job>``, found again by its ``@pmux-attach`` option; the widget's ``attach``
message and its ``attach_result``. A real tmux server, private to each test (``TMUX_TMPDIR``
in the test's folder, ``PMUX_WIDGET_TMUX_SOCKET``); ``claude`` is a stand-in script that
prints its arguments and waits (the real CLI: tests/real_claude/test_bg_attach_tmux.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pmux_widget import StatusWidget
from pmux_widget.core import signals as s
from pmux_widget.core.model import Background, Session, State
from pmux_widget.runtime.action_outcome import ActionError
from pmux_widget.runtime.attach_window import attach_in_tmux
from pmux_widget.runtime.hub import Hub
from pmux_widget.system import launch
from pmux_widget.system.clock import now_ms

from .helpers import wait_until
from .test_widget import Recorder

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed"),
]

JOB = "84ed038b"
SID = JOB + "-93f5-40db-b6ed-b6a9d117f38d"
#: no process has this pid: the binary comes from $PMUX_WIDGET_CLAUDE
GONE_PID = 4_190_000


class Tmux:
    """The test's own tmux server, as ``launch`` reaches it."""

    def __init__(self, folder: Path, name: str) -> None:
        self.name = name
        self.env = {**os.environ, "TMUX_TMPDIR": str(folder)}
        self.env.pop("TMUX", None)

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.name, *args], env=self.env, capture_output=True, text=True
        )
        return done.stdout if done.returncode == 0 else ""

    def windows(self) -> list[str]:
        """``session:index <@pmux-attach> <pane's command line>`` per window."""
        listed = self.run(
            "list-windows", "-a", "-F", "#{session_name}:#{window_index} #{@pmux-attach}"
        )
        return listed.splitlines()

    def screen(self, target: str) -> str:
        return self.run("capture-pane", "-p", "-J", "-t", target)


@pytest.fixture
def tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tmux]:
    folder = tmp_path / "t"
    folder.mkdir()
    monkeypatch.setenv("TMUX_TMPDIR", str(folder))
    monkeypatch.setenv("PMUX_WIDGET_TMUX_SOCKET", "attach")
    monkeypatch.setenv("TMUX", "/tmp/not-this-server,1,0")  # an outer tmux must not leak in
    monkeypatch.setenv("TMUX_PANE", "%99")
    stub = tmp_path / "stand-in-claude"
    stub.write_text('#!/bin/sh\necho "stand-in claude $* in $CLAUDE_CONFIG_DIR"\nexec sleep 120\n')
    stub.chmod(0o755)
    monkeypatch.setenv("PMUX_WIDGET_CLAUDE", str(stub))
    server = Tmux(folder, "attach")
    yield server
    server.run("kill-server")


def background(**more: object) -> Session:
    return Session(
        SID,
        state=State.NEEDS_INPUT,
        background=Background(JOB, "late-a"),
        **more,  # type: ignore[arg-type]
    )


def test_opens_a_window_then_brings_the_same_one_back(tmux: Tmux, tmp_path: Path) -> None:
    claude_dir = tmp_path / "claude-config"
    claude_dir.mkdir()
    fleet = {SID: background(cwd=str(tmp_path))}
    first = attach_in_tmux(fleet, claude_dir, SID)
    assert first.opened and first.socket == "attach"
    assert first.target == "pmux-attach:0"  # no server ran: a detached session of ours
    assert first.attach_command == "tmux -L attach attach -t pmux-attach:0"
    wait_until(
        lambda: f"stand-in claude attach {JOB} in {claude_dir}" in tmux.screen(first.target),
        10,
        what=lambda: tmux.screen(first.target),
    )
    assert tmux.windows() == [f"pmux-attach:0 {JOB}"]
    # another window is current: a second call selects the attach's, opens none
    tmux.run("new-window", "-t", "pmux-attach:", "sleep 120")
    again = attach_in_tmux(fleet, claude_dir, SID)
    assert (again.target, again.opened) == (first.target, False)
    assert len(tmux.windows()) == 2
    assert tmux.run("display-message", "-p", "-t", "pmux-attach", "#{window_index}").strip() == "0"


def test_a_running_server_gets_a_window_in_its_first_session(tmux: Tmux, tmp_path: Path) -> None:
    tmux.run("new-session", "-d", "-s", "work", "sleep 120")
    window = attach_in_tmux({SID: background()}, tmp_path, SID)
    assert window.target == "work:1" and window.opened
    assert f"work:1 {JOB}" in tmux.windows()


def test_only_a_background_session_is_attached(tmux: Tmux, tmp_path: Path) -> None:
    plain = Session("s-plain", state=State.IDLE, project="api")
    with pytest.raises(ActionError, match="not a Claude Code background session"):
        attach_in_tmux({"s-plain": plain}, tmp_path, "s-plain")
    with pytest.raises(ActionError, match="no session nope") as unknown:
        attach_in_tmux({}, tmp_path, "nope")
    assert unknown.value.unknown
    far = background(host="far-away")
    with pytest.raises(ActionError, match="runs on far-away: attach it there"):
        attach_in_tmux({SID: far}, tmp_path, SID)
    assert tmux.windows() == []  # refused: no server was even started


def test_the_default_server_is_used_whatever_tmux_the_caller_is_in(
    tmux: Tmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TMUX of the caller (a kernel in a pane, an agent view's daemon) would point tmux at that
    server: the window opens on the default one (here: in the test's TMUX_TMPDIR)."""
    monkeypatch.delenv("PMUX_WIDGET_TMUX_SOCKET")
    default = Tmux(Path(tmux.env["TMUX_TMPDIR"]), "default")
    try:
        window = attach_in_tmux({SID: background()}, tmp_path, SID)
        assert (window.target, window.socket) == ("pmux-attach:0", None)
        assert window.attach_command == "tmux attach -t pmux-attach:0"
        assert default.windows() == [f"pmux-attach:0 {JOB}"]
    finally:
        default.run("kill-server")


@pytest.fixture
def hub(homes) -> Iterator[Hub]:  # type: ignore[no-untyped-def]
    hub = Hub().start()
    yield hub
    hub.stop()


def test_the_widget_asks_and_is_answered_with_the_window(
    tmux: Tmux, hub: Hub, tmp_path: Path
) -> None:
    record = s.PidRecord(
        pid=GONE_PID, session_id=SID, cwd=str(tmp_path), started_at=1, kind="bg",
        name="late-a", status="waiting", job_id=JOB,
    )  # fmt: skip
    hub.call(lambda: hub.apply(s.PidFile(at=now_ms(), record=record)))
    hub.call(lambda: hub.apply(s.UserPromptSubmit(at=now_ms(), session_id="s-plain", cwd="/")))
    wait_until(lambda: SID in hub.fleet and "s-plain" in hub.fleet, 10, what="both rows")
    widget = StatusWidget(hub)
    recorder = Recorder(widget)

    def answers() -> list[dict]:
        with recorder.lock:
            return [m for m in recorder.messages if m["type"] == "attach_result"]

    for sid in (SID, SID, "s-plain"):
        count = len(answers()) + 1
        widget._on_front_end_msg(widget, {"type": "attach", "session_id": sid}, [])
        wait_until(lambda: len(answers()) == count, 15, what="the attach answer")  # noqa: B023
    opened, again, refused = answers()
    assert opened == {
        "type": "attach_result",
        "session_id": SID,
        "ok": True,
        "target": "pmux-attach:0",
        "command": "tmux -L attach attach -t pmux-attach:0",
        "opened": True,
        "message": "attached in tmux window pmux-attach:0: tmux -L attach attach -t pmux-attach:0",
    }
    assert again["ok"] and not again["opened"] and again["target"] == "pmux-attach:0"
    assert "brought to the front" in again["message"]
    assert refused["ok"] is False and refused["target"] is None
    assert "not a Claude Code background session" in refused["message"]
    assert tmux.windows() == [f"pmux-attach:0 {JOB}"]
    widget.close()


def test_no_tmux_is_refused_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(launch.shutil, "which", lambda name: None)
    monkeypatch.setenv("PMUX_WIDGET_CLAUDE", "/bin/true")
    with pytest.raises(ActionError, match="tmux is not installed"):
        attach_in_tmux({SID: background()}, tmp_path, SID)


def test_two_clicks_at_once_open_one_window(tmux: Tmux, tmp_path: Path) -> None:
    fleet = {SID: background()}
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: attach_in_tmux(fleet, tmp_path, SID), range(4)))
    assert sorted(w.opened for w in got) == [False, False, False, True]
    assert {w.target for w in got} == {"pmux-attach:0"}
    assert tmux.windows() == [f"pmux-attach:0 {JOB}"]
