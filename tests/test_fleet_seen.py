"""Seen across the fleet (issue 34, docs/fleet.md): a review looked at in one machine's
JupyterLab ends review on the fleet's view too.

One machine: a real Jupyter server with the extension (its own hub: where the page's look
arrives, over ``pmux/api/stream``) and the hub that publishes the machine to a real
nats-server (as ``pmux-widget serve --fleet`` or ``start(fleet=...)`` does), both fed by
the installed hook script (it fans out to every hub of the home). A subscriber reads the
fleet. The look reaches the page's hub only; ``runtime.looks`` tells the machine's other
hubs, so the publishing one ends the review and the fleet says idle (``user:seen``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pmux_widget.core.model import State
from pmux_widget.runtime.hub import Hub

from .helpers import wait_until
from .jupyter_ext import Hooks, LabServer
from .nats_server import NatsServer, nats_server_binary
from .test_jupyter_ext import state_of, stream

fleet = pytest.importorskip("pmux_widget.fleet")

pytestmark = [
    pytest.mark.fleet,
    pytest.mark.skipif(nats_server_binary() is None, reason="nats-server not installed"),
]


@pytest.fixture
def machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[NatsServer, LabServer, Hub, str]]:
    monkeypatch.setenv("PMUX_WIDGET_FLEET_HEARTBEAT", "0.3")
    host = f"lab-{uuid.uuid4().hex[:6]}"
    with NatsServer(tmp_path / "store") as broker:
        server = LabServer(tmp_path).start()
        hub = Hub(home=server.pmux.root, claude_home=server.claude).start()
        publisher = fleet.start_publisher(hub, broker.url, host=host)
        try:
            wait_until(publisher.connected.is_set, 10, what="the publisher connected")
            yield broker, server, hub, host
        finally:
            publisher.stop()
            hub.stop()
            server.stop()


def _fleet_row(sub: Any, host: str, sid: str) -> dict[str, Any]:
    found: dict[str, Any] = sub.get(host, sid) or {}
    return found


def test_a_review_seen_in_the_lab_ends_review_on_the_fleets_view(
    machine: tuple[NatsServer, LabServer, Hub, str],
) -> None:
    broker, server, hub, host = machine
    hooks = Hooks(server)
    reviewed, working = str(uuid.uuid4()), str(uuid.uuid4())
    with fleet.Subscriber(broker.url).start(timeout=10) as sub:
        for sid in (reviewed, working):
            hooks.fire("SessionStart", sid, source="startup")
            hooks.fire("UserPromptSubmit", sid, prompt="fix the badge")
        hooks.fire("Stop", reviewed)
        wait_until(
            lambda: (
                _fleet_row(sub, host, reviewed).get("state") == "review"
                and _fleet_row(sub, host, working).get("state") == "busy"
            ),
            20,
            what=lambda: f"review and busy on the fleet: {sub.sessions()}",
        )
        wait_until(lambda: state_of(server, reviewed) == "review", 20, what="the page's hub")

        # The page looks at both (a terminal tab focused, a peek opened): through its stream.
        page = stream(server)
        try:
            page.recv()  # the snapshot: the page is there
            for sid in (working, reviewed):
                look = {"type": "seen", "session_id": sid}
                page.send(json.dumps({"type": "msg", "content": look}))
            wait_until(
                lambda: _fleet_row(sub, host, reviewed).get("state") == "idle",
                20,
                what=lambda: f"idle on the fleet: {_fleet_row(sub, host, reviewed)}",
            )
        finally:
            page.close()
        assert _fleet_row(sub, host, reviewed)["source"] == "user:seen"
        assert state_of(server, reviewed) == "idle"
        assert hub.fleet[reviewed].state is State.IDLE
        assert hub.fleet[reviewed].source == "user:seen"
        # a look at a session at work changes nothing, here or there
        assert hub.fleet[working].state is State.BUSY
        assert _fleet_row(sub, host, working)["state"] == "busy"
