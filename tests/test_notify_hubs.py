"""Exactly once, end to end: real hubs on one home (in this process and as ``pmux-widget
serve``), the installed hook command run by ``sh -c`` like Claude does, a json:// channel to
a local HTTP server and a browser subscribed at a loopback push service. One transition, one
delivery per destination, whatever number of hubs; none after a restart or a spool replay;
an answered dialog's notification is closed; 410 prunes; the away gate holds and re-checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from pmux_widget.core.model import State
from pmux_widget.notify import webpush
from pmux_widget.notify.claims import NotifyStore
from pmux_widget.notify.config import Channel, edit_config
from pmux_widget.notify.notifier import Notifier, find
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

from .helpers import wait_until
from .notify_servers import PushService, Recorder
from .test_hook_path import Installed, payload


@pytest.fixture
def http() -> Iterator[Recorder]:
    server = Recorder().start()
    yield server
    server.stop()


@pytest.fixture
def push() -> Iterator[PushService]:
    service = PushService().start()
    yield service
    service.stop()


@pytest.fixture
def setup(homes: Any, http: Recorder, push: PushService, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("PMUX_WIDGET_NOTIFY_DELAY", "0")
    installed = Installed(homes)
    with edit_config(homes.pmux) as box:
        channel = Channel(f"json://127.0.0.1:{http.port}/hook")
        box[0] = type(box[0])((channel,), box[0].settings.updated(cooldown_s=0))
    browser = push.browser("phone")
    webpush.add_subscription(
        homes.pmux, webpush.Subscription.from_json(browser.subscription(), device="phone")
    )
    return installed


@pytest.fixture
def hubs() -> Iterator[list[Hub]]:
    started: list[Hub] = []
    yield started
    for hub in started:
        hub.stop()


def start_hub(hubs: list[Hub]) -> Hub:
    hub = make_hub(sources=False).start()  # notify=None: configured, so it runs
    hubs.append(hub)
    return hub


def notifier(hub: Hub) -> Notifier:
    found = find(hub)
    assert found is not None, "the configured hub runs no notifier"
    return found


def settle(hubs: list[Hub]) -> None:
    for hub in hubs:
        assert notifier(hub).wait_idle(15), "a notifier did not settle"


def applied(hubs: list[Hub], sid: str, state: State) -> None:
    """Until every hub applied the hook (each hub's thread does, after its 204): a notifier
    that has not had the transition yet reads idle."""

    def seen() -> list[str]:
        return [
            next((s.state.value for s in h.sessions() if s.session_id == sid), "") for h in hubs
        ]

    wait_until(lambda: seen() == [state.value] * len(hubs), what=lambda: f"{sid}: {seen()}")


def ask(installed: Installed, sid: str = "s-1", command: str = "make deploy") -> None:
    body = payload("PermissionRequest", session_id=sid, tool_name="Bash")
    body["tool_input"] = {"command": command}
    installed.fire(body)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_one_delivery_per_transition_and_destination_whatever_the_hubs(
    setup: Installed, hubs: list[Hub], http: Recorder, push: PushService, n: int
) -> None:
    for _ in range(n):
        start_hub(hubs)
    ask(setup)
    wait_until(lambda: http.count() >= 1 and len(push.delivered) >= 1, what="the deliveries")
    applied(hubs, "s-1", State.NEEDS_INPUT)
    settle(hubs)
    assert http.count() == 1 and len(push.delivered) == 1, (http.requests, push.delivered)
    assert not push.errors
    body = http.requests[0].json()
    assert body["title"] == "Needs you · acme-api"
    assert body["message"] == "asks to run: make deploy"
    pushed = push.delivered[0]
    assert pushed.payload["tag"] == "s-1" and pushed.payload["state"] == "needs-input"
    assert pushed.headers["urgency"] == "high" and int(pushed.headers["ttl"]) <= 600
    # a second transition (a review) is one more each, still once
    setup.fire(payload("Stop", session_id="s-1"))
    wait_until(lambda: http.count() >= 2, what="the review")
    applied(hubs, "s-1", State.REVIEW)
    settle(hubs)
    assert http.count() == 2
    assert http.requests[1].json()["title"] == "Done · acme-api"
    kinds = [p.payload["state"] for p in push.delivered]
    # the review, and the close of the answered dialog's notification, each once
    assert sorted(kinds) == ["answered", "needs-input", "review"], kinds
    contract = {"title", "body", "session_id", "state", "host", "url", "tag"}
    assert all(set(p.payload) == contract for p in push.delivered)
    store = NotifyStore(setup.homes.pmux.root / "notify.db")
    try:
        rows = store.deliveries()
        closes = [r for r in rows if r[0].startswith("close/")]
        # two transitions × (the channel, the browser), and the close of the first: whichever
        # hubs made them, each exactly once
        assert len(rows) - len(closes) == 4 and len(closes) == 1, rows
    finally:
        store.close()


def test_hubs_in_other_processes_share_the_claim(
    setup: Installed, hubs: list[Hub], http: Recorder, push: PushService, homes: Any
) -> None:
    start_hub(hubs)
    env = {**os.environ, "PMUX_WIDGET_HOME": str(homes.pmux.root)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "pmux_widget", "serve"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for _ in range(2)
    ]
    try:
        runtime = homes.pmux.runtime_dir
        wait_until(lambda: len(list(runtime.glob("*.json"))) == 3, 30, what="three hubs")
        for i in range(3):
            ask(setup, sid=f"s-{i}", command=f"step {i}")
        wait_until(lambda: http.count() >= 3, 20, what="three deliveries")
        settle(hubs)
        # the other processes: every claim is in the shared store; wait for their sends
        wait_until(lambda: len(push.delivered) >= 3, 20, what="three pushes")
        for proc in procs:
            proc.terminate()
            proc.wait(15)
        assert http.count() == 3 and len(push.delivered) == 3
        assert sorted(r.json()["message"] for r in http.requests) == [
            "asks to run: step 0",
            "asks to run: step 1",
            "asks to run: step 2",
        ]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)


def test_restart_and_spool_replay_send_nothing(
    setup: Installed, hubs: list[Hub], http: Recorder, push: PushService
) -> None:
    hub = start_hub(hubs)
    ask(setup)
    wait_until(lambda: http.count() == 1, what="the first delivery")
    settle(hubs)
    hub.stop()
    hubs.remove(hub)
    # while no hub runs, a hook spools: the next hub replays it silently
    ask(setup, sid="s-2", command="spooled")
    restarted = start_hub(hubs)
    wait_until(lambda: "s-2" in restarted.fleet, what="the replayed hook")
    assert restarted.fleet["s-1"].state.value == "needs-input"  # restored as it was
    settle(hubs)
    assert http.count() == 1 and len(push.delivered) == 1


def test_gone_subscription_is_pruned(
    setup: Installed, hubs: list[Hub], http: Recorder, push: PushService, homes: Any
) -> None:
    dead = push.browser("old-phone", status=410)
    webpush.add_subscription(homes.pmux, webpush.Subscription.from_json(dead.subscription()))
    start_hub(hubs)
    ask(setup)
    wait_until(lambda: len(webpush.load_subscriptions(homes.pmux)) == 1, what="the prune")
    (left,) = webpush.load_subscriptions(homes.pmux)
    assert left.device == "phone"

    def live() -> list[Any]:
        return [d for d in push.delivered if d.path == "/push/phone"]

    wait_until(live, what="the live browser's push")
    settle(hubs)
    assert len(live()) == 1


def test_answered_within_the_delay_is_never_sent(
    setup: Installed, hubs: list[Hub], http: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PMUX_WIDGET_NOTIFY_DELAY", "1")
    hub = start_hub(hubs)
    ask(setup)
    setup.fire(payload("PostToolUse", session_id="s-1", tool_name="Bash"))
    n = notifier(hub)
    wait_until(lambda: any(d.reason == "answered meanwhile" for _, d in n.log), what="the re-check")
    settle(hubs)
    assert http.count() == 0


def test_someone_looking_holds_the_push_back_until_they_stop(
    setup: Installed, hubs: list[Hub], http: Recorder, homes: Any
) -> None:
    with edit_config(homes.pmux) as box:
        box[0] = box[0].with_settings(looking_s=1.5)
    hub = start_hub(hubs)
    n = notifier(hub)
    n.report_presence("laptop", ["s-1"], visible=True, focused=True)
    ask(setup)
    wait_until(lambda: any(d.reason == "someone is looking" for _, d in n.log), what="the hold")
    assert http.count() == 0
    wait_until(lambda: http.count() == 1, 10, what="the delivery once they stopped looking")
    # a browser that shows another session, or is hidden, holds nothing back
    n.report_presence("laptop", ["other"], visible=True, focused=True)
    ask(setup, sid="s-2")
    wait_until(lambda: http.count() == 2, what="the second delivery")


def test_opted_in_actions_carry_a_token_the_hub_redeems_once(
    setup: Installed, hubs: list[Hub], push: PushService, homes: Any, http: Recorder
) -> None:
    with edit_config(homes.pmux) as box:
        box[0] = box[0].with_settings(actions=True)
    hub = start_hub(hubs)
    ask(setup)
    wait_until(lambda: push.delivered, what="the push")
    pushed = push.delivered[0].payload
    assert [a["action"] for a in pushed["actions"]] == ["approve", "deny", "open"]
    assert "always" not in json.dumps(pushed["actions"]).lower()
    body = http.requests[0].json() if http.requests else {}
    assert "token" not in json.dumps(body), "a channel never carries the token"
    typed: list[tuple[str, str]] = []

    def answer() -> Any:
        return notifier(hub).answers.answer(
            pushed["token"], "approve", host=hub.host_name, device="phone",
            session_of=hub.fleet.get, act=lambda sid, a, _: typed.append((sid, a)), now=now_ms(),
        )  # fmt: skip

    assert answer().status == 202 and typed == [("s-1", "approve")]
    assert answer().status == 409 and len(typed) == 1


def test_beyond_the_cap_one_digest_goes_whatever_the_hubs(
    setup: Installed, hubs: list[Hub], http: Recorder, homes: Any
) -> None:
    with edit_config(homes.pmux) as box:
        box[0] = box[0].with_settings(cap=2, cap_window_s=300)
    first, _ = start_hub(hubs), start_hub(hubs)
    for i in range(3):
        ask(setup, sid=f"s-{i}", command=f"step {i}")
        wait_until(lambda i=i: http.count() >= i + 1, what=f"message {i + 1}")
    ask(setup, sid="s-3", command="step 3")
    wait_until(
        lambda: any(d.reason == "cap: next digest" for n in map(notifier, hubs) for _, d in n.log),
        what="the fourth folded into the next digest",
    )
    settle(hubs)
    titles = [r.json()["title"] for r in http.requests]
    assert titles == ["Needs you · acme-api", "Needs you · acme-api", "3 sessions need you"]
    assert http.requests[2].json()["message"] == "acme-api"
    assert first.fleet["s-3"].state.value == "needs-input"


def test_a_channel_links_to_the_sessions_row_only_where_a_phone_can_reach_it(
    setup: Installed, hubs: list[Hub], http: Recorder, homes: Any
) -> None:
    """ntfy gets a click link and an Open button to the row, at ``link_base``; without one,
    no link (the server's ``/lab`` path means nothing on a phone)."""
    with edit_config(homes.pmux) as box:
        ntfy = Channel(f"ntfy://127.0.0.1:{http.port}/claude-topic")
        box[0] = type(box[0])((ntfy,), box[0].settings)
    hub = start_hub(hubs)
    notifier(hub).url_for = lambda sid: f"/user/al/lab?pmux-session={sid}"
    ask(setup)
    wait_until(lambda: http.count() == 1, what="the first message")
    first = http.requests[0]
    assert first.json()["title"] == "Needs you · acme-api"
    assert "x-click" not in first.headers and "x-actions" not in first.headers, first.headers
    with edit_config(homes.pmux) as box:
        box[0] = box[0].with_settings(link_base="https://lab.example.org")
    ask(setup, sid="s-2")
    wait_until(lambda: http.count() == 2, what="the second message")
    row = "https://lab.example.org/user/al/lab?pmux-session=s-2"
    headers = http.requests[1].headers
    assert headers.get("x-click") == row, headers
    assert headers.get("x-actions") == f"view, Open, {row}, clear=true", headers


def test_a_channel_added_within_one_tick_of_the_last_write_is_seen(homes: Any) -> None:
    """A running hub re-reads notify.json when it is a new file: a second write within one
    tick of the file system's clock (the same mtime) still brings its channel."""
    from pmux_widget.notify.config import NotifyConfig, config_path

    notifier = Notifier(homes.pmux, host="devbox")
    try:
        first, second = Channel("json://127.0.0.1:9/first"), Channel("json://127.0.0.1:9/second")
        with edit_config(homes.pmux) as box:
            box[0] = NotifyConfig((first,), box[0].settings)
        notifier._refresh()  # what each transition does before it decides
        assert notifier._dests("review", "p", "devbox") == [first.dest]
        stamp = config_path(homes.pmux).stat().st_mtime_ns
        with edit_config(homes.pmux) as box:
            box[0] = NotifyConfig((first, second), box[0].settings)
        os.utime(config_path(homes.pmux), ns=(stamp, stamp))  # the same tick
        notifier._refresh()
        assert notifier._dests("review", "p", "devbox") == [first.dest, second.dest]
    finally:
        notifier.stop_sync()
