"""Issue 11, "Correct in every corner": one test per item, named after it.

Each failed before its fix. Pure rules use the tracker's own ``Run`` driver; the ones that
need real files, processes or a hub start real ones.
"""

from __future__ import annotations

import json

import pytest

from pmux_widget.core import contract
from pmux_widget.core import signals as s
from pmux_widget.core.model import State, TmuxLocation
from pmux_widget.hooks.spool import write_spool_entry
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.snapshot import compute_snapshot
from pmux_widget.system.clock import now_ms

from .helpers import get_sessions, post_hook, request
from .test_tracker import SID, Run, busy_run

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
