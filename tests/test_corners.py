"""Issue 11, "Correct in every corner": one test per item, named after it.

Each failed before its fix. Pure rules use the tracker's own ``Run`` driver; the ones that
need real files, processes or a hub start real ones.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmux_widget.agents.claude.paths import ClaudeHome, transcript_path_for
from pmux_widget.core import contract
from pmux_widget.core import signals as s
from pmux_widget.core.model import Change, Session, State, TmuxLocation, Tracking
from pmux_widget.core.timeline import ended_at
from pmux_widget.core.tracker import BOOT_WINDOW_MS, reduce
from pmux_widget.hooks.spool import write_spool_entry
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.boot import process_runs
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.snapshot import compute_snapshot
from pmux_widget.runtime.sources.poller import next_poll_s, probe
from pmux_widget.runtime.store import Store
from pmux_widget.system.clock import now_ms

from .helpers import get_sessions, post_hook, request, wait_until
from .test_tracker import SID, Run, busy_run
from .test_tracker_properties import signals as any_signal

LIVE = "11111111-2222-3333-4444-555555555555"
ENDED = "66666666-7777-8888-9999-000000000000"


@pytest.fixture
def hub(homes):
    hub = Hub().start()
    yield hub
    hub.stop()


def hook(hub: Hub, sid: str, event: str, **fields) -> None:
    payload = {"session_id": sid, "hook_event_name": event, "cwd": "/tmp/acme", **fields}
    assert post_hook(hub.port, hub.token, payload) == 204


# ------------------------------------------------------------------- item 9: compacting


def test_item9_stop_clears_compacting():
    run = busy_run()
    run.hook("PreCompact", at=run.now, trigger="auto")
    assert run.session.compacting is True
    run.hook("Stop", at=run.now + 10, last_assistant_message="done")  # no PostCompact came
    assert run.session.compacting is False
    assert run.session.tracking.compacting_since == 0
    assert run.state is State.REVIEW


def test_item9_stopfailure_and_sessionstart_compact_clear_compacting():
    run = busy_run()
    run.hook("PreCompact", at=run.now, trigger="manual")
    run.hook("SessionStart", at=run.now + 5, source="compact")  # fired once it is done
    assert run.session.compacting is False and run.state is State.BUSY
    run.hook("PreCompact", at=run.now + 10, trigger="auto")
    run.hook("StopFailure", at=run.now + 20, error="rate_limit")
    assert run.session.compacting is False


# ----------------------------------------------- item 2: one definition of counts, live lists


def test_item2_api_sessions_lists_live_sessions_and_counts_them_like_counts(hub):
    hook(hub, LIVE, "UserPromptSubmit", prompt="work")
    hook(hub, ENDED, "Stop", last_assistant_message="done")
    hook(hub, ENDED, "SessionEnd", reason="prompt_input_exit")
    data = get_sessions(hub.port, hub.token)
    assert [s["session_id"] for s in data["sessions"]] == [LIVE]
    assert data["counts"] == contract.counts(hub.fleet.values())
    assert data["counts"]["review"] == 0 and data["counts"]["idle"] == 0
    # the ended one is still there when asked for; the counts stay the live ones'
    status, body, _ = request(
        hub.port, "GET", "/api/sessions?ended=1", headers={"X-Pmux-Token": hub.token}
    )
    both = json.loads(body)
    assert status == 200 and set(both) == {"sessions", "counts"}
    assert {s["session_id"] for s in both["sessions"]} == {LIVE, ENDED}
    assert both["counts"] == data["counts"]


def test_item2_offline_status_lists_live_sessions_unless_all(hub, homes):
    hook(hub, LIVE, "UserPromptSubmit", prompt="work")
    hook(hub, ENDED, "Stop", last_assistant_message="done")
    hook(hub, ENDED, "SessionEnd", reason="prompt_input_exit")
    hub.stop()
    home = homes.pmux
    offline = compute_snapshot(home, homes.claude)
    assert [s["session_id"] for s in offline["sessions"]] == [LIVE]
    assert offline["counts"]["idle"] == 0 and offline["counts"]["review"] == 0
    every = compute_snapshot(home, homes.claude, include_ended=True)
    assert {s["session_id"] for s in every["sessions"]} == {LIVE, ENDED}
    assert every["counts"] == offline["counts"]


# -------------------------------------------------------- item 3: one naming rule everywhere


def test_item3_pid_file_then_hook_from_a_subfolder_names_project_and_workspace_alike():
    run = Run()
    record = s.PidRecord(pid=4242, session_id=SID, cwd="/w/repo", started_at=1, status="idle")
    run(s.PidFile(at=1_000, record=record, project="repo"))
    assert (run.session.project, run.session.workspace) == ("repo", "repo")
    # the hook comes from repo/src (no project named for it: the tracker's fallback)
    run.hook("UserPromptSubmit", at=2_000, cwd="/w/repo/src", prompt="go")
    assert run.session.workspace == run.session.project
    # a tmux session, once located, names the workspace; a later hook keeps it
    run(s.Locate(at=3_000, session_id=SID, tmux=TmuxLocation("dev", "1", "%3")))
    run(s.Stop(at=4_000, session_id=SID, cwd="/w/repo/src", project="repo"))
    assert (run.session.project, run.session.workspace) == ("repo", "dev")


def test_item3_offline_status_names_a_hookless_subfolder_by_git_root_like_the_hub(homes, tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    body = {"session_id": LIVE, "hook_event_name": "UserPromptSubmit", "cwd": str(repo / "src")}
    write_spool_entry(homes.pmux, json.dumps(body).encode() + b"\n", sent=now_ms())
    offline = compute_snapshot(homes.pmux, homes.claude)
    [row] = offline["sessions"]
    assert (row["project"], row["workspace"]) == ("repo", "repo")
    hub = Hub().start()  # the hub replays the same spooled hook: the same names
    try:
        [live] = get_sessions(hub.port, hub.token)["sessions"]
        assert (live["project"], live["workspace"]) == ("repo", "repo")
    finally:
        hub.stop()


# ------------------------------------------- item 1: a reused pid keeps no dead session alive


@pytest.fixture
def stranger():
    """A live process that is not the session's: it started after the session was last seen
    alive (the restored session's pid, reused after a reboot)."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def restored(pid: int, state: State, last_seen: int) -> Session:
    return Session(
        session_id=LIVE,
        state=state,
        running=True,
        state_since=last_seen,
        cwd="/tmp/acme",
        project="acme",
        pid=pid,
        source="hook:PermissionRequest",
        tracking=Tracking(first_seen=last_seen, last_hook_at=last_seen, active_at=last_seen),
    )


def test_item1_reused_pid_is_not_the_sessions_process(stranger):
    hour_ago = now_ms() - 3_600_000
    session = restored(stranger.pid, State.NEEDS_INPUT, hour_ago)
    assert process_runs(session) is False
    facts = probe([session])  # the poller: neither alive, nor its ports and pane
    assert facts["alive"] == {LIVE: False} and LIVE not in facts["where"]
    # the same pid, known since before the process started: it is the session's own
    assert process_runs(restored(stranger.pid, State.NEEDS_INPUT, now_ms())) is True


def test_item1_reused_pid_restored_session_ends_instead_of_staying_running(homes, stranger):
    store = Store(homes.pmux.db_path)
    session = restored(stranger.pid, State.REVIEW, now_ms() - 3_600_000)
    store.apply([Change(LIVE, None, session)], now_ms())
    store.close()
    hub = make_hub(home=homes.pmux.root, claude_home=homes.claude).start()
    try:
        wait_until(
            lambda: hub.fleet[LIVE].ended, timeout=30, what="the session of a reused pid ends"
        )
        after = hub.fleet[LIVE]
        assert after.running is False and after.ports == ()
        assert get_sessions(hub.port, hub.token)["counts"]["attention"] == 0
    finally:
        hub.stop()


# --------------------------------------------------------------------- item 10: smaller ones


@pytest.fixture
def api_hub(homes):
    import pmux_widget

    hub = pmux_widget.start()
    yield hub
    pmux_widget.stop()


def test_item10_doctor_exits_0_right_after_a_good_install_with_no_hub(homes):
    from .test_hook_path import run_cli

    assert run_cli(homes, "install").returncode == 0
    result = run_cli(homes, "doctor")
    assert result.returncode == 0, result.stdout
    assert "note hub: no hub running" in result.stdout  # still said, as information


def test_item10_to_dataframe_stops_an_ended_sessions_last_interval(api_hub):
    import pmux_widget

    hook(api_hub, ENDED, "UserPromptSubmit", prompt="go")
    hook(api_hub, ENDED, "SessionEnd", reason="prompt_input_exit")
    first = pmux_widget.to_dataframe()
    wait_until(lambda: now_ms() > ended_at(api_hub.fleet[ENDED]) + 50, what="time passing")
    second = pmux_widget.to_dataframe()
    assert list(first.duration_s) == list(second.duration_s)  # it does not grow any more
    assert first.end.iloc[-1] == second.end.iloc[-1]


def test_item10_on_callbacks_skip_silent_replay_unless_asked(homes):
    import pmux_widget

    seen: list[str] = []
    replayed: list[str] = []
    hub = pmux_widget.start()
    try:
        # a silent step (as a replayed spool's or a recovery's), then a live one
        pmux_widget.on("change", lambda s: seen.append(s.session_id))
        pmux_widget.on("change", lambda s: replayed.append(s.session_id), replay=True)
        silent = s.Stop(at=now_ms(), live=False, session_id=ENDED, cwd="/tmp/acme")
        hub.call(lambda: hub.apply(silent))
        hook(hub, LIVE, "UserPromptSubmit", prompt="now")  # live: both hear it
        wait_until(lambda: LIVE in seen and LIVE in replayed, what="the live change")
        assert ENDED in replayed and ENDED not in seen
    finally:
        pmux_widget.stop()


def test_item10_wait_for_any_session_ignores_ended_ones(api_hub):
    import pmux_widget

    hook(api_hub, ENDED, "SessionEnd", reason="prompt_input_exit")
    assert api_hub.fleet[ENDED].state is State.IDLE and api_hub.fleet[ENDED].ended
    with pytest.raises(TimeoutError):
        pmux_widget.wait_for(None, "idle", timeout=0.3)
    hook(api_hub, LIVE, "SessionStart", source="startup")
    assert pmux_widget.wait_for(None, "idle", timeout=5).session_id == LIVE


def test_item10_sidebar_leaks_no_widget(api_hub):
    import pmux_widget

    pmux_widget.sidebar()
    listening = api_hub.call(lambda: len(api_hub._listeners))
    for _ in range(3):
        pmux_widget.sidebar()
    assert api_hub.call(lambda: len(api_hub._listeners)) == listening


def test_item10_untyped_notification_flips_to_needs_input_only_if_nothing_contradicts():
    old_cli = busy_run()
    old_cli.hook("Notification", at=old_cli.now, message="Claude needs your permission")
    assert old_cli.state is State.NEEDS_INPUT  # an old CLI: kept
    new_cli = busy_run()
    new_cli.pid("busy", at=new_cli.now - 500)  # a PID file that reports statuses says busy
    new_cli.hook("Notification", at=new_cli.now, message="something")
    assert new_cli.state is State.BUSY and not new_cli.notifications()


# ------------------------------------------------ item 5: claude -p and SDK runs never notify


def print_run_pid(run: Run, at: int, **fields) -> None:
    record = s.PidRecord(pid=1166, session_id=SID, cwd="/w/p", started_at=1, **fields)
    run(s.PidFile(at=at, record=record, project="p"))


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"kind": "interactive", "entrypoint": "sdk-cli"}, State.IDLE),  # claude -p (recorded)
        ({"kind": "interactive", "entrypoint": "sdk-py"}, State.IDLE),
        ({"kind": "daemon", "entrypoint": "cli"}, State.IDLE),
        ({"kind": "interactive", "entrypoint": "cli"}, State.REVIEW),  # a person sits there
        ({}, State.REVIEW),  # an older PID file: nothing says otherwise
    ],
)
def test_item5_print_and_sdk_runs_do_not_notify_finished(fields, expected):
    run = Run()
    run.hook("SessionStart", at=1_000, source="startup")
    print_run_pid(run, 1_020, **fields)
    run.hook("UserPromptSubmit", at=1_300, prompt="say hi")
    run.hook("Stop", at=2_000, last_assistant_message="Hi!")
    assert run.state is expected
    assert bool(run.notifications()) is (expected is State.REVIEW)
    run.hook("SessionEnd", at=2_060, reason="other")
    assert run.session.ended and run.state is State.IDLE


def test_item5_hookless_print_run_ends_idle_not_review():
    run = Run()
    print_run_pid(run, 1_000, kind="interactive", entrypoint="sdk-cli", status="busy")
    print_run_pid(run, 2_000, kind="interactive", entrypoint="sdk-cli", status="idle")
    assert run.state is State.IDLE and not run.notifications()


def test_item5_recorded_print_run_through_the_tracker_raises_no_notification():
    """tests/fixtures/real/print: the real CLI's ``claude -p`` (its PID file, then hooks)."""
    real = Path(__file__).parent / "fixtures" / "real" / "2.1.197" / "print"
    [record] = [
        s.parse_pid_record(line)
        for line in (real / "pid-files.jsonl").read_text().splitlines()
        if line.strip() not in ("", "null")
    ]
    assert isinstance(record, s.PidRecord) and record.entrypoint == "sdk-cli"
    hooks = [json.loads(line) for line in (real / "hooks.jsonl").read_text().splitlines()]
    run = Run()
    for i, body in enumerate(hooks):
        parsed = s.parse_hook(body, at=1_000 + i * 100)
        assert not isinstance(parsed, s.Invalid)
        run(parsed)
        if i == 0:  # recorded: the PID file 18 ms after SessionStart
            run(s.PidFile(at=1_018, record=record, project="project"))
    assert not run.notifications()
    assert run.fleet[record.session_id].ended


# ------------------------------------------------ item 6: the tmux pane at once, not 30 s late


@pytest.fixture
def tmux_pane(tmp_path, monkeypatch):
    """A real tmux server on a private socket, one pane running a stand-in for Claude."""
    socket = tmp_path / "tmux.sock"
    monkeypatch.setenv("PMUX_WIDGET_TMUX_SOCKETS", str(socket))
    base = ["tmux", "-S", str(socket), "-f", "/dev/null"]
    subprocess.run(
        [*base, "new-session", "-d", "-s", "item6", "-c", str(tmp_path), "exec sleep 300"],
        check=True,
    )
    try:
        out = subprocess.run(
            [*base, "display-message", "-p", "-t", "item6", "#{pane_pid} #{pane_id}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        yield int(out[0]), out[1]
    finally:
        subprocess.run([*base, "kill-server"], check=False)


def test_item6_new_sessions_pane_is_located_at_once_not_at_the_next_poll(homes, tmux_pane):
    from .test_sources import PidFile

    pid, pane_id = tmux_pane
    hub = make_hub(home=homes.pmux.root, claude_home=homes.claude).start()
    try:
        PidFile(homes.claude, pid, session_id=LIVE).status("idle")
        located = wait_until(
            lambda: hub.fleet.get(LIVE) and hub.fleet[LIVE].tmux,
            timeout=10,  # the poll would take 30 s
            what="the pane from the process's own TMUX_PANE",
        )
        assert (located.session, located.pane) == ("item6", pane_id)
        assert hub.fleet[LIVE].workspace == "item6"
    finally:
        hub.stop()


def test_item6_pane_path_is_only_a_fallback_cwd():
    run = Run()
    run(s.SessionStart(at=1, session_id=SID))  # no cwd in this hook
    where = TmuxLocation("dev", "1", "%3", title="✳ fixing tests")
    run(s.Locate(at=2, session_id=SID, tmux=where, cwd="/w/repo", project="repo"))
    assert (run.session.cwd, run.session.project, run.session.workspace) == (
        "/w/repo",
        "repo",
        "dev",
    )
    assert run.session.tmux.title == "✳ fixing tests"
    run(s.Locate(at=3, session_id=SID, tmux=where, cwd="/elsewhere"))
    assert run.session.cwd == "/w/repo"  # never over what a signal said


# -------------------------- item 7: the poll's tier counts live sessions; Claudes in panes


def test_item7_poll_tier_counts_live_sessions_only(monkeypatch):
    monkeypatch.delenv("PMUX_WIDGET_POLL_SECONDS", raising=False)
    ended = Tracking(ended=True)
    fleet = {f"old-{i}": Session(f"old-{i}", tracking=ended) for i in range(40)}
    fleet[LIVE] = Session(LIVE, running=True)
    assert next_poll_s(fleet) == 30.0  # one live session, forty in the history


def test_item7_claude_in_a_pane_with_neither_hooks_nor_pid_file_is_found(
    homes, claude_in_a_pane, monkeypatch
):
    monkeypatch.setenv("PMUX_WIDGET_POLL_SECONDS", "0.3")
    pid, work = claude_in_a_pane
    hub = make_hub(home=homes.pmux.root, claude_home=homes.claude).start()
    try:
        transcript = transcript_path_for(ClaudeHome.resolve(homes.claude), str(work), LIVE)
        transcript.parent.mkdir(parents=True)
        transcript.write_text("")  # the CLI creates it with the first prompt
        found = wait_until(
            lambda: hub.fleet.get(LIVE), timeout=10, what="the Claude in the pane found"
        )
        assert found.pid == pid and found.running and found.cwd == str(work)
        wait_until(lambda: hub.fleet[LIVE].tmux, timeout=10, what="its pane")
        assert hub.fleet[LIVE].tmux.session == "claude-pane"
    finally:
        hub.stop()


def _as_print_run(signal: s.Signal) -> s.Signal:
    if isinstance(signal, s.PidFile):
        record = dataclasses.replace(signal.record, kind="interactive", entrypoint="sdk-cli")
        return dataclasses.replace(signal, record=record)
    return signal


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(any_signal().map(_as_print_run), max_size=40))
def test_item5_a_session_nobody_sits_at_never_notifies_finished(sequence):
    """Whatever the order (hooks, PID files, transcripts, polls, restarts): once a PID file
    said ``claude -p``, the session never enters review with a notification."""
    fleet: dict[str, Session] = {}
    now = 10_000
    for signal in sequence:
        now += 1_000
        step = reduce(fleet, signal, now)
        for change in step.changes:
            before = fleet.get(change.session_id)
            if before is not None and before.tracking.interactive is False:
                assert change.notification is None or change.after.state is State.NEEDS_INPUT
        fleet = step.sessions
        if isinstance(signal, s.PidFile):  # the PID file said so: remembered
            assert fleet[signal.session_id].tracking.interactive is False


def test_item6_a_pane_whose_claude_exited_ends_its_pidless_session():
    run = Run()
    run.hook("SessionStart", at=1_000, source="startup", pane="%7")  # no pid: hooks only
    run.hook("Stop", at=2_000, last_assistant_message="done")
    later = run.now + BOOT_WINDOW_MS
    run(s.PollTick(at=later, exited=frozenset({SID})), now=later)
    assert not run.session.ended  # one look is not proof
    run(s.PollTick(at=later + 1, exited=frozenset()), now=later + 1)  # Claude is back
    run(s.PollTick(at=later + 2, exited=frozenset({SID})), now=later + 2)
    assert not run.session.ended  # the strikes start over
    run(s.PollTick(at=later + 3, exited=frozenset({SID})), now=later + 3)
    assert run.session.ended and run.session.running is False


def test_item6_pane_running_a_shell_again_is_told_apart_from_one_running_claude(
    tmp_path, monkeypatch
):
    socket = tmp_path / "tmux.sock"
    monkeypatch.setenv("PMUX_WIDGET_TMUX_SOCKETS", str(socket))
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    shutil.copy("/bin/sleep", fake)
    base = ["tmux", "-S", str(socket), "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-s", "a", f"exec {fake} 300"], check=True)
    subprocess.run([*base, "new-window", "-d", "-t", "a", "exec sleep 300"], check=True)
    try:
        listed = subprocess.run(
            [*base, "list-panes", "-s", "-t", "a", "-F", "#{pane_id} #{pane_pid}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        ids, pids = listed[0::2], [int(p) for p in listed[1::2]]
        for pid, name in zip(pids, ("claude", "sleep"), strict=True):
            wait_until(lambda p=pid, n=name: psutil.Process(p).name() == n, what="the exec")
        with_claude, without = (
            Session(sid, running=True, tracking=Tracking(pane=pane))
            for sid, pane in zip((LIVE, ENDED), ids, strict=True)
        )
        facts = probe([with_claude, without])
        assert facts["exited"] == frozenset({ENDED})
    finally:
        subprocess.run([*base, "kill-server"], check=False)


@pytest.fixture
def fake_claude(tmp_path):
    """Start a process named ``claude`` (a copy of this Python) with the given args/env."""
    exe = tmp_path / "bin" / "claude"
    exe.parent.mkdir(exist_ok=True)
    shutil.copy(os.path.realpath(sys.executable), exe)
    started: list[subprocess.Popen] = []

    def start(*args: str, env: dict[str, str] | None = None) -> int:
        code = "import time; time.sleep(300)"
        proc = subprocess.Popen([str(exe), "-c", code, *args], env={**os.environ, **(env or {})})
        started.append(proc)
        wait_until(lambda: psutil.Process(proc.pid).name() == "claude", what="the process")
        return proc.pid

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    ("args", "env"),
    [(("-p", "say hi"), {}), ((), {"CLAUDE_CODE_ENTRYPOINT": "sdk-py"})],
    ids=["claude -p", "sdk"],
)
def test_item5_no_pid_file_print_or_sdk_run_is_told_by_its_process(hub, fake_claude, args, env):
    pid = fake_claude(*args, env=env)
    notes: list = []
    hub.add_listener(lambda changes, fleet: notes.extend(c for c in changes if c.notification))
    headers = {"X-Pmux-Ppid": str(pid)}
    for event, fields in (
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": "say hi"}),
        ("Stop", {"last_assistant_message": "Hi!"}),
    ):
        body = {"session_id": LIVE, "hook_event_name": event, "cwd": "/tmp/acme", **fields}
        assert post_hook(hub.port, hub.token, body, **headers) == 204
    session = hub.fleet[LIVE]
    assert session.pid == pid and session.state is State.IDLE
    assert hub.call(lambda: list(notes)) == []


def test_item5_interactive_claude_without_pid_file_still_notifies(hub, fake_claude):
    pid = fake_claude()
    for event in ("UserPromptSubmit", "Stop"):
        body = {"session_id": LIVE, "hook_event_name": event, "cwd": "/tmp/acme"}
        assert post_hook(hub.port, hub.token, body, **{"X-Pmux-Ppid": str(pid)}) == 204
    assert hub.fleet[LIVE].state is State.REVIEW


def test_item1_reused_pid_in_a_tmux_pane_does_not_take_that_pane(homes, tmux_pane):
    pid, _ = tmux_pane  # started now, in a pane: a stranger to the restored session
    store = Store(homes.pmux.db_path)
    session = restored(pid, State.NEEDS_INPUT, now_ms() - 3_600_000)
    store.apply([Change(LIVE, None, session)], now_ms())
    store.close()
    hub = make_hub(home=homes.pmux.root, claude_home=homes.claude).start()
    try:
        wait_until(lambda: hub.fleet[LIVE].ended, timeout=30, what="the session ends")
        assert hub.fleet[LIVE].tmux is None and hub.fleet[LIVE].workspace != "item6"
    finally:
        hub.stop()


def _in_folder(drawn: tuple[s.Signal, str]) -> s.Signal:
    signal, cwd = drawn
    if isinstance(signal, s.HookSignal | s.TranscriptUpdate):
        return dataclasses.replace(signal, cwd=cwd)
    if isinstance(signal, s.PidFile):
        return dataclasses.replace(signal, record=dataclasses.replace(signal.record, cwd=cwd))
    return signal


_FOLDERS = st.sampled_from(["/w/repo", "/w/repo/src", "/w/other"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(any_signal(), _FOLDERS).map(_in_folder), max_size=40))
def test_item3_project_and_workspace_never_disagree_outside_tmux(sequence):
    fleet: dict[str, Session] = {}
    now = 10_000
    for signal in sequence:
        now += 1_000
        fleet = reduce(fleet, signal, now).sessions
        for session in fleet.values():
            if session.tmux is None and session.project is not None:
                assert session.workspace == session.project, session
