"""Actions on Claude Code's own background sessions (``claude --bg``), on both pinned CLIs:
approve, deny, interrupt and send through ``claude attach <job>`` on a private tmux server of
ours, ``claude stop`` and ``claude rm``, and ``new_session(where="background")``.

A real hub watches a sealed env with our hooks installed; the sessions run under the CLI's
daemon (the harness ends every process of the env by pid). What the CLI did is read from its
own files (the worker's PID file, ``claude agents --json``) and the recorded hooks, never from
our own attach; after every action no attach client and no private tmux server is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from pmux_widget.agents.claude.screen import parse_screen
from pmux_widget.cli import commands as cli
from pmux_widget.core.model import State
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.demo.claude_env import OLDEST
from pmux_widget.notebook.starting import new_session
from pmux_widget.runtime.actions import ActionError, act, peek
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.warm_attach import LINGER_S, claim_of
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until

pytestmark = pytest.mark.all_versions


class Bg:
    """One sealed env with our hooks, its background sessions and a hub watching it."""

    def __init__(self, bg: BgClaude, hub: Hub) -> None:
        self.bg = bg
        self.hub = hub
        #: the jobs the running test started (removed after it, whatever its outcome)
        self.jobs: list[str] = []

    def start(self, prompt: str, name: str, permission_mode: str = "default") -> str:
        job = self.bg.start(prompt, name, permission_mode)
        self.jobs.append(job)
        wait_until(lambda: self.sid(job) is not None, 60, what=f"the hub knows job {job}")
        return job

    def sid(self, job: str) -> str | None:
        for s in self.hub.fleet.values():
            if s.background is not None and s.background.job == job and not s.ended:
                return s.session_id
            if s.session_id.startswith(job) and not s.ended:
                return s.session_id
        return None

    def state(self, job: str, *states: State, timeout: float = 60.0) -> str:
        sid = self.sid(job)
        assert sid is not None

        def there() -> bool:
            s = self.hub.fleet[sid]
            return s.state in states and s.running

        wait_until(
            there,
            timeout,
            what=lambda: (
                f"{job} in {states}: {self.hub.fleet[sid].state} "
                f"({self.hub.fleet[sid].source}), PID files {self.bg.env.pid_files()}"
            ),
        )
        return sid

    def status(self, job: str) -> str | None:
        found = self.bg.worker(job)
        return str(found[1].get("status")) if found else None


def _attach_left(bg: BgClaude) -> list[str]:
    """The ``claude attach`` clients and private tmux servers of ours still running."""
    left = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        line = " ".join(proc.info["cmdline"] or [])
        # this env's only (its CLAUDE_CONFIG_DIR): other tests and benchmarks may hold theirs
        ours = str(bg.env.config_dir) == _environ(proc)
        if ours and (" attach " in f"{line} " or ("pmux-attach-" in line and "tmux" in line)):
            left.append(f"{proc.pid} {line}")
    return left


def _no_attach_left(bg: BgClaude) -> bool:
    """Once an action returned and the session moved on, its attach is gone: a cold one at
    once, a warm one LINGER_S after the action (runtime.warm_attach)."""
    wait_until(
        lambda: not _attach_left(bg),
        LINGER_S + 10,
        what=lambda: f"attach left: {_attach_left(bg)}",
    )
    return True


def _environ(proc: psutil.Process) -> str:
    try:
        return str(proc.environ().get("CLAUDE_CONFIG_DIR", ""))
    except (psutil.Error, OSError):
        return ""


@pytest.fixture(scope="module")
def bgs(make_bg: Callable[..., BgClaude], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bg]:
    home = PmuxHome(tmp_path_factory.mktemp("pmux"))
    bg = make_bg(pmux_home=home)
    hub = make_hub(home=home.root, claude_home=bg.env.config_dir).start()
    try:
        yield Bg(bg, hub)
    finally:
        hub.stop()
    assert hub.errors == 0


@pytest.fixture(autouse=True)
def _jobs_removed(bgs: Bg) -> Iterator[None]:
    """A test that failed with its session still waiting would leave it, and its warm attach,
    to the next tests of the module (ci: one failure became three)."""
    yield
    left = [job for job in bgs.jobs if bgs.bg.agent(job) is not None]
    bgs.jobs.clear()
    for job in left:
        bgs.bg.rm(job)
    wait_until(lambda: not any(bgs.bg.agent(job) for job in left), 30, what=f"{left} removed")
    _no_attach_left(bgs.bg)


def test_every_action_goes_through_claude_attach(bgs: Bg) -> None:
    job = bgs.start("run the command", "acts")
    sid = bgs.state(job, State.NEEDS_INPUT)
    session = bgs.hub.fleet[sid]
    assert session.tmux is None and session.terminal is None

    # a peek reads the session's screen through the attach: the dialog it waits on
    shown = peek(bgs.hub, sid)
    assert shown.dialog == "Bash command"

    # deny: the CLI answers "No" and waits for a prompt; the worker runs on, no marker made
    worker = bgs.bg.worker(job)
    assert worker is not None
    act(bgs.hub, sid, "deny", record=bgs.hub.record_action)
    wait_until(lambda: bgs.status(job) == "idle", 30, what="the worker idle after deny")
    assert not list(bgs.bg.env.cwd.glob("sim-*.txt"))
    assert bgs.bg.worker(job) is not None and bgs.bg.worker(job)[0] == worker[0]  # type: ignore[index]
    assert _no_attach_left(bgs.bg)

    # send: a prompt typed into the session's own box; it asks again
    bgs.state(job, State.IDLE, State.REVIEW)
    act(bgs.hub, sid, "send", text="run the command", record=bgs.hub.record_action)
    bgs.state(job, State.NEEDS_INPUT)

    # approve: "Yes", the tool runs
    act(bgs.hub, sid, "approve", record=bgs.hub.record_action)
    wait_until(lambda: list(bgs.bg.env.cwd.glob("sim-*.txt")), 30, what="the approved marker")
    bgs.state(job, State.IDLE, State.REVIEW)

    # interrupt: Esc stops a running turn
    act(bgs.hub, sid, "send", text="stream slowly", record=bgs.hub.record_action)
    bgs.state(job, State.BUSY)
    wait_until(lambda: bgs.status(job) == "busy", 30, what="the worker busy")
    act(bgs.hub, sid, "interrupt", record=bgs.hub.record_action)
    wait_until(lambda: bgs.status(job) == "idle", 30, what="the worker idle after Esc")
    assert _no_attach_left(bgs.bg)
    sources = [t.source for t in bgs.hub.history(sid)]
    assert "action:approve" in sources and "action:deny" in sources

    # stop: claude stop <job>: the worker ends, the CLI lists it stopped
    act(bgs.hub, sid, "stop", record=bgs.hub.record_action)
    wait_until(
        lambda: (bgs.bg.agent(job) or {}).get("state") == "stopped",
        30,
        what="claude agents: stopped",
    )
    wait_until(lambda: not bgs.hub.fleet[sid].running, 30, what="the row not running")
    # remove: claude rm <job>: gone from the CLI's list. 2.1.197 may refuse a stopped job
    # ("couldn't confirm <job> was stopped": every time on 2026-12-04 under load 20, never on
    # 2026-12-05 under load 3-6): then the refusal carries the CLI's words.
    if bgs.bg.env.version == OLDEST:
        try:
            act(bgs.hub, sid, "remove", record=bgs.hub.record_action)
        except ActionError as refused:
            assert "couldn't confirm" in str(refused)
            return
    else:
        act(bgs.hub, sid, "remove", record=bgs.hub.record_action)
    wait_until(lambda: bgs.bg.agent(job) is None, 30, what="claude agents: removed")


def test_a_refused_action_types_nothing(bgs: Bg) -> None:
    def answered_hooks() -> list[str]:
        # The CLI's own reminder, a Notification (permission_prompt) ~6 s after the dialog
        # opened (later under load: once on a fresh machine it came inside this test), is no
        # answer to a key: any typed key shows as another event or a new status.
        return [event for event in bgs.bg.env.hook_events() if event != "Notification"]

    before = len(answered_hooks())
    job = bgs.start("run the command", "refuses")
    sid = bgs.state(job, State.NEEDS_INPUT)
    wait_until(lambda: bgs.status(job) == "waiting", 30, what="the worker waiting")
    # the dialog's own hook, which may land after the PID file's "waiting" made the row
    # needs-input (ci, 2.1.337 under load: counted as an answer to a key)
    wait_until(
        lambda: "PermissionRequest" in answered_hooks()[before:],
        30,
        what=lambda: f"the dialog's PermissionRequest: {answered_hooks()[before:]}",
    )
    hooks = answered_hooks()
    # a dialog other than the one on screen: refused once the attach shows the real one
    with pytest.raises(ActionError, match="dialog changed"):
        act(bgs.hub, sid, "approve", dialog="000000000000")
    # a prompt while a dialog waits: refused on the state
    with pytest.raises(ActionError, match="needs-input"):
        act(bgs.hub, sid, "send", text="hello")
    time.sleep(0.5)  # any key typed would have brought a hook (PostToolUse) or a new status
    assert bgs.status(job) == "waiting"
    assert answered_hooks() == hooks
    shown = peek(bgs.hub, sid)
    assert shown.dialog == "Bash command", shown
    dialog = parse_screen("\n".join(shown.lines)).dialog  # the peek names its title only
    assert dialog is not None and dialog.selected is not None, shown.lines
    assert dialog.selected.label == "Yes"  # no arrow reached it
    # while the dialog waits, only the hub's warm attach (runtime.warm_attach) is left
    # (started on the hub's worker thread when the dialog came: on a loaded machine later)
    claim = wait_until(lambda: claim_of(bgs.hub.home.root, job), 20, what="the warm attach's claim")
    assert all(
        line.split()[0] == str(claim["client_pid"]) or claim["folder"] in line
        for line in _attach_left(bgs.bg)
    ), _attach_left(bgs.bg)
    # pmux-widget remove <prefix>: the CLI asks the live hub (HTTP), which runs claude rm (a
    # running session too); a session that is no background one is refused with exit 2
    home, claude_dir = str(bgs.hub.home.root), str(bgs.bg.env.config_dir)
    base = ["--home", home, "--claude-home", claude_dir]
    assert cli.main([*base, "stop", "nosuchsession"]) == 2
    assert cli.main([*base, "remove", sid[:12]]) == 0
    wait_until(lambda: bgs.bg.agent(job) is None, 30, what="claude agents: removed")
    assert _no_attach_left(bgs.bg)  # the session ended: its warm attach went


def test_new_session_in_the_background(bgs: Bg, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in bgs.bg.env.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PMUX_WIDGET_CLAUDE", bgs.bg.cli)
    monkeypatch.setenv("TMUX_PANE", "%99")  # a caller in tmux: the daemon must not inherit it
    session = new_session(
        bgs.hub,
        bgs.bg.env.cwd,
        "run the command",
        where="background",
        permission_mode="default",
        name="started",
        timeout=60,
    )
    workers = [d for d in bgs.bg.env.pid_files().values() if d["sessionId"] == session.session_id]
    assert [w.get("name") for w in workers] == ["started"]
    job = workers[0]["jobId"]
    sid = bgs.state(job, State.NEEDS_INPUT)
    # its hooks can come before its PID file is read (the row is adopted then, ms later)
    row = wait_until(
        lambda: bgs.hub.fleet[sid] if bgs.hub.fleet[sid].background is not None else None,
        10,
        what="the row adopted as a background session",
    )
    assert row.tmux is None and row.background is not None and row.background.job == job
    found = bgs.bg.worker(job)
    assert found is not None and "TMUX_PANE" not in psutil.Process(found[0]).environ()
    act(bgs.hub, sid, "remove", record=bgs.hub.record_action)
    wait_until(lambda: bgs.bg.agent(job) is None, 30, what="claude agents: removed")


def test_a_question_answered_through_claude_attach(bgs: Bg) -> None:
    """``answer`` by label in a background session: the keys go through the attach, after the
    screen there shows that very question; the CLI's transcript has the answer."""
    job = bgs.start("ask me a question", "asks")
    sid = bgs.state(job, State.NEEDS_INPUT)
    wait_until(
        lambda: (q := bgs.hub.fleet[sid].question) is not None and bool(q.questions),
        30,
        what="the question from PermissionRequest",
    )
    with pytest.raises(ActionError) as refused:
        act(bgs.hub, sid, "approve")
    assert "Purple / Amber" in refused.value.reason
    act(bgs.hub, sid, "answer", options=["Amber"], record=bgs.hub.record_action)
    transcript = bgs.hub.fleet[sid].transcript_path
    assert transcript is not None
    wait_until(
        lambda: (
            '"answers":{"Which colour should the badge use?":"Amber"}'
            in Path(transcript).read_text().replace(": ", ":").replace(", ", ",")
        ),
        30,
        what="the answer in the transcript",
    )
    bgs.state(job, State.IDLE, State.REVIEW)
    assert "action:answer" in [t.source for t in bgs.hub.history(sid)]
    assert _no_attach_left(bgs.bg)


def test_a_plan_approved_through_claude_attach(bgs: Bg) -> None:
    """A background session in plan mode: ``approve`` (the choice that keeps asking for each
    edit) goes through the attach once the screen there shows that very plan; the CLI's
    transcript says approved, it leaves plan mode (the next hooks' permission_mode)."""
    job = bgs.start("make a plan", "plans", permission_mode="plan")
    sid = bgs.state(job, State.NEEDS_INPUT)
    wait_until(
        lambda: (q := bgs.hub.fleet[sid].question) is not None and bool(q.plan),
        30,
        what="the plan from PermissionRequest",
    )
    with pytest.raises(ActionError) as refused:
        act(bgs.hub, sid, "answer", options=["Yes"])
    assert "not a question" in refused.value.reason
    act(bgs.hub, sid, "approve", record=bgs.hub.record_action)
    transcript = bgs.hub.fleet[sid].transcript_path
    assert transcript is not None
    wait_until(
        lambda: "User has approved your plan" in Path(transcript).read_text(),
        30,
        what="the approval in the transcript",
    )
    bgs.state(job, State.IDLE, State.REVIEW)
    wait_until(
        lambda: bgs.hub.fleet[sid].permission_mode == "default",
        30,
        what=lambda: f"permission_mode default; it is {bgs.hub.fleet[sid].permission_mode}",
    )
    assert "action:approve" in [t.source for t in bgs.hub.history(sid)]
    assert _no_attach_left(bgs.bg)
