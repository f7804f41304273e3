"""A fleet-wide notifier (``pmux-widget notify --fleet URL``): two machines' hubs publish to a
real ``nats-server -js``; notifiers on a third machine (and on a host itself) send each
transition once per destination, whichever machine claims it first in the fleet's bucket."""

from __future__ import annotations

import argparse
import contextlib
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

nats = pytest.importorskip("nats")

from pmux_widget import fleet  # noqa: E402
from pmux_widget.cli.notify import run_fleet_notifier  # noqa: E402
from pmux_widget.fleet.notify_claims import attach_fleet_claims  # noqa: E402
from pmux_widget.notify.config import Channel, edit_config  # noqa: E402
from pmux_widget.notify.notifier import find  # noqa: E402
from pmux_widget.runtime.assemble import make_hub  # noqa: E402
from pmux_widget.runtime.hub import Hub  # noqa: E402
from pmux_widget.system.home import PmuxHome  # noqa: E402

from .helpers import post_hook, wait_until  # noqa: E402
from .nats_server import NatsServer, nats_server_binary  # noqa: E402
from .notify_servers import Recorder  # noqa: E402

pytestmark = [
    pytest.mark.fleet,
    pytest.mark.skipif(nats_server_binary() is None, reason="nats-server not installed"),
]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path_factory.mktemp("nats") / "store").start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def http() -> Iterator[Recorder]:
    server = Recorder().start()
    yield server
    server.stop()


def configure(home: PmuxHome, http: Recorder, **settings: Any) -> None:
    with edit_config(home) as box:
        channel = Channel(f"json://127.0.0.1:{http.port}/hook")
        chosen = box[0].settings.updated(delay_s=0, cooldown_s=0, **settings)
        box[0] = type(box[0])((channel,), chosen)


def ask(hub: Hub, sid: str) -> None:
    body = {
        "session_id": sid,
        "cwd": "/home/dev/projects/api",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": f"deploy {sid[:4]}"},
    }
    assert post_hook(hub.port, hub.token, body) == 204


@dataclass
class Fleet:
    names: list[str]
    hubs: list[Hub]  # east also notifies on its own, to the same channel; west does not
    watchers: list[Any]  # two fleet-wide notifiers on two other machines, same channel


@contextlib.contextmanager
def two_hosts_and_two_watchers(
    broker: NatsServer, http: Recorder, tmp_path: Path, **settings: Any
) -> Iterator[Fleet]:
    hubs: list[Hub] = []
    publishers: list[Any] = []
    stops: list[threading.Event] = []
    threads: list[threading.Thread] = []
    watchers: list[Any] = []
    try:
        names = [f"east-{uuid.uuid4().hex[:6]}", f"west-{uuid.uuid4().hex[:6]}"]
        for i, name in enumerate(names):
            home = PmuxHome(tmp_path / name / "pmux")
            if i == 0:
                configure(home, http, **settings)
            hub = make_hub(home=home.root, claude_home=tmp_path / name, sources=False).start()
            hubs.append(hub)
            publishers.append(fleet.start_publisher(hub, broker.url, host=name))
            attach_fleet_claims(hub, broker.url, host=name)
        assert find(hubs[0]) is not None and find(hubs[1]) is None
        for k in range(2):
            home = PmuxHome(tmp_path / f"watcher-{k}" / "pmux")
            configure(home, http, **settings)
            stop = threading.Event()
            args = argparse.Namespace(home=str(home.root), fleet=broker.url, fleet_creds=None)
            thread = threading.Thread(
                target=run_fleet_notifier, args=(args, stop, watchers.append), daemon=True
            )
            thread.start()
            stops.append(stop)
            threads.append(thread)
        # the watchers are up once they see the hosts
        sub = fleet.Subscriber(broker.url).start(timeout=10)
        try:
            wait_until(lambda: all(sub.online(n) for n in names), 15, what="both hosts online")
        finally:
            sub.stop()
        wait_until(lambda: len(watchers) == 2, what="the watchers")
        yield Fleet(names, hubs, watchers)
    finally:
        for stop in stops:
            stop.set()
        for thread in threads:
            thread.join(10)
        for publisher in publishers:
            publisher.stop()
        for hub in hubs:
            hub.stop()


def test_fleet_notifiers_and_a_hosts_own_send_each_transition_once(
    broker: NatsServer, http: Recorder, tmp_path: Path
) -> None:
    with two_hosts_and_two_watchers(broker, http, tmp_path) as f:
        sids = [str(uuid.uuid4()) for _ in range(4)]
        for i, sid in enumerate(sids):
            ask(f.hubs[i % 2], sid)
        wait_until(lambda: http.count() >= 4, 20, what="four deliveries")
        # every watcher decided on every transition (its own claim comes before the fleet's)
        for w in f.watchers:
            wait_until(lambda w=w: len(w.store.deliveries()) >= 4, 10, what="a watcher's claims")
        for n in [*f.watchers, find(f.hubs[0])]:
            assert n is not None and n.wait_idle(10)
        messages = sorted(r.json()["message"] for r in http.requests)
        assert messages == sorted(f"asks to run: deploy {sid[:4]}" for sid in sids)
        titles = {r.json()["title"] for r in http.requests}
        assert any(f.names[1] in t for t in titles), titles  # the fleet names the host
    assert http.count() == 4, [r.json() for r in http.requests]


def test_over_the_cap_on_two_machines_one_digest_goes(
    broker: NatsServer, http: Recorder, tmp_path: Path
) -> None:
    """Both watchers are over their cap (one message per window) when west's session asks:
    each folds it into a digest, and the fleet's claim lets one of them send it."""
    with two_hosts_and_two_watchers(broker, http, tmp_path, cap=1) as f:
        first, second = str(uuid.uuid4()), str(uuid.uuid4())
        ask(f.hubs[0], first)
        wait_until(lambda: http.count() >= 1, 20, what="the first message")
        ask(f.hubs[1], second)

        def digested(w: Any) -> bool:
            return any(d.verdict == "digest" for _, d in list(w.log))

        for w in f.watchers:
            wait_until(lambda w=w: digested(w), 20, what=lambda w=w: f"a digest: {list(w.log)}")
        for n in [*f.watchers, find(f.hubs[0])]:
            assert n is not None and n.wait_idle(10)
        bodies = [r.json() for r in http.requests]
        assert len(bodies) == 2, bodies
        assert bodies[0]["message"] == f"asks to run: deploy {first[:4]}"
        assert bodies[1]["title"].endswith("need you"), bodies[1]  # "2 sessions need you"
