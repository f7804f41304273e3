"""Pending decisions (runtime.decisions) and their long-poll route, with a real hub on a real
socket and a real child process standing for the SDK's CLI (no SDK here: the real runs are
tests/real_claude/test_agent_sdk_handler.py).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from pmux_widget.core import signals as s
from pmux_widget.core.model import State
from pmux_widget.notebook.agent_sdk import _over_http
from pmux_widget.runtime import decisions
from pmux_widget.runtime.actions import ActionError, act, dialog_token
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

from .helpers import wait_until

SID = "5f0c3a2e-8d41-4b7a-9c6e-2b1d7e9f4a10"
ASK = {
    "questions": [
        {
            "question": "Which colour?",
            "header": "Colour",
            "multiSelect": False,
            "options": [{"label": "Purple"}, {"label": "Amber"}],
        },
        {
            "question": "Which states?",
            "header": "States",
            "multiSelect": True,
            "options": [{"label": "busy"}, {"label": "review"}],
        },
    ]
}


def _pending(tool: str = "AskUserQuestion", tool_input: dict[str, Any] | None = None):
    return decisions.Pending(SID, "toolu_1", tool, tool_input if tool_input is not None else ASK)


def test_each_action_is_the_decision_it_says():
    bash = _pending("Bash", {"command": "touch x"})
    assert decisions.decision_for(bash, "approve", where="here").behavior == "allow"
    deny = decisions.decision_for(bash, "deny", text="not now", where="the panel")
    assert deny.behavior == "deny" and not deny.interrupt
    assert deny.message == "Denied by the user, from pmux-widget (the panel): not now"
    stop = decisions.decision_for(bash, "interrupt", where="here")
    assert stop.behavior == "deny" and stop.interrupt
    with pytest.raises(ActionError):
        decisions.decision_for(bash, "answer", options=["Amber"])
    with pytest.raises(ActionError):
        decisions.decision_for(bash, "send", text="hi")


def test_answers_map_labels_to_their_questions():
    ask = _pending()
    got = decisions.decision_for(ask, "answer", options=["review", "Amber", "busy"])
    assert got.behavior == "allow" and got.updated_input is not None
    assert got.updated_input["answers"] == {
        "Which colour?": "Amber",
        "Which states?": "review, busy",
    }
    assert got.updated_input["questions"] == ASK["questions"]  # the input, answers added
    other = decisions.decision_for(ask, "answer", options=["busy"], text="Teal")
    assert other.updated_input is not None
    assert other.updated_input["answers"]["Which colour?"] == "Teal"
    for options, text, words in [
        (["Green"], None, "is not an option"),
        (["Purple", "Amber"], None, "takes one answer"),
        (["Amber"], None, "'Which states.' is not answered"),
        ([], "Teal", "exactly one question"),
    ]:
        with pytest.raises(ActionError, match=words):
            decisions.decision_for(ask, "answer", options=options, text=text)
    with pytest.raises(ActionError, match="answer it with one of its options"):
        decisions.decision_for(ask, "approve")


@pytest.fixture
def hub(tmp_path) -> Iterator[Hub]:
    hub = Hub(home=tmp_path / "pmux", claude_home=tmp_path / "claude").start()
    yield hub
    hub.stop()


@pytest.fixture
def cli() -> Iterator[subprocess.Popen[bytes]]:
    """A child of this process, as the SDK's CLI is of the program that runs it."""
    proc = subprocess.Popen(["sleep", "120"])
    yield proc
    proc.kill()
    proc.wait(5)


def _asking(hub: Hub, pid: int, at: int | None = None, entrypoint: str | None = None) -> None:
    """The row of a run of ``pid`` that asks (PID file + PermissionRequest), on the hub."""
    at = at or now_ms()
    record = s.PidRecord(
        pid=pid, session_id=SID, cwd="/tmp", started_at=1, status="busy", entrypoint=entrypoint
    )
    hub.call(lambda: hub.apply(s.PidFile(at=at, record=record)))
    ask = s.parse_hook(
        {
            "session_id": SID,
            "hook_event_name": "PermissionRequest",
            "tool_name": "AskUserQuestion",
            "tool_input": ASK,
        },
        at=at + 1,
    )
    assert not isinstance(ask, s.Invalid)
    hub.call(lambda: hub.apply(ask))
    assert hub.fleet[SID].state is State.NEEDS_INPUT


def _poll(hub: Hub, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{hub.port}/api/decisions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"X-Pmux-Token": hub.token},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_the_route_refuses_bad_bodies_and_unknown_programs(hub):
    assert _poll(hub, {"pid": "x"})[0] == 400
    status, answer = _poll(hub, {"pid": 1, "tool_use_id": "t", "tool_name": "Bash", "input": {}})
    assert status == 409 and "no running Claude session" in answer["error"]


def test_a_call_waits_until_an_action_decides_it_once(hub, cli, tmp_path):
    import os

    _asking(hub, cli.pid)
    got: dict[str, Any] = {}
    body = {
        "pid": os.getpid(),
        "tool_use_id": "toolu_1",
        "tool_name": "AskUserQuestion",
        "input": ASK,
    }
    waiter = threading.Thread(target=lambda: got.update(r=_poll(hub, body)))
    waiter.start()
    pending = wait_until(lambda: hub.decisions.waiting(SID), 10, what="the call to wait")
    path = hub.home.root / "decisions" / f"{SID}.json"
    wait_until(path.exists, 5, what="the call's published file")
    published = json.loads(path.read_text())
    assert published["port"] == hub.port and published["tool_use_id"] == "toolu_1"
    token = dialog_token(hub.fleet[SID])
    with pytest.raises(ActionError, match="moved on"):
        decisions.answer(
            hub, hub.fleet[SID], "answer", options=["Amber", "busy"], token="x", shown=token
        )  # type: ignore[arg-type]
    decisions.answer(
        hub, hub.fleet[SID], "answer", options=["Amber", "busy"], token=token, shown=token
    )  # type: ignore[arg-type]
    waiter.join(10)
    status, answer = got["r"]
    assert status == 200 and answer["behavior"] == "allow"
    assert answer["updated_input"]["answers"] == {"Which colour?": "Amber", "Which states?": "busy"}
    assert pending.future.done() and hub.decisions.waiting(SID) is None
    assert not (hub.home.root / "decisions" / f"{SID}.json").exists()
    with pytest.raises(ActionError):  # nothing waits any more: the usual path refuses it
        act(hub, SID, "deny")


def test_a_waiter_that_goes_away_leaves_no_call(hub, cli):
    _asking(hub, cli.pid)

    async def wait_then_cancel() -> None:
        task = asyncio.ensure_future(
            _over_http(hub.port, hub.home, "Bash", {"command": "touch x"}, "toolu_2")
        )
        # deadlines, not waits: a loaded machine (load 15) took over the former 4 s here once
        deadline = time.monotonic() + 30
        while hub.decisions.waiting(SID) is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert hub.decisions.waiting(SID) is not None, "the call never registered"
        task.cancel()  # the cell interrupted, the run ended: its socket closes
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(wait_then_cancel())
    wait_until(lambda: hub.decisions.waiting(SID) is None, 30, what="the call to be dropped")
    assert not (hub.home.root / "decisions" / f"{SID}.json").exists()


def test_a_hub_that_stops_answers_its_waiting_calls(tmp_path, cli):
    import os

    hub = Hub(home=tmp_path / "pmux", claude_home=tmp_path / "claude").start()
    _asking(hub, cli.pid)
    got: dict[str, Any] = {}

    async def wait() -> None:
        got["d"] = await _over_http(hub.port, hub.home, "Bash", {}, "toolu_3")

    waiter = threading.Thread(target=lambda: asyncio.run(wait()))
    waiter.start()
    wait_until(lambda: hub.decisions.waiting(SID), 10, what="the call to wait")
    hub.stop()
    waiter.join(10)
    assert not waiter.is_alive() and got["d"] is None  # the handler asks elsewhere, or refuses
    assert os.getpid()


def test_another_hub_checks_the_token_it_showed_and_forwards_to_the_call(tmp_path, cli):
    """Two hubs over one home (a kernel's and the Jupyter server's): the call waits in
    ``holder``; ``other`` has its own row of the session, entered needs-input at its own
    moment (its token differs from the holder's). An action on ``other`` with other's token
    reaches the call, once; a stale one is refused there; a forwarded action that names
    another call is refused by the holder."""
    import os

    holder = Hub(home=tmp_path / "pmux", claude_home=tmp_path / "claude").start()
    other = Hub(home=tmp_path / "pmux", claude_home=tmp_path / "claude").start()
    try:
        # the news reached each hub at its own moment
        _asking(holder, cli.pid)
        _asking(other, cli.pid, at=now_ms() - 2000)
        got: dict[str, Any] = {}
        body = {"pid": os.getpid(), "tool_use_id": "toolu_9", "tool_name": "Bash", "input": {}}
        waiter = threading.Thread(target=lambda: got.update(r=_poll(holder, body)))
        waiter.start()
        pending = wait_until(lambda: holder.decisions.waiting(SID), 10, what="the call to wait")
        path = holder.home.root / "decisions" / f"{SID}.json"
        wait_until(path.exists, 5, what="the call's published file")
        shown = dialog_token(other.fleet[SID])
        assert shown != dialog_token(holder.fleet[SID])
        with pytest.raises(ActionError, match="moved on"):
            act(other, SID, "deny", token=shown + "x")
        with pytest.raises(ActionError, match="moved on"):  # the holder: not that call
            act(holder, SID, "deny", dialog="call:toolu_other")
        assert not pending.future.done()
        act(other, SID, "deny", text="not this", token=shown)
        waiter.join(10)
        status, answer = got["r"]
        assert status == 200 and answer["behavior"] == "deny" and "not this" in answer["message"]
        with pytest.raises(ActionError):
            act(other, SID, "deny", token=shown)
    finally:
        other.stop()
        holder.stop()


def test_an_sdk_run_that_asks_before_its_call_registers_is_answered_once_it_does(hub, cli):
    """The hook (or PID file) can tell a hub that an SDK run asks before its call registers:
    an approve meanwhile looks for the call a moment and reaches it."""
    import os

    _asking(hub, cli.pid, entrypoint="sdk-py")
    got: dict[str, Any] = {}
    body = {
        "pid": os.getpid(),
        "tool_use_id": "toolu_5",
        "tool_name": "AskUserQuestion",
        "input": ASK,
    }
    late = threading.Timer(0.5, lambda: got.update(r=_poll(hub, body)))  # the call, late
    late.start()
    try:
        assert hub.decisions.waiting(SID) is None
        act(hub, SID, "answer", options=["Amber", "busy"])
        late.join(10)
        assert got["r"][0] == 200 and got["r"][1]["behavior"] == "allow"
        assert got["r"][1]["updated_input"]["answers"]["Which colour?"] == "Amber"
    finally:
        late.cancel()


def test_an_sdk_run_nothing_of_ours_answers_is_refused_saying_why(hub, cli):
    _asking(hub, cli.pid, entrypoint="sdk-py")
    with pytest.raises(ActionError, match="its program answers: no call waits on pmux-widget"):
        act(hub, SID, "approve")
