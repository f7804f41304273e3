"""Web Push through the Jupyter server extension (``pmux_widget/jupyter/push.py``): a real
``jupyter server`` (``tests/jupyter_ext.py``), hooks fired through the installed script, and a
loopback push service that verifies each message's VAPID signature and decrypts it with the
subscribed browser's own key (``tests/notify_servers.py``): the only stand-in is the push
service itself (FCM, Mozilla's, Apple's are not reachable offline).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from pmux_widget.notify.config import notify_settings
from pmux_widget.system.clock import now_ms

from .helpers import wait_until, worker_script
from .jupyter_ext import Hooks, LabServer
from .notify_servers import Browser, PushService

S1 = "5b7c0f4e-0000-4000-8000-0000000000a1"
S2 = "5b7c0f4e-0000-4000-8000-0000000000a2"
CONTRACT = {"title", "body", "session_id", "state", "host", "url", "tag"}


@pytest.fixture
def push() -> Iterator[PushService]:
    service = PushService().start()
    yield service
    service.stop()


def start(tmp: Path, **settings: Any) -> LabServer:
    server = LabServer(tmp, env={"PMUX_WIDGET_NOTIFY_DELAY": "0"})
    notify_settings(server.pmux.root, cooldown_s=0, **settings)
    return server.start()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LabServer]:
    lab = start(tmp_path)
    try:
        yield lab
    finally:
        lab.stop()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def subscribe(server: LabServer, browser: Browser, device: str = "phone") -> dict[str, Any]:
    body = {**browser.subscription(), "device": device}
    answer = server.post("pmux/api/push/subscriptions", body)
    assert answer.status_code == 201, answer.text
    data: dict[str, Any] = answer.json()
    return data


def delete(server: LabServer, body: Any, **kwargs: Any) -> requests.Response:
    kwargs.setdefault("headers", server.headers())
    return requests.delete(server.url("pmux/api/push/subscriptions"), json=body, timeout=15,
                           **kwargs)  # fmt: skip


def ask(hooks: Hooks, sid: str, command: str = "make deploy") -> None:
    hooks.fire("PermissionRequest", sid, tool_name="Bash", tool_input={"command": command})


def test_key_subscribe_list_and_unsubscribe(server: LabServer, push: PushService) -> None:
    answer = server.get("pmux/api/push/key")
    assert answer.status_code == 200, answer.text
    key = answer.json()["public_key"]
    assert len(key) == 87 and set(key) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )  # an uncompressed P-256 point, base64url without padding
    assert server.get("pmux/api/push/key").json()["public_key"] == key  # made once
    push_dir = server.pmux.root / "push"
    assert mode(push_dir / "vapid.json") == 0o600

    phone = push.browser("phone")
    listed = subscribe(server, phone, "Pixel 8")
    assert listed["device"] == "Pixel 8" and listed["id"].startswith("push:")
    assert mode(push_dir / "subscriptions.json") == 0o600
    kept = json.loads((push_dir / "subscriptions.json").read_text())
    assert [s["endpoint"] for s in kept] == [phone.endpoint]
    browsers = server.get("pmux/api/push/subscriptions").json()["browsers"]
    assert [b["device"] for b in browsers] == ["Pixel 8"]
    assert phone.subscription()["keys"]["auth"] not in json.dumps(browsers), "keys never listed"
    # a browser that does not name itself is named from its User-Agent
    laptop = push.browser("laptop")
    ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36"
    answer = server.post("pmux/api/push/subscriptions", laptop.subscription(),
                         headers={**server.headers(), "User-Agent": ua})  # fmt: skip
    assert answer.status_code == 201 and answer.json()["device"] == "Chrome on Linux"
    overview = server.get("pmux/api/notify").json()
    assert {b["device"] for b in overview["browsers"]} == {"Pixel 8", "Chrome on Linux"}
    assert all(b["status"] == "ok" for b in overview["browsers"])

    bad = server.post("pmux/api/push/subscriptions", {"endpoint": phone.endpoint})
    assert bad.status_code == 400 and "keys" in bad.json()["error"]
    assert server.post("pmux/api/push/subscriptions", b"{nope").status_code == 400

    assert delete(server, {"endpoint": phone.endpoint}).status_code == 204
    assert delete(server, {"endpoint": phone.endpoint}).status_code == 404
    assert delete(server, {"id": listed["id"]}).status_code == 404
    browsers = server.get("pmux/api/push/subscriptions").json()["browsers"]
    assert [b["device"] for b in browsers] == ["Chrome on Linux"]


def test_every_route_refuses_without_jupyter_auth(server: LabServer) -> None:
    for method, path in [
        ("GET", "pmux/api/push/key"),
        ("GET", "pmux/api/push/subscriptions"),
        ("POST", "pmux/api/push/subscriptions"),
        ("DELETE", "pmux/api/push/subscriptions"),
        ("POST", "pmux/api/push/presence"),
        ("POST", "pmux/api/push/answer"),
        ("GET", "pmux/api/notify"),
    ]:
        answer = requests.request(method, server.url(path), data=b"{}", timeout=15)
        assert answer.status_code == 403, (method, path, answer.status_code)
    # the worker's script is public (static, no secret): a browser fetches it as a
    # service worker, which JupyterHub does not let a login cookie alone authenticate
    worker = worker_script(server.url("pmux/sw.js"), timeout=15)
    assert not worker.headers.get("Set-Cookie"), "no login, no cookie"

    # a browser's login cookie: POST and DELETE need Jupyter's XSRF value too
    browser = server.cookie_session()
    sub = Browser.make("http://127.0.0.1:9/push/x").subscription()
    url = server.url("pmux/api/push/subscriptions")
    assert browser.post(url, json=sub, timeout=15).status_code == 403
    assert browser.delete(url, json={"endpoint": sub["endpoint"]}, timeout=15).status_code == 403
    xsrf = {"X-XSRFToken": str(browser.cookies["_xsrf"])}
    assert browser.post(url, json=sub, headers=xsrf, timeout=15).status_code == 201
    presence: dict[str, Any] = {"device": "d", "sessions": [], "visible": True, "focused": True}
    answer = browser.post(server.url("pmux/api/push/presence"), json=presence, timeout=15)
    assert answer.status_code == 403
    answer = browser.post(server.url("pmux/api/push/presence"), json=presence, headers=xsrf,
                          timeout=15)  # fmt: skip
    assert answer.status_code == 204
    worker = browser.get(server.url("pmux/sw.js"), timeout=15)
    assert worker.status_code == 200 and "notificationclick" in worker.text
    assert worker.headers["Content-Type"].startswith("text/javascript")
    assert "default-src 'none'" not in worker.headers.get("Content-Security-Policy", "")

    # the answer route: the service worker has the cookie but not the XSRF value; the
    # single-use token is what authorizes it, and a foreign Origin is still refused
    answer_url = server.url("pmux/api/push/answer")
    body = {"token": "not-a-token", "action": "approve"}
    answer = browser.post(answer_url, json=body, timeout=15)
    assert answer.status_code == 404 and answer.json()["reason"] == "unknown token"
    foreign = browser.post(answer_url, json=body, headers={"Origin": "https://evil.example"},
                           timeout=15)  # fmt: skip
    assert foreign.status_code == 404 and "unknown token" not in foreign.text
    assert requests.post(answer_url, json=body, timeout=15).status_code == 403


def test_a_hook_pushes_the_contract_payload_once(server: LabServer, push: PushService) -> None:
    phone = push.browser("phone")
    subscribe(server, phone)
    hooks = Hooks(server)
    ask(hooks, S1, "make deploy")
    wait_until(lambda: push.delivered or push.errors, 30, what="the push")
    assert not push.errors, push.errors
    delivered = push.delivered[0]
    assert (
        delivered.vapid_ok and delivered.claims["aud"] == f"http://127.0.0.1:{push.recorder.port}"
    )
    payload = delivered.payload
    assert set(payload) == CONTRACT, payload
    assert payload["session_id"] == payload["tag"] == S1
    assert payload["state"] == "needs-input"
    assert payload["title"] == "Needs you · acme-api"
    assert "make deploy" in payload["body"]
    assert payload["url"] == f"/lab?pmux-session={S1}"
    assert delivered.headers["ttl"] and delivered.headers["content-encoding"] == "aes128gcm"

    # the dialog answered in the terminal: its notification is closed on the phone
    hooks.fire("PostToolUse", S1, tool_name="Bash", tool_input={"command": "make deploy"})
    wait_until(lambda: len(push.delivered) == 2, 30, what="the closing message")
    closing = push.delivered[1].payload
    assert set(closing) == CONTRACT and closing["state"] == "answered" and closing["tag"] == S1


def test_a_failing_browser_is_shown_failing(server: LabServer, push: PushService) -> None:
    """A push service that refuses (500, three tries): the panel's overview says so, like
    ``doctor``; a working browser next to it stays "ok"."""
    subscribe(server, push.browser("broken", status=500), "old tablet")
    subscribe(server, push.browser("phone"), "phone")
    ask(Hooks(server), S1)

    def status() -> dict[str, str]:
        browsers = server.get("pmux/api/notify").json()["browsers"]
        return {b["device"]: b["status"] for b in browsers}

    wait_until(lambda: status()["old tablet"].startswith("failing"), 60, what=status)
    assert "500" in status()["old tablet"] and status()["phone"] == "ok"


def test_someone_looking_at_the_session_holds_the_push_back(
    tmp_path: Path, push: PushService
) -> None:
    server = start(tmp_path, looking_s=6)
    try:
        subscribe(server, push.browser("phone"))
        presence = {"device": "laptop-tab-1", "sessions": [S1], "visible": True,
                    "focused": True, "input_at": now_ms()}  # fmt: skip
        assert server.post("pmux/api/push/presence", presence).status_code == 204
        hooks = Hooks(server)
        ask(hooks, S1)  # shown, visible, focused, used: held back
        ask(hooks, S2)  # not shown in that page: goes at once
        wait_until(lambda: len(push.delivered) >= 1, 30, what="the first push")
        assert push.delivered[0].payload["session_id"] == S2, "the looked-at one went first"
        # once nobody has touched the page for looking_s, the held one goes
        wait_until(lambda: len(push.delivered) >= 2, 30, what="the held push")
        assert push.delivered[1].payload["session_id"] == S1
        bad = server.post("pmux/api/push/presence", {"device": "x", "sessions": "S1"})
        assert bad.status_code == 400
    finally:
        server.stop()


def expire(server: LabServer, token: str) -> None:
    """As if 5 minutes passed: the token's deadline moved into the past in the store."""
    with sqlite3.connect(server.pmux.root / "notify.db") as db:
        hashed = hashlib.sha256(token.encode()).hexdigest()
        assert db.execute("UPDATE answer_tokens SET expires_at = 1 WHERE hash = ?",
                          (hashed,)).rowcount == 1  # fmt: skip


@pytest.mark.timeout(240)
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_answer_from_the_notification_once(tmp_path: Path, push: PushService) -> None:
    """The scripted demo session (a simulated Claude Code in a private tmux pane) asks; its
    push carries Allow once / Deny / Open and a token; the token approves once (the keys
    reach the pane: the session goes on as ``action:approve@<device>``, in its history too),
    a replay and an expired token are refused and type nothing, and each attempt is logged
    with its device."""
    from pmux_widget import hooks as pmux_hooks
    from pmux_widget.demo.driver import ScriptedFleet

    server = start(tmp_path, actions=True)
    pmux_hooks.install(server.claude / "settings.json", server.pmux)
    (server.claude / "projects").mkdir(exist_ok=True)
    phone = push.browser("phone")
    subscribe(server, phone, "Pixel 8")
    fleet = ScriptedFleet(server.claude, server.pmux.root, tmp_path / "projects", sessions=1,
                          seed=11, speed=1.0)  # fmt: skip
    used: set[str] = set()

    def fresh_token() -> dict[str, Any] | None:
        for d in push.delivered:
            token = d.payload.get("token")
            if token and token not in used:
                used.add(token)
                return dict(d.payload)
        return None

    def post(token: str, action: str = "approve") -> requests.Response:
        body = {"token": token, "action": action, "endpoint": phone.endpoint}
        return server.post("pmux/api/push/answer", body)

    try:
        fleet.start()
        assert fleet.panes is not None, fleet.note
        first = wait_until(fresh_token, 90, what=lambda: f"a dialog's push: {push.delivered}")
        assert first is not None
        assert [a["action"] for a in first["actions"]] == ["approve", "deny", "open"]
        assert "always" not in json.dumps(first["actions"]).lower()
        expire(server, first["token"])
        late = post(first["token"])
        assert late.status_code == 410 and late.json()["reason"] == "expired"
        wait_until(
            lambda: any(d.payload["state"] == "update" for d in push.delivered),
            30,
            what="the notification updated to say it was too late",
        )
        # the next dialog (an earlier one may be answered by the script meanwhile: 409)
        outcomes: list[tuple[int, str]] = []

        def approved() -> dict[str, Any] | None:
            pushed = fresh_token()
            if pushed is None:
                return None
            answer = post(pushed["token"])
            outcomes.append((answer.status_code, answer.json()["reason"]))
            assert answer.status_code in (202, 409), outcomes
            return pushed if answer.status_code == 202 else None

        pushed = wait_until(approved, 150, 0.05, what=lambda: f"an approve; {outcomes}")
        assert pushed is not None
        sid = pushed["session_id"]

        def source() -> str | None:
            rows = server.get("pmux/api/sessions").json()["sessions"]
            return next((s["source"] for s in rows if s["session_id"] == sid), None)

        by_phone = "action:approve@Pixel 8 (notification)"
        wait_until(lambda: source() == by_phone, 30, what=lambda: f"approved: {source()}")
        # the session's history (the store every hub and pmux_widget.history() read) says so
        from pmux_widget.runtime.store import Store

        store = Store(server.pmux.db_path, readonly=True)
        try:
            assert by_phone in [t.source for t in store.history(sid)], store.history(sid)
        finally:
            store.close()
        replay = post(pushed["token"])
        assert replay.status_code == 409 and replay.json()["reason"] == "already used"
        assert post(pushed["token"], "always").status_code == 400
        history = server.get("pmux/api/notify").json()["answers"]
        outcomes_seen = [(a["device"], a["outcome"]) for a in history]
        assert ("Pixel 8", "410 expired") in outcomes_seen
        assert ("Pixel 8", "202 answered") in outcomes_seen
        assert ("Pixel 8", "409 already used") in outcomes_seen
    finally:
        fleet.stop()
        server.stop()


def test_a_click_opens_this_servers_page() -> None:
    from pmux_widget.jupyter.push import page_url

    assert page_url("/", "/lab") == "/lab"
    assert page_url("/user/alice/", "/user/alice/lab") == "/user/alice/lab"
    assert page_url("/", "/tree") == "/tree"  # Notebook 7: its tree page has the panel
    assert page_url("/user/alice/", "/user/alice/tree") == "/user/alice/tree"
