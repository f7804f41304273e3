"""Seen in tmux (issue 34): a review ends, silently, when an attached tmux client shows its
pane; a pane no client shows, and any state but review, stay. Real tmux on a private server
(TMUX_TMPDIR in the test's folder), a real client attached on a pty (``script``), a real hub."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmux_widget.core import signals as s
from pmux_widget.core.model import Session, State, TmuxLocation
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.sources.seen import looked_at, watched
from pmux_widget.system import tmux
from pmux_widget.system.clock import now_ms

from .helpers import wait_until


def _in(sid: str, state: State, pane: str, **kw: object) -> Session:
    where = TmuxLocation(session="work", window="0", pane=pane, title="")
    return Session(sid, state=state, running=True, tmux=where, **kw)  # type: ignore[arg-type]


def test_only_reviews_in_a_shown_pane_are_looked_at() -> None:
    sessions = [
        _in("r", State.REVIEW, "%1"),
        _in("hidden", State.REVIEW, "%2"),
        _in("asks", State.NEEDS_INPUT, "%1"),
        _in("busy", State.BUSY, "%1"),
        Session("nowhere", state=State.REVIEW, running=True),
    ]
    shown = {("work", "%1"), ("other", "%2")}  # %2 of another tmux session: not this pane
    assert looked_at(sessions, shown) == ["r"]
    assert watched(sessions)
    assert not watched([_in("busy", State.BUSY, "%1"), Session("x", state=State.REVIEW)])


class Tmux:
    def __init__(self, tmp: Path) -> None:
        self.env = {**os.environ, "TMUX_TMPDIR": str(tmp)}
        self.client: subprocess.Popen[bytes] | None = None

    def __call__(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", "seen", *args], env=self.env, check=True, capture_output=True
        )
        return out.stdout.decode().strip()

    def attach(self) -> None:
        # a real client on a pty, as a user's terminal is
        self.client = subprocess.Popen(
            ["script", "-qfc", "tmux -L seen attach -t work", "/dev/null"],
            env={**self.env, "TERM": "xterm"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: self("list-clients", "-F", "#{pane_id}"), 10, what="client attached")


@pytest.fixture
def private_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tmux]:
    if shutil.which("tmux") is None or shutil.which("script") is None:
        pytest.skip("tmux or script not installed")
    monkeypatch.setenv("TMUX_TMPDIR", str(tmp_path))
    monkeypatch.delenv("PMUX_WIDGET_TMUX_SOCKETS", raising=False)
    t = Tmux(tmp_path)
    t("new-session", "-d", "-s", "work", "-x", "80", "-y", "20", "sleep 600")
    t("new-window", "-t", "work", "sleep 600")
    yield t
    if t.client is not None:
        t.client.terminate()
        t.client.wait(5)
    subprocess.run(["tmux", "-L", "seen", "kill-server"], env=t.env, check=False)


@pytest.mark.tmux
def test_shown_panes_follow_the_clients_window(private_tmux: Tmux) -> None:
    first, second = private_tmux("list-panes", "-s", "-t", "work", "-F", "#{pane_id}").split()
    assert tmux.shown_panes() == set()  # no client: nothing shown
    private_tmux.attach()
    assert tmux.shown_panes() == {("work", second)}  # the window made last is current
    private_tmux("select-window", "-t", "work:0")
    assert tmux.shown_panes() == {("work", first)}


@pytest.mark.tmux
def test_a_review_whose_pane_a_client_shows_goes_idle_silently(
    private_tmux: Tmux, homes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PMUX_WIDGET_SEEN_SECONDS", "0.1")
    first, second = private_tmux("list-panes", "-s", "-t", "work", "-F", "#{pane_id}").split()
    private_tmux("select-window", "-t", "work:0")  # the client will show `first`
    hub = make_hub(home=homes.pmux.root, claude_home=homes.claude, notify=False).start()
    try:

        def finish(sid: str, pane: str) -> None:
            hub.apply(s.SessionStart(at=now_ms(), session_id=sid, cwd="/w/p", source="startup"))
            where = TmuxLocation(session="work", window="0", pane=pane, title="")
            hub.apply(s.Locate(at=now_ms(), session_id=sid, tmux=where))
            hub.apply(s.UserPromptSubmit(at=now_ms(), session_id=sid, prompt="go"))
            hub.apply(s.Stop(at=now_ms(), session_id=sid))

        hub.call(lambda: finish("shown", first))
        hub.call(lambda: finish("hidden", second))
        assert hub.fleet["shown"].state is State.REVIEW
        private_tmux.attach()
        wait_until(
            lambda: hub.fleet["shown"].state is State.IDLE,
            10,
            what=lambda: f"seen: {hub.fleet['shown']!r} {tmux.shown_panes()}",
        )
        assert hub.fleet["shown"].source == "user:seen"
        assert hub.fleet["hidden"].state is State.REVIEW
        # showing the other window ends that review too
        private_tmux("select-window", "-t", "work:1")
        wait_until(lambda: hub.fleet["hidden"].state is State.IDLE, 10, what="second seen")
        assert hub.fleet["hidden"].source == "user:seen"
        transitions = [t for t in hub.history() if t.source == "user:seen"]
        assert {t.session_id for t in transitions} == {"shown", "hidden"}
    finally:
        hub.stop()
