"""An Agent SDK run's waiting call decided through another hub of the fleet (issue 35).

The program's own hub (``pmux_widget.start()`` in this process, as a kernel's) holds the call;
``pmux-widget serve --fleet`` in another process, over the same homes, is the machine's
publishing hub. A fleet reader sees the row (through a real ``nats-server -js``) and sends
approve on ``pmux.<host>.actions`` with the dialog token it saw: ``serve`` answers it, forwards
the decision to the hub that holds the call (``decisions/<sid>.json``), and the call is
allowed exactly once; the same request again, and a stale token, are refused and reach
nothing.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pmux_widget
from pmux_widget import fleet
from pmux_widget.core.model import State
from pmux_widget.notebook import api

from ..helpers import wait_until
from ..nats_server import NatsServer, nats_server_binary
from .sdk_runs import SdkRun, sdk_options

pytest.importorskip("nats")
pytestmark = pytest.mark.skipif(nats_server_binary() is None, reason="nats-server not installed")

HOST = "sdk-box"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path / "nats" / "store").start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def hubs(sdk_env, broker, monkeypatch) -> Iterator[tuple[Any, subprocess.Popen[str]]]:
    """This process's hub (the program's: it holds the call) and ``serve --fleet`` (the
    machine's publishing hub), over the same homes."""
    env, pmux_home = sdk_env
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(pmux_home.root))
    own = pmux_widget.start(home=pmux_home.root, claude_home=env.config_dir)
    argv = [sys.executable, "-m", "pmux_widget", "--home", str(pmux_home.root)]
    argv += ["--claude-home", str(env.config_dir), "serve", "--fleet", broker.url]
    argv += ["--host-name", HOST]
    serve = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert serve.stdout is not None
        line = serve.stdout.readline()
        assert "pmux-widget hub on" in line, line
        yield own, serve
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(15)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait(5)
        api.stop()
    assert own.errors == 0


def _token(row: dict[str, Any]) -> str:
    """The dialog token of a row as a fleet reader sees it (runtime.actions.dialog_token)."""
    return f"{row['state']}:{row['state_since']}:{row['tool_summary'] or ''}"


def test_the_fleet_approves_a_call_that_waits_in_another_hub_once(sdk_env, broker, hubs):
    env, pmux_home = sdk_env
    own, _serve = hubs
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid = wait_until(lambda: run.session_id, 90, what="the SDK's init message")
    pending = wait_until(lambda: own.decisions.waiting(sid), 60, what="the call to wait here")
    published = pmux_home.root / "decisions" / f"{sid}.json"
    wait_until(published.exists, 5, what="the call's published file")

    reader = fleet.Subscriber(broker.url).start(timeout=15)
    try:
        row = wait_until(
            lambda: (
                (r := reader.get(HOST, sid)) is not None
                and r.get("state") == "needs-input"
                and r.get("tool_summary")
                and r
            ),
            30,
            what="the fleet's row to ask",
        )
    finally:
        reader.stop()
    assert own.fleet[sid].state is State.NEEDS_INPUT

    stale = f"needs-input:{row['state_since'] - 5000}:{row['tool_summary']}"
    refused = fleet.request_action(
        broker.url, HOST, {"action": "approve", "session_id": sid, "token": stale}, timeout=15
    )
    assert refused["code"] == 409 and "moved on" in refused["error"], refused
    assert not pending.future.done()

    request = {"action": "approve", "session_id": sid, "token": _token(row)}
    answer = fleet.request_action(broker.url, HOST, request, timeout=15)
    assert answer["code"] == 202, answer
    again = fleet.request_action(broker.url, HOST, request, timeout=15)
    assert again["code"] in (404, 409), again
    run.wait(60)
    assert run.error is None and run.result.permission_denials == []
    assert len(list(env.cwd.glob("sim-*.txt"))) == 1, "the approved touch ran, once"
    assert pending.future.result().behavior == "allow"
    assert not published.exists()
    # recorded once, in the hub that holds the call
    sources = [t.source for t in own.history(sid)]
    assert sum(1 for s in sources if s.startswith("action:approve")) == 1, sources
