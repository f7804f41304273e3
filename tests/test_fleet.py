"""The fleet: hubs publish their sessions to a real ``nats-server -js``; subscribers merge them.

Three ``pmux-widget serve`` processes (or in-process hubs), each with its own homes, stand for
three machines. The broker is a real JetStream server on loopback (``tests/nats_server.py``),
restarted on the same port and store for the broker-restart test. Heartbeats are 0.3 s here
(``PMUX_WIDGET_FLEET_HEARTBEAT``), so "offline after three missed beats" takes about a second.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

nats = pytest.importorskip("nats")

from pmux_widget import fleet  # noqa: E402
from pmux_widget.core.model import Session, State, count_states  # noqa: E402
from pmux_widget.core.tracking import Tracking  # noqa: E402
from pmux_widget.fleet.common import BUCKET, ensure_bucket, session_key  # noqa: E402
from pmux_widget.fleet.publisher import publish_json  # noqa: E402
from pmux_widget.runtime.action_outcome import ActionError  # noqa: E402
from pmux_widget.runtime.hub import Hub  # noqa: E402

from .helpers import get_sessions, post_hook, wait_until  # noqa: E402
from .nats_server import NatsServer, nats_server_binary  # noqa: E402

pytestmark = [
    pytest.mark.fleet,
    pytest.mark.skipif(nats_server_binary() is None, reason="nats-server not installed"),
]

BEAT = 0.3
CWD = "/home/dev/projects/api"


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path_factory.mktemp("nats") / "store").start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(autouse=True)
def _fast_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PMUX_WIDGET_FLEET_HEARTBEAT", str(BEAT))


def _name(prefix: str) -> str:
    """Host names unique to a test: every test shares the session's bucket."""
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def hook(event: str, session_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "transcript_path": f"/home/dev/.claude/projects/-api/{session_id}.jsonl",
        "cwd": CWD,
        "hook_event_name": event,
        **fields,
    }


class Served:
    """``pmux-widget serve --fleet URL --host-name NAME`` in its own process and homes."""

    def __init__(self, root: Path, url: str, host: str, *extra: str, env_url: bool = False):
        self.host = host
        home, claude = root / host / "pmux", root / host / "claude"
        claude.mkdir(parents=True)
        argv = [sys.executable, "-m", "pmux_widget", "--home", str(home)]
        argv += ["--claude-home", str(claude), "serve", "--host-name", host, *extra]
        env = {**os.environ, "PMUX_WIDGET_HOME": str(home), "CLAUDE_CONFIG_DIR": str(claude)}
        if env_url:  # the URL from the environment instead of --fleet
            env["PMUX_WIDGET_FLEET"] = url
        else:
            argv += ["--fleet", url]
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        assert "hub on http://127.0.0.1:" in line, line
        self.port = int(line.split("127.0.0.1:")[1].split()[0])
        self.token = (home / "token").read_text().strip()
        line = self.proc.stdout.readline().decode()
        assert f"as host {host}" in line, line

    def post(self, body: dict[str, Any]) -> None:
        assert post_hook(self.port, self.token, body) == 204

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(20)

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[Served]]:
    started: list[Served] = []
    yield started
    for hub in started:
        hub.stop()


@pytest.fixture
def subscriber(broker: NatsServer) -> Iterator[fleet.Subscriber]:
    with fleet.Subscriber(broker.url).start(timeout=10) as sub:
        yield sub


def _session(sub: fleet.Subscriber, host: str, session_id: str) -> dict[str, Any] | None:
    return next(
        (s for s in sub.sessions() if s["host"] == host and s["session_id"] == session_id), None
    )


def _state(sub: fleet.Subscriber, host: str, session_id: str) -> str | None:
    found = _session(sub, host, session_id)
    return None if found is None else found["state"]


def status_json(url: str, *extra: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "pmux_widget", "status", "--json", "--fleet", url, *extra],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


# ------------------------------------------------------------------------ three hosts


def test_three_hosts_in_one_status_and_a_hook_reaches_the_subscriber(
    broker, served, subscriber, tmp_path
):
    names = [_name("alpha"), _name("beta"), _name("gamma")]
    for i, host in enumerate(names):  # the last one gets its URL from PMUX_WIDGET_FLEET
        served.append(Served(tmp_path, broker.url, host, env_url=i == 2))
    ids = {host: str(uuid.uuid4()) for host in names}
    for hub in served:
        hub.post(hook("SessionStart", ids[hub.host], source="startup"))

    def all_three() -> dict[str, Any] | None:
        data = status_json(broker.url)
        mine = [s for s in data["sessions"] if s["host"] in names]
        hosts = data["hosts"]
        ok = len(mine) == 3 and all(hosts.get(h, {}).get("online") for h in names)
        return data if ok else None

    data = wait_until(all_three, 20, what="three hosts' sessions in status --fleet --json")
    mine = [s for s in data["sessions"] if s["host"] in names]
    assert {(s["host"], s["session_id"]) for s in mine} == set(ids.items())
    assert set(mine[0]) >= set(Session("x").to_json()) | {"host"}  # the contract's fields
    assert [s["host"] for s in mine] == sorted(s["host"] for s in mine)  # grouped by host
    assert set(data["counts"]) == {"idle", "busy", "needs-input", "review", "unknown", "attention"}
    assert all(isinstance(data["hosts"][h]["last_seen"], int) for h in names)

    table = subprocess.run(
        [sys.executable, "-m", "pmux_widget", "status", "--fleet", broker.url],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    for host in names:
        assert f"== {host} · online · 1 sessions" in table

    # a hook on one host shows in the subscriber, as that host's session
    beta = served[1]
    heard: list[tuple[str, str | None]] = []
    subscriber.add_listener(lambda changed, sub: heard.extend(changed))
    beta.post(hook("UserPromptSubmit", ids[beta.host], prompt="refactor the retry loop"))
    wait_until(lambda: _state(subscriber, beta.host, ids[beta.host]) == "busy", 10)
    assert (beta.host, ids[beta.host]) in heard  # listeners learn which session changed
    assert subscriber.get(beta.host, ids[beta.host])["last_prompt"] == "refactor the retry loop"
    assert get_sessions(beta.port, beta.token)["sessions"][0]["state"] == "busy"
    assert _state(subscriber, names[0], ids[names[0]]) == "idle"


def test_killed_hub_goes_offline_and_its_sessions_stay(broker, served, subscriber, tmp_path):
    hosts = [_name("keep"), _name("dies"), _name("quits")]
    for host in hosts:
        served.append(Served(tmp_path, broker.url, host))
    ids = {host: str(uuid.uuid4()) for host in hosts}
    for hub in served:
        hub.post(hook("SessionStart", ids[hub.host], source="startup"))
        hub.post(hook("UserPromptSubmit", ids[hub.host], prompt="go"))
    for host in hosts:
        wait_until(lambda h=host: _state(subscriber, h, ids[h]) == "busy", 10)
        wait_until(lambda h=host: subscriber.online(h), 10)

    served[1].kill9()  # no goodbye: only the missing beats tell
    offline = wait_until(
        lambda: not subscriber.online(hosts[1]), 3 * BEAT + 5, what="the killed host offline"
    )
    assert offline
    assert _state(subscriber, hosts[1], ids[hosts[1]]) == "busy"  # last known, still listed
    assert subscriber.online(hosts[0])

    served[2].stop()  # a clean stop says goodbye: offline at once
    wait_until(lambda: not subscriber.online(hosts[2]), 5, what="the stopped host offline")
    assert _session(subscriber, hosts[2], ids[hosts[2]]) is not None

    data = status_json(broker.url)  # a fresh reader agrees
    assert data["hosts"][hosts[1]]["online"] is False
    assert data["hosts"][hosts[0]]["online"] is True
    assert any(s["session_id"] == ids[hosts[1]] for s in data["sessions"])


# ------------------------------------------------------------------ in-process hubs


@pytest.fixture
def hubs() -> Iterator[list[Hub]]:
    made: list[Hub] = []
    yield made
    for hub in made:
        hub.stop()


def _new_hub(tmp_path: Path, hubs: list[Hub], name: str) -> Hub:
    (tmp_path / name).mkdir(parents=True, exist_ok=True)
    hub = Hub(home=tmp_path / name / "pmux", claude_home=tmp_path / name).start()
    hubs.append(hub)
    return hub


@pytest.fixture
def publishers() -> Iterator[list[fleet.Publisher]]:
    made: list[fleet.Publisher] = []
    yield made
    for publisher in made:
        publisher.stop()


def test_broker_restart_hubs_reconnect_and_the_subscriber_converges(
    broker, hubs, publishers, subscriber, tmp_path
):
    names = [_name("east"), _name("west")]
    pairs = []
    for name in names:
        hub = _new_hub(tmp_path, hubs, name)
        publishers.append(fleet.start_publisher(hub, broker.url, host=name))
        pairs.append((name, hub))
    ids = {name: [str(uuid.uuid4()) for _ in range(3)] for name in names}
    for name, hub in pairs:
        for sid in ids[name]:
            assert post_hook(hub.port, hub.token, hook("SessionStart", sid, source="startup"))
            assert post_hook(hub.port, hub.token, hook("UserPromptSubmit", sid, prompt="x"))
    for name in names:
        for sid in ids[name]:
            wait_until(lambda n=name, s=sid: _state(subscriber, n, s) == "busy", 10)

    broker.kill()
    wait_until(lambda: not any(p.connected.is_set() for p in publishers), 10)
    # while the broker is away: every session finishes, one more starts on each host
    for name, hub in pairs:
        for sid in ids[name]:
            assert post_hook(hub.port, hub.token, hook("Stop", sid)) == 204
        late = str(uuid.uuid4())
        ids[name].append(late)
        assert post_hook(hub.port, hub.token, hook("SessionStart", late, source="startup"))
    broker.start()

    def converged() -> bool:
        for name, hub in pairs:
            expected = {s["session_id"]: s["state"] for s in hub.snapshot_json()["sessions"]}
            got = {s["session_id"]: s["state"] for s in subscriber.sessions() if s["host"] == name}
            if got != expected or not subscriber.online(name):
                return False
        return True

    wait_until(converged, 20, what="the subscriber to converge on both hubs after the restart")
    for name in names:
        states = [_state(subscriber, name, sid) for sid in ids[name]]
        assert states == ["review", "review", "review", "idle"]
    assert all(p.resyncs >= 2 for p in publishers)  # republished after reconnecting


def test_dead_broker_costs_hooks_nothing_and_the_publisher_connects_later(
    hubs, publishers, tmp_path
):
    broker = NatsServer(tmp_path / "late-store")  # not started yet: nothing listens there
    hub = _new_hub(tmp_path, hubs, "lonely")
    publisher = fleet.start_publisher(hub, broker.url, host="lonely")
    publishers.append(publisher)
    sid = str(uuid.uuid4())
    for body in (hook("SessionStart", sid, source="startup"), hook("Stop", sid)):
        assert post_hook(hub.port, hub.token, body, **{"X-Pmux-Sent": "0"}) == 204
    assert hub.snapshot_json()["sessions"][0]["state"] == "review"
    assert not publisher.connected.is_set()
    with broker, fleet.Subscriber(broker.url).start(timeout=10) as sub:
        wait_until(lambda: _state(sub, "lonely", sid) == "review", 15)
        assert sub.online("lonely")


class Capture:
    """Every message on the broker (``>``: subjects and bodies) while it runs, on a thread."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[bytes] = []
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        nc = await nats.connect(self.url)

        async def keep(msg: Any) -> None:
            self.seen.append(msg.subject.encode() + b" " + msg.data)

        await nc.subscribe(">", cb=keep)
        await nc.flush()
        self._ready.set()
        await self._stop.wait()
        await nc.drain()

    def __enter__(self) -> Capture:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


def test_redact_publishes_no_prompt_answer_or_tool_input(broker, hubs, publishers, tmp_path):
    secrets = ["SECRET-PROMPT-7f3a", "SECRET-ANSWER-91bc", "SECRET-TOOL-55de"]

    def every_published_byte(host: str, redact: bool) -> list[bytes]:
        """One session through prompt, a Bash permission dialog and its answer."""
        hub = _new_hub(tmp_path, hubs, host)
        sid = str(uuid.uuid4())
        tool_input = {"command": f"echo {secrets[2]}", "description": "say it"}
        with Capture(broker.url) as capture, fleet.Subscriber(broker.url).start(10) as sub:
            publishers.append(fleet.start_publisher(hub, broker.url, host=host, redact=redact))
            for body in (
                hook("SessionStart", sid, source="startup"),
                hook("UserPromptSubmit", sid, prompt=f"please {secrets[0]} now"),
                hook("PreToolUse", sid, tool_name="Bash", tool_input=tool_input),
                hook("PermissionRequest", sid, tool_name="Bash", tool_input=tool_input),
            ):
                assert post_hook(hub.port, hub.token, body) == 204
            wait_until(lambda: _state(sub, host, sid) == "needs-input", 10)
            found = _session(sub, host, sid)
            assert found is not None and found["current_tool"] == "Bash"  # tool names stay
            for body in (
                hook("PostToolUse", sid, tool_name="Bash", tool_input=tool_input),
                hook("Stop", sid, last_assistant_message=f"done: {secrets[1]}"),
            ):
                assert post_hook(hub.port, hub.token, body) == 204
            wait_until(lambda: _state(sub, host, sid) == "review", 10)
        return [*capture.seen, _raw_bucket(broker.url, host)]

    open_host = _name("open")
    leaky = b"\n".join(every_published_byte(open_host, redact=False))
    assert all(secret.encode() in leaky for secret in secrets)  # the capture sees them
    # the second run's capture also carries the first host's stored values (the subscriber's
    # snapshot): leave out what names that host
    redacted = b"\n".join(
        m
        for m in every_published_byte(_name("redacted"), redact=True)
        if open_host.encode() not in m
    )
    assert b'"state":"review"' in redacted and b'"current_tool":"Bash"' in redacted
    for secret in secrets:
        assert secret.encode() not in redacted


def _raw_bucket(url: str, host: str) -> bytes:
    """Every value of ``host``'s keys as the bucket holds them now."""

    from nats.js.errors import NoKeysError

    async def run() -> bytes:
        nc = await nats.connect(url)
        kv = await nc.jetstream().key_value(BUCKET)
        out = []
        try:
            keys = await kv.keys()
        except NoKeysError:  # every key deleted or none written yet
            keys = []
        for key in keys:
            if key.startswith(host + "."):
                entry = await kv.get(key)
                out.append(key.encode() + b" " + (entry.value or b""))
        await nc.close()
        return b"\n".join(out)

    return asyncio.run(run())


def test_a_remote_action_reaches_the_right_host(broker, hubs, publishers, tmp_path):
    names = [_name("left"), _name("right")]
    for name in names:
        hub = _new_hub(tmp_path, hubs, name)
        publishers.append(fleet.start_publisher(hub, broker.url, host=name))
    wait_until(lambda: all(p.connected.is_set() for p in publishers), 10)
    sid = str(uuid.uuid4())
    right = hubs[-1]
    start = {"session_id": sid, "hook_event_name": "SessionStart", "source": "startup"}
    assert post_hook(right.port, right.token, {**start, "cwd": str(tmp_path)}) == 204
    # the right host knows the session and refuses with its own checks (idle: no dialog)
    answer = fleet.request_action(broker.url, names[1], {"action": "approve", "session_id": sid})
    assert answer["code"] == 409 and answer["host"] == names[1]
    assert "no permission prompt" in answer["error"]
    # the other host does not know it
    answer = fleet.request_action(broker.url, names[0], {"action": "approve", "session_id": sid})
    assert answer["code"] == 404 and answer["host"] == names[0]
    # an answer travels with its labels, checked there too
    answer = fleet.request_action(
        broker.url, names[1], {"action": "answer", "session_id": sid, "options": ["Amber"]}
    )
    assert answer["code"] == 409 and "no question to answer" in answer["error"], answer
    bad = fleet.request_action(
        broker.url, names[1], {"action": "answer", "session_id": sid, "options": "Amber"}
    )
    assert bad["code"] == 400 and "options" in bad["error"]
    bad = fleet.request_action(broker.url, names[1], {"action": 7})
    assert bad["code"] == 400
    with pytest.raises(nats.errors.NoRespondersError):
        fleet.request_action(broker.url, _name("nobody"), {"action": "approve"})


def test_a_fleet_views_clicks_and_looks_reach_the_sessions_host(broker, hubs, publishers, tmp_path):
    """A widget over the fleet acts on another host's row through that host's hub (its own
    checks, its refusal shown on the row), and a look or a dismiss there ends its review."""
    from pmux_widget.fleet.view import FleetView
    from pmux_widget.notebook.widget import StatusWidget

    host = _name("far")
    hub = _new_hub(tmp_path, hubs, host)
    publishers.append(fleet.start_publisher(hub, broker.url, host=host))
    looked, dismissed = str(uuid.uuid4()), str(uuid.uuid4())
    for sid in (looked, dismissed):
        for event in ("SessionStart", "UserPromptSubmit", "Stop"):
            assert post_hook(hub.port, hub.token, hook(event, sid, source="startup")) == 204
    with fleet.Subscriber(broker.url).start(timeout=10) as sub:
        wait_until(lambda: all(_state(sub, host, s) == "review" for s in (looked, dismissed)), 10)
        view = FleetView(sub)
        widget = StatusWidget(view)  # type: ignore[arg-type]
        sent: list[dict[str, Any]] = []
        widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]

        def result() -> dict[str, Any] | None:
            return next((m for m in sent if m.get("type") == "action_result"), None)

        widget._on_front_end_msg(widget, {"type": "action", "action": "approve",
                                          "session_id": looked}, None)  # fmt: skip
        answer = wait_until(result, 15, what="the action's result")
        assert answer["ok"] is False and "no permission prompt" in answer["message"], answer
        with pytest.raises(ActionError, match="no session") as unknown:
            view.act(str(uuid.uuid4()), "approve")
        assert unknown.value.unknown

        widget._on_front_end_msg(widget, {"type": "seen", "session_id": looked}, None)
        widget._on_front_end_msg(widget, {"type": "dismiss", "session_id": dismissed}, None)
        wait_until(lambda: hub.fleet[looked].state is State.IDLE, 10, what="seen there")
        assert hub.fleet[looked].source == "user:seen"
        wait_until(lambda: hub.fleet[dismissed].state is State.IDLE, 10, what="dismissed there")
        wait_until(lambda: view.fleet[looked].state is State.IDLE, 10, what="idle in the view")
        view.close()


def test_start_with_fleet_publishes_and_stop_says_goodbye(broker, tmp_path, subscriber):
    import pmux_widget

    host = _name("kernel")
    (tmp_path / "claude").mkdir()
    pmux_widget.start(
        claude_home=tmp_path / "claude", home=tmp_path / "pmux", fleet=broker.url, host_name=host
    )
    try:
        wait_until(lambda: subscriber.online(host), 10)
    finally:
        pmux_widget.stop()
    wait_until(lambda: not subscriber.online(host), 5)


def test_forget_removes_a_host_for_good(broker, hubs, publishers, subscriber, tmp_path):
    host = _name("gone")
    hub = _new_hub(tmp_path, hubs, host)
    publisher = fleet.start_publisher(hub, broker.url, host=host)
    sid = str(uuid.uuid4())
    assert post_hook(hub.port, hub.token, hook("SessionStart", sid, source="startup")) == 204
    wait_until(lambda: _state(subscriber, host, sid) == "idle", 10)
    publisher.stop()
    out = subprocess.run(
        [sys.executable, "-m", "pmux_widget", "fleet", "forget", host, "--fleet", broker.url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "Removed 2 keys" in out.stdout
    wait_until(lambda: host not in subscriber.hosts(), 5)


def test_the_status_widget_shows_the_fleet_through_a_view(broker, hubs, publishers, tmp_path):
    """Rows carry their real workspace and host; the hosts (online or not) travel with the
    snapshot, and in a patch when one goes offline (its rows stay, unchanged)."""
    from pmux_widget.fleet.view import FleetView
    from pmux_widget.notebook.widget import StatusWidget

    names = [_name("wa"), _name("wb")]
    ids = {}
    for name in names:
        hub = _new_hub(tmp_path, hubs, name)
        publishers.append(fleet.start_publisher(hub, broker.url, host=name))
        ids[name] = str(uuid.uuid4())
        assert post_hook(hub.port, hub.token, hook("SessionStart", ids[name], source="startup"))
    with fleet.Subscriber(broker.url).start(timeout=10) as sub:
        wait_until(lambda: all(_session(sub, n, ids[n]) for n in names), 10)
        wait_until(lambda: all(sub.online(n) for n in names), 10)
        widget = StatusWidget(FleetView(sub))  # type: ignore[arg-type]
        sent: list[dict[str, Any]] = []
        widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
        rows = widget.snapshot["sessions"]
        for name in names:
            assert rows[ids[name]]["workspace"] == "api"  # the real one, no host prefix
            assert rows[ids[name]]["host"] == name
            assert widget.snapshot["hosts"][name]["online"] is True
            assert widget.snapshot["hosts"][name]["last_seen"] > 0
        hub = hubs[-1]
        body = hook("UserPromptSubmit", ids[names[1]], prompt="x")
        assert post_hook(hub.port, hub.token, body) == 204
        wait_until(lambda: any(u["state"] == "busy" for p in sent for u in p.get("upsert", [])))
        patch = next(p for p in sent if p.get("upsert"))
        assert [row["session_id"] for row in patch["upsert"]] == [ids[names[1]]]
        assert patch["hosts"] is None  # no host went online or offline
        # Another host's session entering review notifies here, as a local one does.
        assert post_hook(hub.port, hub.token, hook("Stop", ids[names[1]])) == 204
        wait_until(
            lambda: any(
                m.get("type") == "notify" and m["notification"]["session_id"] == ids[names[1]]
                for m in sent
            ),
            10,
        )
        note = next(m["notification"] for m in sent if m.get("type") == "notify")
        assert note["state"] == "review"
        assert note["title"].startswith(f"{names[1]}: ")
        publishers[-1].stop()  # that host says goodbye: the hosts say so, its rows stay

        def offline_patch() -> dict[str, Any] | None:
            return next(
                (
                    p
                    for p in sent
                    if (p.get("hosts") or {}).get(names[1]) is not None
                    and not p["hosts"][names[1]]["online"]
                ),
                None,
            )

        wait_until(lambda: offline_patch() is not None, 10)
        patch = offline_patch()
        assert patch is not None
        assert patch["hosts"][names[0]]["online"] is True
        assert patch["hosts"][names[1]]["last_seen"] > 0
        assert ids[names[1]] not in patch["remove"]
        assert widget.snapshot["hosts"][names[1]]["online"] is False
        kept = widget.snapshot["sessions"][ids[names[1]]]
        assert (kept["workspace"], kept["host"], kept["state"]) == ("api", names[1], "review")
        widget.close()


# ------------------------------------------------------------------------ ended sessions


class EndingFleet:
    """Two in-process hubs publishing to a broker of their own (exact counts: no other test's
    hosts), the second with ``--redact``; each has a live session and one that ends, plus a
    record as a publisher older than the ``ended`` field wrote it."""

    def __init__(self, broker: NatsServer, hubs: list[Hub], publishers: list[Any], root: Path):
        self.url = broker.url
        self.names = [_name("ea"), _name("eb")]
        self.live: dict[str, str] = {}
        self.gone: dict[str, str] = {}
        self.hubs: dict[str, Hub] = {}
        for i, name in enumerate(self.names):
            hub = self.hubs[name] = _new_hub(root, hubs, name)
            publishers.append(fleet.start_publisher(hub, self.url, host=name, redact=i == 1))
            self.live[name], self.gone[name] = str(uuid.uuid4()), str(uuid.uuid4())
        for name in self.names:
            self.post(name, hook("SessionStart", self.live[name], source="startup"))
            self.post(name, hook("SessionStart", self.gone[name], source="startup"))
            self.post(name, hook("UserPromptSubmit", self.gone[name], prompt="SECRET-PROMPT-e1"))
        self.old_host, self.old = _name("old"), str(uuid.uuid4())
        record = Session(self.old, project="api", workspace="api").to_json()
        del record["host"]  # the field came with the fleet: the subscriber sets it from the key
        _put_raw(self.url, session_key(self.old_host, self.old), record)

    def post(self, name: str, body: dict[str, Any]) -> None:
        hub = self.hubs[name]
        assert post_hook(hub.port, hub.token, body) == 204

    def end(self) -> None:
        for name in self.names:
            self.post(name, hook("SessionEnd", self.gone[name], reason="prompt_input_exit"))

    def synced(self, sub: fleet.Subscriber, ended: bool) -> bool:
        return sub.get(self.old_host, self.old) is not None and all(
            (found := sub.get(n, self.gone[n])) is not None
            and found["ended"] is ended
            # its prompt's busy, not the idle of its start (published a batch earlier: ci11)
            and (ended or found["state"] == "busy")
            and sub.get(n, self.live[n]) is not None
            for n in self.names
        )


def _put_raw(url: str, key: str, data: dict[str, Any]) -> None:
    """``data`` straight into the bucket under ``key``, as another publisher writes it."""

    async def run() -> None:
        nc = await nats.connect(url)
        kv = await ensure_bucket(nc.jetstream())
        await kv.put(key, json.dumps(data).encode())
        await nc.close()

    asyncio.run(run())


def _raw_get(url: str, key: str) -> dict[str, Any]:
    """One key's value as the bucket holds it now."""

    async def run() -> dict[str, Any]:
        nc = await nats.connect(url)
        kv = await nc.jetstream().key_value(BUCKET)
        entry = await kv.get(key)
        await nc.close()
        value: dict[str, Any] = json.loads(entry.value or b"")
        return value

    return asyncio.run(run())


def test_ended_sessions_travel_as_ended_and_the_widget_lists_them_ended(hubs, publishers, tmp_path):
    """The record carries "ended" (from a redacting hub too); the fleet widget's rows say
    ended, as a local one's do (the front-end's "Ended" section), and leave the counts; an
    old publisher's record, with no such field, stays a live row."""
    from pmux_widget.fleet.view import FleetView
    from pmux_widget.notebook.widget import StatusWidget

    with NatsServer(tmp_path / "store") as broker:
        f = EndingFleet(broker, hubs, publishers, tmp_path)
        with fleet.Subscriber(broker.url).start(timeout=10) as sub:
            wait_until(lambda: f.synced(sub, ended=False), 10, what="every session published")
            wait_until(lambda: all(sub.online(n) for n in f.names), 10)
            for name in f.names:
                record = _raw_get(broker.url, session_key(name, f.gone[name]))
                assert record["ended"] is False and record["state"] == "busy"
            widget = StatusWidget(FleetView(sub))  # type: ignore[arg-type]
            sent: list[dict[str, Any]] = []
            widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
            rows = widget.snapshot["sessions"]
            assert not any(r["ended"] for r in rows.values())
            assert widget.snapshot["counts"]["busy"] == 2
            assert widget.snapshot["counts"]["idle"] == 3  # the old record's session included

            f.end()
            wait_until(lambda: f.synced(sub, ended=True), 10, what="the ends published")
            for name in f.names:  # in the bucket, as the hub wrote it, redacted or not
                record = _raw_get(broker.url, session_key(name, f.gone[name]))
                assert record["ended"] is True and record["host"] == name
                assert list(record) == [*Session("x").to_json(), "ended"]
            redacted = _raw_get(broker.url, session_key(f.names[1], f.gone[f.names[1]]))
            assert redacted["last_prompt"] is None
            plain = _raw_get(broker.url, session_key(f.names[0], f.gone[f.names[0]]))
            assert plain["last_prompt"] == "SECRET-PROMPT-e1"

            def ended_rows() -> dict[str, dict[str, Any]]:
                return {sid: r for sid, r in widget.snapshot["sessions"].items() if r["ended"]}

            wait_until(lambda: len(ended_rows()) == 2, 10, what="two ended rows")
            ended = ended_rows()
            assert {(r["host"], sid) for sid, r in ended.items()} == {
                (n, f.gone[n]) for n in f.names
            }
            assert all(r["workspace"] == "api" and not r["running"] for r in ended.values())
            live = {sid for sid, r in widget.snapshot["sessions"].items() if not r["ended"]}
            assert live == {*f.live.values(), f.old}  # the old publisher's: live, not ended
            counts = widget.snapshot["counts"]
            assert (counts["busy"], counts["idle"], counts["attention"]) == (0, 3, 0)
            upserts = [u for p in sent for u in p.get("upsert", []) if u["ended"]]
            assert {u["session_id"] for u in upserts} == set(f.gone.values())
            assert not [m for m in sent if m.get("type") == "notify"]  # an end asks nothing

            # the heartbeat counts the live sessions, as every count does
            def beat_of(name: str) -> tuple[int, int, int]:
                beat = _raw_get(broker.url, f"{name}._host")
                return beat["sessions"], beat["counts"]["idle"], beat["counts"]["busy"]

            for name in f.names:  # one live session (idle), the ended one nowhere
                wait_until(lambda n=name: beat_of(n) == (1, 1, 0), 10, what=f"{name}'s beat")
            widget.close()

            # a reader that starts now reads the ends from the snapshot
            with fleet.Subscriber(broker.url).start(timeout=10) as late:
                view = FleetView(late)
                assert {sid for sid, s in view.fleet.items() if s.ended} == set(f.gone.values())
                assert not view.fleet[f.old].ended
                view.close()


def test_status_fleet_leaves_ended_sessions_out_unless_all(hubs, publishers, tmp_path):
    """``status --fleet`` lists the live sessions, as local ``status``; ``--all`` lists the
    ended ones too, said ended (the counts stay the live ones'), in JSON and in the table."""
    with NatsServer(tmp_path / "store") as broker:
        f = EndingFleet(broker, hubs, publishers, tmp_path)
        f.end()
        with fleet.Subscriber(broker.url).start(timeout=10) as sub:
            wait_until(lambda: f.synced(sub, ended=True), 10, what="the ends published")
            assert {s["session_id"] for s in sub.sessions()} == {*f.live.values(), f.old}
            every = {s["session_id"] for s in sub.sessions(include_ended=True)}
            assert every == {*f.live.values(), *f.gone.values(), f.old}

        data = status_json(broker.url)
        listed = {(s["host"], s["session_id"]): s["ended"] for s in data["sessions"]}
        expected = {(n, f.live[n]): False for n in f.names} | {(f.old_host, f.old): False}
        assert listed == expected  # the old record reads as live, and says so
        assert (data["counts"]["busy"], data["counts"]["idle"]) == (0, 3)
        assert set(data["hosts"]) == {*f.names, f.old_host}

        every = status_json(broker.url, "--all")
        listed = {(s["host"], s["session_id"]): s["ended"] for s in every["sessions"]}
        assert listed == expected | {(n, f.gone[n]): True for n in f.names}
        assert every["counts"] == data["counts"]
        gone = next(s for s in every["sessions"] if s["session_id"] == f.gone[f.names[1]])
        assert gone["last_prompt"] is None  # the redacting host's, redacted

        def table(*extra: str) -> str:
            argv = [sys.executable, "-m", "pmux_widget", "status", "--fleet", broker.url, *extra]
            out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            return out.stdout

        text = table()
        for name in f.names:
            assert f"== {name} · online · 1 sessions\n" in text
        assert f.gone[f.names[0]][:8] not in text
        text = table("--all")
        for name in f.names:
            assert f"== {name} · online · 2 sessions (1 ended)" in text
        row = next(line for line in text.splitlines() if f.gone[f.names[0]][:8] in line)
        assert row.split()[0] == "ended"


# ------------------------------------------------------------------------ pure parts


def test_a_widget_over_this_machines_hub_has_no_hosts(hubs, tmp_path):
    """No fleet, no host level: the snapshot's hosts are empty and patches carry none."""
    from pmux_widget.notebook.widget import StatusWidget

    hub = _new_hub(tmp_path, hubs, "local")
    widget = StatusWidget(hub)
    sent: list[dict[str, Any]] = []
    widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    assert widget.snapshot["hosts"] == {}
    sid = str(uuid.uuid4())
    assert post_hook(hub.port, hub.token, hook("SessionStart", sid, source="startup")) == 204
    wait_until(lambda: any(p.get("upsert") for p in sent), 10)
    patch = next(p for p in sent if p.get("upsert"))
    assert patch["hosts"] is None
    assert patch["upsert"][0]["host"] is None
    widget.close()


def test_a_fleet_notification_is_for_entering_needs_input_or_review():
    from pmux_widget.fleet.view import fleet_notification

    idle = Session(session_id="s", state=State.IDLE, project="api")
    review = idle.replace(state=State.REVIEW)
    note = fleet_notification(idle, review)
    assert note is not None and (note.session_id, note.state) == ("s", State.REVIEW)
    assert note.title == "api finished its turn"
    assert fleet_notification(None, idle.replace(state=State.NEEDS_INPUT)) is not None
    on_host = fleet_notification(idle.replace(host="devbox"), review.replace(host="devbox"))
    assert on_host is not None and on_host.title == "devbox: api finished its turn"
    assert fleet_notification(review, review) is None  # no new state: no second notification
    assert fleet_notification(review, idle) is None


def test_published_json_carries_host_and_redacts_text():
    session = Session(
        "s1",
        state=State.BUSY,
        last_prompt="the prompt",
        last_assistant="the answer",
        tool_summary="$ rm -rf build",
        current_tool="Bash",
    )
    plain = publish_json(session, "alpha")
    assert plain["host"] == "alpha" and plain["last_prompt"] == "the prompt"
    # host has its place in the contract; "ended" is the one field added after it
    assert list(plain) == [*session.to_json(), "ended"]
    assert plain["ended"] is False
    redacted = publish_json(session, "alpha", redact=True)
    assert redacted["last_prompt"] is None and redacted["last_assistant"] is None
    assert redacted["tool_summary"] is None and redacted["current_tool"] == "Bash"
    assert redacted["ended"] is False
    over = session.replace(tracking=Tracking(ended=True))
    assert publish_json(over, "alpha")["ended"] is True
    assert publish_json(over, "alpha", redact=True)["ended"] is True  # redaction keeps it


def test_a_fleet_session_is_ended_only_when_its_json_says_true():
    from pmux_widget.fleet.view import fleet_session

    over = Session("s1", state=State.IDLE, tracking=Tracking(ended=True))
    assert fleet_session(publish_json(over, "far"), "far").ended is True
    old = Session("s1").to_json() | {"host": "far"}  # a publisher older than the field
    assert "ended" not in old and fleet_session(old, "far").ended is False
    assert fleet_session({**old, "ended": "yes"}, "far").ended is False  # not a yes
    assert not fleet.is_ended(old) and fleet.is_ended(publish_json(over, "far"))


def test_a_background_session_travels_as_one_in_the_fleet():
    """Claude Code's own background session (issue 26): its job and name reach the other
    hosts' views, and their rows name no pane."""
    from pmux_widget.core.model import Background
    from pmux_widget.fleet.view import fleet_session

    bg = Session(
        "s1", state=State.NEEDS_INPUT, project="acme", background=Background("84ed038b", "late-a")
    )
    far = fleet_session(publish_json(bg, "far"), "far")
    assert far.background == Background("84ed038b", "late-a") and far.tmux is None
    assert far.name == "acme (background: late-a)"
    assert fleet_session(publish_json(Session("s2"), "far"), "far").background is None


def test_keys_are_single_tokens():
    assert fleet.host_name("dev-1.example.com") == "dev-1-example-com"
    assert session_key("a", "0b9c-11") == "a.0b9c-11"
    odd = session_key("a", "x.y z")
    assert odd.startswith("a.h-") and odd.count(".") == 1
    with pytest.raises(ValueError):
        fleet.host_name("_host")


def test_counts_follow_the_hubs_rule():
    sessions = [Session("a", state=State.REVIEW), Session("b", state=State.BUSY)]
    as_json = [publish_json(s, "h") for s in sessions]
    assert fleet.count_json(as_json) == count_states(sessions)
    # an ended session is not counted, as the hub counts its live sessions only
    over = Session("c", state=State.REVIEW, tracking=Tracking(ended=True))
    assert fleet.count_json([*as_json, publish_json(over, "h")]) == count_states(sessions)


def test_offline_host_is_marked_in_the_table():
    from pmux_widget.cli.fleet import format_fleet_table

    snapshot = {
        "sessions": [publish_json(Session("s1", state=State.BUSY), "far")],
        "counts": count_states([Session("s1", state=State.BUSY)]),
        "hosts": {"far": {"online": False, "last_seen": 1000}},
    }
    text = format_fleet_table(snapshot, now=61_000)
    assert "== far · OFFLINE (last seen 1m ago) · its last known 1 sessions" in text
    assert "busy" in text and "ended" not in text
    assert "\x1b[2m" in format_fleet_table(snapshot, now=61_000, dim=True)
    # with --all an ended session is listed, said ended, and the host's line counts it
    over = Session("s2", state=State.IDLE, tracking=Tracking(ended=True))
    snapshot["sessions"].append(publish_json(over, "far"))
    text = format_fleet_table(snapshot, now=61_000)
    assert "its last known 2 sessions (1 ended)" in text
    assert any(line.split()[:1] == ["ended"] for line in text.splitlines())


def test_status_fleet_with_no_broker_fails_clearly(tmp_path):
    from .helpers import free_port

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pmux_widget",
            "status",
            "--fleet",
            f"nats://127.0.0.1:{free_port()}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1 and "no fleet snapshot" in out.stderr


def test_serve_refuses_a_host_name_the_keys_cannot_hold(tmp_path):
    homes = ["--home", str(tmp_path / "pmux"), "--claude-home", str(tmp_path)]
    flags = ["--fleet", "nats://127.0.0.1:1", "--host-name", "_host"]
    out = subprocess.run(
        [sys.executable, "-m", "pmux_widget", *homes, "serve", *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "cannot name a host" in out.stderr
    assert list((tmp_path / "pmux" / "runtime").glob("*.json")) == []  # the hub stopped
