"""pmux-widget where teams run Jupyter: a real JupyterHub (tests/jupyterhub_hub.py:
DummyAuthenticator, SimpleLocalProcessSpawner, configurable-http-proxy), two users, alice and
bob, each with their own HOME, PMUX_WIDGET_HOME and CLAUDE_CONFIG_DIR, their hooks installed
by the spawner's command (docs/jupyterhub.md). One hub for the module.

- the routes answer each user's own token under ``/user/<name>/`` and refuse the other's;
- a hook reaches only its own user's server;
- in Chromium after a login: the status bar, the panel, Approve from the panel on a REAL
  Claude Code session (the newest pinned CLI in a private tmux, the scripted model), "Notify
  this device" (the service worker registers under ``/user/alice/pmux/``: JupyterHub used to
  answer its script with a redirect) and a subscription stored in alice's home, the push of
  the next dialog (to a loopback push service) and Allow once from its notification;
- a server JupyterHub stops leaves no runtime file.

Stand-ins, as in test_push_worker.py: the push service is a loopback one (offline headless
Chromium cannot subscribe: ``PushManager.subscribe`` returns a subscription made by the
test), messages reach the worker through the DevTools protocol, and the notification's click
is a ``NotificationEvent`` dispatched in the worker around the real notification.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from pmux_widget.core.notify_rules import SAME_TRANSITION_MS
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import NEWEST, ClaudeEnv
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.notify.config import notify_settings
from pmux_widget.system.clock import now_ms

from ..helpers import WorkerNotifications, launch_chromium, wait_until, worker_script
from ..jupyterhub_hub import HubUnavailable, HubUser, JupyterHub
from ..notify_servers import PushService
from .conftest import LabPage, _unavailable, newest_cli
from .test_lab_extension import PANEL, wait_status
from .test_push_worker import STUB

# the module's hub (JupyterHub, its proxy, two servers) starts inside the first test's time
pytestmark = [pytest.mark.browser, pytest.mark.real_claude, pytest.mark.timeout(600)]

SID = "7a1c2e3f-0000-4000-8000-0000000a11ce"


@dataclass
class Setup:
    hub: JupyterHub
    alice: HubUser
    bob: HubUser
    cli: ClaudeEnv
    binary: Path
    push: PushService


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    binary = newest_cli()
    root = tmp_path_factory.mktemp("jupyterhub")
    push = PushService().start()
    with ScriptedModel() as model:
        cli = ClaudeEnv(model.base_url, root=root / "cli-alice", version=NEWEST)
        try:
            hub = JupyterHub(root / "hub", ("alice", "bob"), claude={"alice": cli.config_dir})
        except HubUnavailable as exc:
            _unavailable(str(exc))
        alice_pmux = hub.users["alice"].pmux
        cli.extra_env["PMUX_WIDGET_HOME"] = str(alice_pmux.root)
        # pushed at once, with Allow once / Deny, as soon as the page is not used for 1 s
        notify_settings(alice_pmux.root, cooldown_s=0, looking_s=1, actions=True)
        hub.start()
        try:
            alice, bob = hub.spawn("alice"), hub.spawn("bob")
            yield Setup(hub, alice, bob, cli, binary, push)
        finally:
            left = hub.stop()
            push.stop()
            assert not left, f"JupyterHub left {left} running; log:\n{hub.log()}"


def test_each_users_routes_answer_them_and_refuse_the_other(setup: Setup) -> None:
    alice, bob = setup.alice, setup.bob
    for user, other in ((alice, bob), (bob, alice)):
        assert user.get("pmux/api/sessions").status_code == 200
        assert user.get("pmux/api/notify").status_code == 200
        refused = user.get("pmux/api/sessions", token=other.token)
        assert refused.status_code == 403, (user.name, refused.status_code)
        acted = user.post("pmux/api/actions", {"action": "approve", "session_id": SID},
                          token=other.token)  # fmt: skip
        assert acted.status_code == 403
        anonymous = requests.get(user.url("pmux/api/sessions"), allow_redirects=False, timeout=30)
        assert anonymous.status_code == 403
    # each server's hub runs as its user, over that user's own home
    [a], [b] = alice.runtime_files(), bob.runtime_files()
    assert a["pid"] != b["pid"] and a["port"] != b["port"]
    assert (setup.cli.config_dir / "settings.json").exists()
    assert "status-hook" in (bob.claude / "settings.json").read_text(), "the spawner's install"

    # the service worker's script, fetched as a browser fetches one (no XSRF header, no
    # cookie needed): 200, not JupyterHub's redirect to its OAuth page
    worker_script(alice.url("pmux/sw.js"), timeout=30)


def _hook_commands(user: HubUser) -> dict[str, str]:
    groups = json.loads((user.claude / "settings.json").read_text())["hooks"]
    return {
        event: h["command"]
        for event, gs in groups.items()
        for g in gs
        for h in g["hooks"]
        if "status-hook" in h["command"]
    }


def _fire(user: HubUser, event: str, session_id: str, **fields: Any) -> None:
    body = {"session_id": session_id, "transcript_path": f"/nowhere/{session_id}.jsonl",
            "cwd": f"/home/{user.name}/project", "hook_event_name": event, **fields}  # fmt: skip
    result = subprocess.run(
        ["/bin/sh", "-c", _hook_commands(user)[event]],
        input=json.dumps(body).encode() + b"\n",
        env={**user.env, "TMUX_PANE": ""},
        capture_output=True,
        timeout=15,
    )
    assert result.returncode == 0 and result.stdout == b"", result


def _ids(user: HubUser) -> set[str]:
    sessions = user.get("pmux/api/sessions").json()["sessions"]
    return {s["session_id"] for s in sessions}


def test_hooks_reach_only_their_users_server(setup: Setup) -> None:
    alice, bob = setup.alice, setup.bob
    bobs = "b0b00000-0000-4000-8000-000000000b0b"
    _fire(bob, "UserPromptSubmit", bobs, prompt="bob's work")
    wait_until(lambda: bobs in _ids(bob), 30, what="bob's session in bob's server")
    alices = "a11ce000-0000-4000-8000-0000000a11ce"
    _fire(alice, "UserPromptSubmit", alices, prompt="alice's work")
    wait_until(lambda: alices in _ids(alice), 30, what="alice's session in alice's server")
    assert bobs not in _ids(alice) and alices not in _ids(bob)
    # bob's hook script only knows bob's hubs (his PMUX_WIDGET_HOME)
    assert str(bob.pmux.root) in _hook_commands(bob)["UserPromptSubmit"]
    for user, sid in ((alice, alices), (bob, bobs)):
        _fire(user, "SessionEnd", sid, reason="other")


def test_an_open_pages_reports_are_not_activity(setup: Setup) -> None:
    """JupyterHub's idle culler reads the server's last activity: a tab left open, whose
    panel reports presence every 30 s, must not keep a server alive forever."""
    alice = setup.alice

    def last_activity() -> str:
        return str(alice.get("api/status").json()["last_activity"])

    before = last_activity()
    presence = {"device": "page-x", "sessions": [], "visible": True, "focused": False}
    assert alice.post("pmux/api/push/presence", presence).status_code == 204
    assert alice.get("pmux/api/notify").status_code == 200
    assert last_activity() == before
    assert alice.get("api/contents").status_code == 200  # a user's own request counts
    wait_until(lambda: last_activity() != before, 10, what="a tracked request to count")


def _login(page: Any, hub: JupyterHub, name: str) -> None:
    """JupyterHub's login form (DummyAuthenticator: any password), then its OAuth handshake
    with the user's server, to JupyterLab."""
    page.goto(f"{hub.origin}/hub/login?next=/user/{name}/lab")
    page.fill("#username_input", name)
    page.fill("#password_input", "any password")
    page.click("#login_submit")
    page.wait_for_url(f"{hub.origin}/user/{name}/lab*", timeout=90_000)
    page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
    page.locator(f"{PANEL} .pmux-root").wait_for(state="attached", timeout=60_000)


def _markers(cli: ClaudeEnv) -> list[Path]:
    return sorted(cli.cwd.glob("sim-*.txt"))


def test_alice_in_chromium_sees_approves_and_is_notified(
    setup: Setup, playwright_sync: Any
) -> None:
    hub, alice, cli, push = setup.hub, setup.alice, setup.cli, setup.push
    origin = hub.origin
    phone = push.browser("alice-laptop")
    browser = launch_chromium(playwright_sync)
    tc: TmuxClaude | None = None
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.grant_permissions(["notifications"], origin=origin)
        context.add_init_script(f"({STUB})({json.dumps(phone.subscription())})")
        page = context.new_page()
        page.set_default_timeout(60_000)
        lab = LabPage(alice, page)  # type: ignore[arg-type]
        _login(page, hub, "alice")
        assert page.evaluate("window.isSecureContext"), "127.0.0.1 is a secure context"
        lab.command("pmux-widget:show-panel")
        wait_status(lab, "Claude: 0", "idle")

        # "Notify this device": the worker registers at /user/alice/pmux/sw.js (a redirect
        # there failed the registration) and alice's server keeps the subscription
        cdp = context.new_cdp_session(page)
        registrations: list[dict[str, Any]] = []
        cdp.on(
            "ServiceWorker.workerRegistrationUpdated",
            lambda event: registrations.extend(event["registrations"]),
        )
        cdp.send("ServiceWorker.enable")
        button = page.locator(".pmux-lab-push-subscribe")
        button.scroll_into_view_if_needed()
        button.click()
        page.wait_for_function(
            "() => document.querySelector('.pmux-lab-push-note')?.textContent"
            "?.includes('is notified')"
        )
        subs_file = alice.pmux.root / "push" / "subscriptions.json"
        assert [s["endpoint"] for s in json.loads(subs_file.read_text())] == [phone.endpoint]
        assert not (setup.bob.pmux.root / "push" / "subscriptions.json").exists()
        scope = f"{origin}/user/alice/pmux/"
        registration = wait_until(
            lambda: next(
                (r for r in registrations if r["scopeURL"] == scope and not r["isDeleted"]),
                None,
            ),
            30,
            what=lambda: f"the worker's registration at {scope}: {registrations}",
        )
        worker = wait_until(
            lambda: next((w for w in context.service_workers if "pmux/sw.js" in w.url), None),
            30,
            what="the service worker",
        )
        assert worker.url == f"{scope}sw.js"
        # read only once the worker's shows are done (WorkerNotifications says why)
        notes = WorkerNotifications(worker)

        # a real Claude Code session of alice's: in the panel, approved from its row
        tc = TmuxClaude(cli, setup.binary)
        tc.start(timeout=90)
        sid = wait_until(tc.session_id, 30, what="the CLI's PID file")
        lab.wait_state(sid, "idle", within=PANEL, timeout=45)
        tc.type_prompt("run the command")
        tc.wait_dialog()
        lab.wait_state(sid, "needs-input", within=PANEL, timeout=45)
        wait_status(lab, "1 need you", "needs-input")
        first = wait_until(
            lambda: [d for d in push.delivered if d.payload.get("state") == "needs-input"],
            60,
            what=lambda: f"the push of the dialog ({push.errors})",
        )[0].payload
        first_seen = now_ms()
        assert not push.errors, push.errors
        assert first["session_id"] == sid and first["token"]
        assert first["url"] == f"/user/alice/lab?pmux-session={sid}"
        row = lab.row(sid, within=PANEL)
        row.scroll_into_view_if_needed()
        row.locator("button.pmux-act--approve").click()
        lab.wait_state(sid, "review", within=PANEL, timeout=45)
        assert len(_markers(cli)) == 1, "the approved command ran"

        # the next dialog, answered from its notification (Allow once), with alice's login
        # cookie from the worker and the single-use token. The notifier takes two
        # needs-input of one session less than SAME_TRANSITION_MS apart for one transition
        # (hubs see it at slightly different times) and pushes it once: the scripted
        # turn is faster than that, so the second dialog waits for the clock.
        wait_until(
            lambda: now_ms() - first_seen > SAME_TRANSITION_MS,
            SAME_TRANSITION_MS / 1000 + 5,
            interval=0.2,
            what="the first dialog to be a distinct transition",
        )
        count = len(push.delivered)
        tc.type_prompt("run the command")
        tc.wait_dialog()
        lab.wait_state(sid, "needs-input", within=PANEL, timeout=45)
        second = wait_until(
            lambda: [d for d in push.delivered[count:] if d.payload.get("state") == "needs-input"],
            60,
            what=lambda: f"the push of the second dialog ({push.errors})",
        )[0].payload
        assert second["token"] != first["token"]
        notes.expect()
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": origin, "registrationId": registration["registrationId"],
             "data": json.dumps(second)},
        )  # fmt: skip
        wait_until(
            lambda: [n for n in notes() if (n["data"].get("tag") or n["tag"]) == second["tag"]],
            30,
            what=lambda: f"the notification: {notes.describe()} payload tag {second.get('tag')!r}",
        )
        worker.evaluate(
            """async ([tag, action]) => {
                const [n] = (await self.registration.getNotifications())
                    .filter(n => (n.data.tag || n.tag) === tag);
                self.dispatchEvent(new NotificationEvent('notificationclick',
                                                         {notification: n, action}));
                return true; }""",
            [second["tag"], "approve"],
        )
        lab.wait_state(sid, "review", within=PANEL, timeout=45)
        wait_until(lambda: len(_markers(cli)) == 2, 30, what="the command allowed from the phone")

        # the token was single-use; a stale one (the first dialog's) is refused: both with
        # alice's own login from the worker, which JupyterHub accepts for this route
        again = """async ([base, token]) => {
            const r = await fetch(base + 'pmux/api/push/answer', {method: 'POST',
              credentials: 'same-origin', headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({token, action: 'approve'})});
            return [r.status, (await r.json()).reason]; }"""
        base = f"{origin}/user/alice/"
        assert worker.evaluate(again, [base, second["token"]]) == [409, "already used"]
        assert worker.evaluate(again, [base, first["token"]]) == [409, "answered meanwhile"]
        assert len(_markers(cli)) == 2, "nothing typed for a refused answer"

        # a click on a notification (no button) goes to alice's open JupyterLab page under
        # /user/alice/ and tells it the session (with no page open, it opens the payload's
        # /user/alice/lab?pmux-session=<id>)
        page.evaluate(
            """() => { window.__pmux = [];
               navigator.serviceWorker.addEventListener('message', e => window.__pmux.push(e.data));
               navigator.serviceWorker.startMessages(); }"""
        )
        done = {**first, "state": "review", "title": "Done", "token": "", "actions": []}
        notes.expect()
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": origin, "registrationId": registration["registrationId"],
             "data": json.dumps(done)},
        )  # fmt: skip
        wait_until(
            lambda: [
                n
                for n in notes()
                if (n["data"].get("tag") or n["tag"]) == done["tag"] and n["title"] == "Done"
            ],
            30,
            what=lambda: f"the review notification: {notes.describe()}",
        )
        worker.evaluate(
            """async (tag) => {
                const [n] = (await self.registration.getNotifications())
                    .filter(n => (n.data.tag || n.tag) === tag);
                self.dispatchEvent(new NotificationEvent('notificationclick',
                                                         {notification: n, action: ''}));
                return true; }""",
            done["tag"],
        )
        heard = wait_until(lambda: page.evaluate("window.__pmux"), 30, what="the click")
        assert heard == [{"type": "pmux-session", "session_id": sid}]
    finally:
        if tc is not None:
            tc.close()
        browser.close()


def test_a_server_jupyterhub_stops_leaves_no_runtime_file(setup: Setup) -> None:
    """JupyterHub stops a server with SIGINT (no tty), then SIGTERM, then SIGKILL."""
    bob = setup.bob
    [info] = bob.runtime_files()
    answer = setup.hub.api("DELETE", "users/bob/server")
    assert answer.status_code in (202, 204), answer.text
    wait_until(
        lambda: not setup.hub.api("GET", "users/bob").json()["servers"],
        60,
        what="bob's server to stop",
    )
    assert bob.runtime_files() == [], f"left behind by pid {info['pid']}"
