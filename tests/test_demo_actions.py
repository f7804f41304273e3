"""The scripted demo fleet answers actions: approve, deny, interrupt and send reach its
simulated Claude processes (``pmux_widget.demo.sim_claude``) through the same checks as a real
CLI's (``runtime.actions.act``: state, PID file, the tmux pane that holds the process, the
screen), and each process reacts as the real CLI does.

Real components: the demo's private tmux server, the installed hook script, a real hub with
its file sources (PID files, transcripts). The fleet runs at twice the demo's speed (four
times where no action races the script).
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from pmux_widget import hooks
from pmux_widget.agents.claude.screen import parse_screen
from pmux_widget.core.model import Change, Session, State
from pmux_widget.demo.driver import ScriptedFleet
from pmux_widget.runtime.actions import ActionError, act
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system import keys
from pmux_widget.system.home import PmuxHome

from .helpers import wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

SPEED = 2.0


@dataclass
class Seen:
    """Every (state, source) each session went through, from the hub's listener."""

    states: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        with self.lock:
            for change in changes:
                after = change.after
                trail = self.states.setdefault(after.session_id, [])
                if not trail or trail[-1] != (after.state.value, after.source):
                    trail.append((after.state.value, after.source))

    def since(self, session_id: str, mark: int) -> list[tuple[str, str]]:
        with self.lock:
            return list(self.states.get(session_id, [])[mark:])

    def mark(self, session_id: str) -> int:
        with self.lock:
            return len(self.states.get(session_id, []))


@dataclass
class Demo:
    hub: Hub
    fleet: ScriptedFleet
    seen: Seen

    def sessions(self) -> list[Session]:
        return self.hub.call(lambda: [s for s in self.hub.fleet.values() if not s.ended])

    def session(self, project: str) -> Session | None:
        return next((s for s in self.sessions() if s.project == project), None)

    def wait_for(
        self, project: str, ok: Callable[[Session], bool], timeout: float, what: str
    ) -> Session:
        def found() -> Session | None:
            s = self.session(project)
            return s if s is not None and ok(s) else None

        return wait_until(
            found, timeout, what=lambda: f"{project}: {what} ({self.session(project)})"
        )


@pytest.fixture
def demo(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Demo]:
    speed = getattr(request, "param", SPEED)
    claude = tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    home = PmuxHome(tmp_path / "pmux")
    hooks.install(claude / "settings.json", home.ensure())
    hub = make_hub(home=home.root, claude_home=claude).start()
    seen = Seen()
    hub.call(lambda: hub.add_listener(seen))
    fleet = ScriptedFleet(claude, home.root, tmp_path / "projects", seed=11, speed=speed)
    try:
        fleet.start()
        assert fleet.panes is not None, fleet.note
        yield Demo(hub, fleet, seen)
    finally:
        procs = fleet.panes.processes() if fleet.panes is not None else []
        socket = fleet.panes.socket if fleet.panes is not None else None
        fleet.stop()
        hub.stop()
    # Stopping ends every session's process and the tmux server.
    assert not [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    if socket is not None:
        server = [
            p
            for p in psutil.process_iter(["cmdline"])
            if socket in " ".join(p.info.get("cmdline") or [])
        ]
        wait_until(lambda: not any(p.is_running() for p in server), 10, what="tmux server left")


def transcript(session: Session) -> list[dict]:
    assert session.transcript_path
    text = Path(session.transcript_path).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def last_tool_use(session: Session) -> str:
    for record in reversed(transcript(session)):
        for block in (record.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                return str(block["id"])
    raise AssertionError("no tool_use in the transcript")


def tool_result(session: Session, tool_id: str) -> dict | None:
    for record in transcript(session):
        for block in (record.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("tool_use_id") == tool_id:
                return block
    return None


def needs_input(s: Session) -> bool:
    return s.state is State.NEEDS_INPUT and s.running


@pytest.mark.timeout(120)
def test_the_scripted_fleet_answers_every_action(demo: Demo) -> None:
    hub = demo.hub

    # approve: acme-api asks for its test run; Enter on the selected "1. Yes" → the tool runs
    s = demo.wait_for("acme-api", needs_input, 20, "never asked for permission")
    tool_id = last_tool_use(s)
    mark = demo.seen.mark(s.session_id)
    result = act(hub, s.session_id, "approve", record=hub.record_action)
    assert result.keys == ("Enter",)
    wait_until(lambda: tool_result(s, tool_id), 15, what="the approved tool never ran")
    assert not tool_result(s, tool_id)["is_error"]  # type: ignore[index]
    after = demo.seen.since(s.session_id, mark)
    assert ("busy", "action:approve") in after, after  # the state the key led to

    # deny: its next dialog (the edit); Down Down onto "3. No", Enter → no tool, no Stop: idle
    s = demo.wait_for("acme-api", needs_input, 20, "never asked again")
    tool_id = last_tool_use(s)
    mark = demo.seen.mark(s.session_id)
    result = act(hub, s.session_id, "deny", record=hub.record_action)
    assert result.keys == ("Down", "Down", "Enter")
    demo.wait_for("acme-api", lambda x: x.state is State.IDLE, 10, "not idle after the denial")
    rejected = tool_result(s, tool_id)
    assert rejected is not None and rejected["is_error"], rejected
    assert "doesn't want to proceed" in rejected["content"]
    last = transcript(s)[-1]["message"]["content"][0]["text"]
    assert last == "[Request interrupted by user for tool use]"
    after = demo.seen.since(s.session_id, mark)
    assert ("idle", "action:deny") in after, after
    assert "busy" not in [state for state, _ in after], after  # the tool never ran
    assert all(source != "hook:Stop" for _, source in after), after

    # interrupt: infra's turn while it runs; Esc → the marker, no Stop: idle
    s = demo.wait_for("infra", lambda x: x.state is State.BUSY and x.running, 30, "never busy")
    mark = demo.seen.mark(s.session_id)
    act(hub, s.session_id, "interrupt", record=hub.record_action)
    demo.wait_for("infra", lambda x: x.state is State.IDLE, 10, "not idle after Esc")
    after = demo.seen.since(s.session_id, mark)
    assert after[-1] == ("idle", "action:interrupt"), after  # the state the key led to
    assert all(source != "hook:Stop" for _, source in after), after
    assert any(
        "[Request interrupted by user" in json.dumps(r.get("message")) for r in transcript(s)[-2:]
    )

    # send: a prompt typed into an idle session → busy → review with its answer
    s = demo.wait_for("infra", lambda x: x.state in (State.IDLE, State.REVIEW), 10, "not idle")
    mark = demo.seen.mark(s.session_id)
    act(hub, s.session_id, "send", text="what changed today?", record=hub.record_action)
    done = demo.wait_for(
        "infra",
        lambda x: x.state is State.REVIEW and "what changed today?" in (x.last_assistant or ""),
        30,
        "no answer to the prompt",
    )
    assert done.last_prompt == "what changed today?"
    after = demo.seen.since(s.session_id, mark)
    assert ("busy", "action:send") in after or ("busy", "hook:UserPromptSubmit") in after, after


@pytest.mark.parametrize("demo", [4.0], indirect=True)
def test_actions_on_the_session_outside_tmux_are_refused(demo: Demo) -> None:
    s = demo.wait_for("data-pipeline", lambda x: x.running and x.pid, 20, "never running")
    # idle, review and busy all take a prompt: refused only because no pane holds it
    with pytest.raises(ActionError, match="does not run in tmux"):
        act(demo.hub, s.session_id, "send", text="hi")


@pytest.mark.parametrize("demo", [4.0], indirect=True)
def test_each_pane_shows_what_the_real_cli_shows(demo: Demo) -> None:
    """The screens are what ``agents.claude.screen`` reads: a dialog while needs-input, the busy
    footer while busy, an empty prompt box when idle."""
    s = demo.wait_for("web-frontend", needs_input, 30, "never asked")
    pane = keys.find_pane(s.pid or 0)
    assert pane is not None and pane.location.pane == s.tracking.pane
    dialog = wait_until(lambda: parse_screen(keys.capture(pane)).dialog, 5, what="no dialog")
    assert dialog.title == "Bash command"
    assert [c.label for c in dialog.choices][0::2] == ["Yes", "No"]
    assert dialog.choice("yes") is not None and dialog.choice("no") is not None
    s = demo.wait_for("web-frontend", lambda x: x.state is State.BUSY, 20, "never busy again")
    wait_until(lambda: parse_screen(keys.capture(pane)).busy, 5, what="no busy footer")
    demo.wait_for("web-frontend", lambda x: x.state is State.REVIEW, 30, "never in review")
    idle = wait_until(
        lambda: (lambda sc: sc if sc.prompt_text == "" and not sc.busy else None)(
            parse_screen(keys.capture(pane))
        ),
        5,
        what="no empty prompt box",
    )
    assert idle.dialog is None


def test_without_tmux_the_fleet_runs_as_threads_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    home = PmuxHome(tmp_path / "pmux")
    hooks.install(claude / "settings.json", home.ensure())
    empty = tmp_path / "bin"
    empty.mkdir()
    with monkeypatch.context() as patched:
        patched.setenv("PATH", str(empty))  # a machine without tmux
        fleet = ScriptedFleet(claude, home.root, tmp_path / "projects", sessions=1, speed=4)
    assert fleet.panes is None
    assert fleet.note is not None and "tmux is not installed" in fleet.note
    assert any("tmux is not installed" in line for line in fleet.describe())
    hub = make_hub(home=home.root, claude_home=claude).start()
    try:
        fleet.start()
        demo = Demo(hub, fleet, Seen())
        s = demo.wait_for("acme-api", lambda x: x.state is State.BUSY, 20, "never busy")
        # no process to prove, no pane: refused with the reason, nothing typed
        with pytest.raises(ActionError, match="its Claude process is not running"):
            act(hub, s.session_id, "interrupt")
    finally:
        fleet.stop()
        hub.stop()


@pytest.fixture
def codex_demo(tmp_path: Path) -> Iterator[Demo]:
    """The scripted fleet with one Claude session and the simulated Codex TUI, whose hooks
    are installed (and trusted) in their own CODEX_HOME, as the demo installs them."""
    from pmux_widget.agents.codex import CodexHome

    claude = tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    home = PmuxHome(tmp_path / "pmux")
    hooks.install(claude / "settings.json", home.ensure())
    codex = CodexHome(tmp_path / "codex")
    hooks.install_codex(codex, home, create=True)
    hub = make_hub(home=home.root, claude_home=claude).start()
    seen = Seen()
    hub.call(lambda: hub.add_listener(seen))
    fleet = ScriptedFleet(
        claude, home.root, tmp_path / "projects", seed=5, speed=SPEED, sessions=1,
        codex_home=codex.root,
    )  # fmt: skip
    try:
        fleet.start()
        assert fleet.panes is not None, fleet.note
        yield Demo(hub, fleet, seen)
    finally:
        procs = fleet.panes.processes() if fleet.panes is not None else []
        fleet.stop()
        hub.stop()
    assert not [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


@pytest.mark.timeout(120)
def test_the_simulated_codex_tui_answers_every_action(codex_demo: Demo) -> None:
    """Issue 36: the demo's Codex session is a row of its own TUI (pid, pane) and takes
    Codex's keys through act()'s checks: approve ``y``, deny Esc (Interrupt, idle), send
    (text, then Enter apart: a new turn), interrupt Esc while it works."""
    from pmux_widget.demo.scripted_fleet import CODEX_PROJECT

    demo, hub = codex_demo, codex_demo.hub
    project = CODEX_PROJECT

    def asks(s: Session) -> bool:
        return needs_input(s) and s.pid is not None and s.tmux is not None

    s = demo.wait_for(project, asks, 40, "never asked for approval with its TUI and pane")
    assert s.agent == "codex"
    assert psutil.Process(s.pid).name() == "codex"
    mark = demo.seen.mark(s.session_id)
    assert act(hub, s.session_id, "approve", record=hub.record_action).keys == ("y",)
    demo.wait_for(project, lambda x: x.state is State.REVIEW, 30, "no review after approve")
    assert ("busy", "action:approve") in demo.seen.since(s.session_id, mark)

    # deny: the next round's approval; Esc → its Interrupt hook → idle (not recorded as an
    # action here, so the hook is what moves the row)
    s = demo.wait_for(project, asks, 60, "never asked again")
    assert act(hub, s.session_id, "deny").keys == ("Escape",)
    idle = demo.wait_for(project, lambda x: x.state is State.IDLE, 15, "not idle after deny")
    assert idle.source == "hook:Interrupt", idle.source

    # send: a prompt of the user's own → a turn → review; interrupt the next while it works
    sent = act(hub, s.session_id, "send", text="what changed?", record=hub.record_action)
    assert sent.keys == ("<text>", "Enter")
    demo.wait_for(project, lambda x: x.last_prompt == "what changed?", 15, "prompt not seen")
    demo.wait_for(project, lambda x: x.state is State.REVIEW, 30, "no review after send")
    act(hub, s.session_id, "send", text="and again", record=hub.record_action)
    demo.wait_for(project, lambda x: x.state is State.BUSY, 15, "not busy after send")
    assert act(hub, s.session_id, "interrupt", record=hub.record_action).keys == ("Escape",)
    demo.wait_for(project, lambda x: x.state is State.IDLE, 15, "not idle after interrupt")
