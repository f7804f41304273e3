"""The service worker (``pmux_widget/jupyter/sw.js``) in headless Chromium, on a real Jupyter
server with the extension: registered from a JupyterLab page at ``{base}pmux/sw.js`` with its
default scope, push messages delivered through the DevTools protocol
(``ServiceWorker.deliverPushMessage``: the browser's own push path from the worker's event on),
and notification clicks dispatched in the worker.

Stand-ins, as nothing else runs offline: no push service (``pushManager.subscribe()`` in
offline headless Chromium fails with "AbortError: Registration failed - permission denied"),
so the messages come through CDP, encrypted by nobody; and no human click (headless Chromium
shows no notification to click), so ``notificationclick`` is a ``NotificationEvent`` built
in the worker around the real notification ``getNotifications()`` returns.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
import requests

from ..helpers import WorkerNotifications, launch_chromium, wait_until, worker_script
from ..jupyter_ext import TOKEN, LabServer
from .conftest import LabUnavailable, _unavailable, check_available

SID = "6c1d0a9e-0000-4000-8000-00000000beef"
BASE = "/user/alice/"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[LabServer]:
    try:
        check_available()
    except LabUnavailable as exc:
        _unavailable(str(exc))
    # under a JupyterHub-like base_url: the worker's scope and routes follow it
    server = LabServer(tmp_path, base_url=BASE, lab=True)
    try:  # a server that did not answer in time is stopped too (else it loads the machine)
        yield server.start()
    finally:
        server.stop()


def payload(state: str, title: str, body: str, **extra: Any) -> str:
    return json.dumps(
        {
            "title": title,
            "body": body,
            "session_id": SID,
            "state": state,
            "host": "devbox",
            "url": f"{BASE}lab?pmux-session={SID}",
            "tag": SID,
            **extra,
        }
    )


def test_push_shows_replaces_closes_and_clicks_reach_the_page(
    served: LabServer, playwright_sync: Any
) -> None:
    origin = f"http://127.0.0.1:{served.port}"
    with nullcontext(playwright_sync) as playwright:
        browser = launch_chromium(playwright)
        try:
            context = browser.new_context()
            context.grant_permissions(["notifications"], origin=origin)
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(served.url(f"lab?token={TOKEN}"))  # logs in: the cookie from now on
            page.wait_for_selector("#jp-main-dock-panel", state="attached")
            assert page.evaluate("window.isSecureContext"), "127.0.0.1 is a secure context"
            # what the page hears from the worker
            page.evaluate(
                """() => { window.__pmux = [];
                   navigator.serviceWorker.addEventListener(
                     'message', e => window.__pmux.push(e.data));
                   navigator.serviceWorker.startMessages(); }"""
            )
            cdp = context.new_cdp_session(page)
            registrations: list[dict[str, Any]] = []
            cdp.on(
                "ServiceWorker.workerRegistrationUpdated",
                lambda event: registrations.extend(event["registrations"]),
            )
            # the worker's versions and their running status, for a failure's report
            versions: list[str] = []
            cdp.on(
                "ServiceWorker.workerVersionUpdated",
                lambda event: versions.extend(
                    f"{v['versionId']}:{v['runningStatus']}/{v['status']}"
                    for v in event["versions"]
                ),
            )
            cdp.send("ServiceWorker.enable")  # else deliverPushMessage does nothing
            scope = page.evaluate(
                """async (base) => {
                     const reg = await navigator.serviceWorker.register(base + 'pmux/sw.js');
                     // not serviceWorker.ready: that waits for a worker whose scope holds
                     // this page, and the page (lab) is outside {base}pmux/
                     const w = reg.installing || reg.waiting || reg.active;
                     if (w.state !== 'activated') await new Promise(done =>
                       w.addEventListener('statechange', () => w.state === 'activated' && done()));
                     return reg.scope; }""",
                BASE,
            )
            assert scope == f"{origin}{BASE}pmux/"
            # a plain `jupyter lab --ServerApp.base_url=/user/alice/`: the script is there
            # without a login too, as a browser's worker fetch under JupyterHub needs it
            worker_script(served.url("pmux/sw.js"), timeout=15)

            # The sync API hands events (the CDP registration updates, the context's
            # "serviceworker") to Python only while one of its calls runs. Chromium's watcher
            # behind ServiceWorker.enable starts asynchronously (it reads the stored
            # registrations first, slower on a loaded machine), so its report of the new
            # registration can come after register() resolved: a poll that makes no
            # Playwright call then never sees it and times out. Each poll here makes one.
            def registered() -> dict[str, Any] | None:
                page.evaluate("0")
                return next(
                    (r for r in registrations if r["scopeURL"] == scope and not r["isDeleted"]),
                    None,
                )

            registration = wait_until(
                registered, 30, what=lambda: f"the registration's id: {registrations}"
            )

            def pmux_worker(w: Any) -> bool:
                return "pmux/sw.js" in str(w.url)

            worker = next((w for w in context.service_workers if pmux_worker(w)), None)
            if worker is None:  # not attached yet: its event is still to be delivered
                worker = context.wait_for_event("serviceworker", pmux_worker, timeout=30_000)

            def deliver(data: str) -> None:
                cdp.send(
                    "ServiceWorker.deliverPushMessage",
                    {"origin": origin, "registrationId": registration["registrationId"],
                     "data": data},
                )  # fmt: skip

            def seen(what: str) -> Callable[[], str]:
                return lambda: f"waiting for {what} (the worker's versions: {versions})"

            # read only once the worker's shows are done (WorkerNotifications says why)
            shown = WorkerNotifications(worker)

            shown.expect()
            deliver(payload("needs-input", "Needs you · acme-api", "asks to run: make deploy"))
            first = wait_until(shown, 30, what=seen("the first notification"))
            assert [(n["title"], n["tag"]) for n in first] == [("Needs you · acme-api", SID)]
            assert first[0]["body"] == "asks to run: make deploy"
            assert first[0]["actions"] == [], "no buttons unless the payload carries a token"

            # a newer state of the same session replaces it (one notification per tag)
            shown.expect()
            deliver(payload("review", "Done · acme-api", "2 failed, 140 passed"))
            wait_until(
                lambda: [n["title"] for n in shown()] == ["Done · acme-api"],
                30,
                what=lambda: f"the replacement: {shown.describe()}",
            )
            # "answered" closes the session's notification
            deliver(payload("answered", "", ""))
            wait_until(lambda: shown() == [], 30, what=lambda: f"the close: {shown.describe()}")

            # a click focuses the open JupyterLab page and tells it the session
            shown.expect()
            deliver(payload("needs-input", "Needs you · acme-api", "asks to run: make deploy"))
            wait_until(shown, 30, what=seen("the notification to click"))
            click = """async ([tag, action]) => {
                const [n] = (await self.registration.getNotifications())
                    .filter(n => (n.data.tag || n.tag) === tag);
                self.dispatchEvent(new NotificationEvent('notificationclick',
                                                         {notification: n, action}));
                return true; }"""
            worker.evaluate(click, [SID, ""])
            heard = wait_until(
                lambda: page.evaluate("window.__pmux"), 30, what="the page to hear the click"
            )
            assert heard == [{"type": "pmux-session", "session_id": SID}]
            wait_until(lambda: shown() == [], 30, what="the clicked notification to close")

            # Allow once posts the token with the login cookie and no _xsrf: the server
            # answers (an unknown token: refused, nothing typed) and the notification says so
            actions = [
                {"action": "approve", "title": "Allow once"},
                {"action": "deny", "title": "Deny"},
                {"action": "open", "title": "Open"},
            ]
            shown.expect()
            deliver(payload("needs-input", "Needs you · acme-api", "asks to run: make deploy",
                            actions=actions, token="not-a-real-token"))  # fmt: skip
            with_buttons = wait_until(shown, 30, what=seen("the notification with buttons"))
            # Chromium shows two buttons at most: "Open" is the click on the notification
            max_actions = worker.evaluate("Notification.maxActions")
            expected = ["approve", "deny", "open"] if max_actions >= 3 else ["approve", "deny"]
            assert [action for action, _ in with_buttons[0]["actions"]] == expected
            assert with_buttons[0]["data"]["token"] == "not-a-real-token"
            worker.evaluate(TRACE)
            shown.expect()  # the refusal
            worker.evaluate(click, [SID, "approve"])

            def why() -> str:
                try:
                    trace = worker.evaluate("self.__pmuxTrace || 'no trace: a new worker'")
                except Exception as exc:  # the worker is gone
                    trace = repr(exc)
                answered = [ln for ln in served.log().splitlines() if "push/answer" in ln]
                return (
                    f"the refusal: {shown.describe()}; the worker did: {trace}; the server's log "
                    f"of the answer route: {answered}; the worker's versions: {versions}"
                )

            refused = wait_until(
                lambda: [n for n in shown() if n["title"] == "Not answered"], 30, what=why
            )
            assert refused[0]["body"] == "unknown token" and refused[0]["data"]["tag"] == SID
            assert refused[0]["actions"] == [] and refused[0]["data"]["token"] == ""
            # replaced through its tag, never closed first: a close then a show of the same tag
            # let a getNotifications() between them (this test's polls) drop the new one from
            # Chromium's store (8 of 200 cycles, and the 30 s timeouts of issue 37)
            trace = worker.evaluate("self.__pmuxTrace")
            assert not [step for step in trace if " ms close " in step], trace
        finally:
            browser.close()


#: What the worker does between a button's click and its refusal, each step with its time
#: (ms since the click), kept in the worker for a failure's report.
TRACE = """() => {
  const log = self.__pmuxTrace = [];
  const t0 = performance.now();
  const note = (what) => log.push(`${Math.round(performance.now() - t0)} ms ${what}`);
  const realFetch = self.fetch;
  self.fetch = async (...args) => {
    note(`fetch ${args[0]}`);
    try {
      const r = await realFetch(...args);
      note(`fetch answered ${r.status}`);
      return r;
    } catch (e) { note(`fetch failed ${e}`); throw e; }
  };
  const realClose = Notification.prototype.close;
  Notification.prototype.close = function () { note(`close ${this.title}`);
                                               return realClose.call(this); };
  const realShow = ServiceWorkerRegistration.prototype.showNotification;
  ServiceWorkerRegistration.prototype.showNotification = async function (title, options) {
    note(`show ${title}`);
    try {
      await realShow.call(this, title, options);
      const now = await this.getNotifications();
      note(`shown; the worker sees ${JSON.stringify(now.map(n => n.title))}`);
    } catch (e) { note(`show failed ${e}`); throw e; }
  };
}"""


STUB = """(sub) => {
  // Offline headless Chromium cannot subscribe (no push service): the browser half of a
  // subscription is the loopback push service's stand-in, its keys made by the test.
  const fake = { endpoint: sub.endpoint, options: { applicationServerKey: null },
                 toJSON: () => sub, unsubscribe: async () => true };
  PushManager.prototype.subscribe = async function () { return fake; };
  PushManager.prototype.getSubscription = async function () { return null; };
}"""


def test_the_panel_subscribes_reports_presence_and_opens_on_the_row(
    tmp_path: Path, playwright_sync: Any
) -> None:
    """JupyterLab with this checkout's labextension: ``lab?pmux-session=<id>`` opens the panel
    on that row; the page reports what the panel shows; "Notify this device" hands the
    subscription to the server (XSRF through JupyterLab's own requests), a hook then reaches
    the loopback push service encrypted for it, and Remove forgets it."""
    from types import SimpleNamespace

    from pmux_widget.notify.config import notify_settings
    from pmux_widget.system.home import PmuxHome

    from ..jupyter_ext import Hooks
    from ..notify_servers import PushService
    from .conftest import LabServer as Lab

    try:
        check_available()
    except LabUnavailable as exc:
        _unavailable(str(exc))
    pmux, claude = PmuxHome(tmp_path / "pmux").ensure(), tmp_path / "claude"
    claude.mkdir()
    notify_settings(pmux.root, cooldown_s=0, looking_s=1, actions=True)
    env = {"PMUX_WIDGET_HOME": str(pmux.root), "CLAUDE_CONFIG_DIR": str(claude),
           "PMUX_WIDGET_NOTIFY_DELAY": "0"}  # fmt: skip
    lab = Lab(tmp_path / "lab", extension=True, env=env)
    push = PushService()
    try:
        lab.start()
        push.start()
        hooks = Hooks(SimpleNamespace(claude=claude, pmux=pmux, env={**os.environ, **env}))  # type: ignore[arg-type]
        hooks.fire("UserPromptSubmit", SID, prompt="deploy it")
        phone = push.browser("lab-page")
        with nullcontext(playwright_sync) as playwright:
            browser = launch_chromium(playwright)
            try:
                origin = f"http://127.0.0.1:{lab.port}"
                context = browser.new_context()
                context.grant_permissions(["notifications"], origin=origin)
                context.add_init_script(f"({STUB})({json.dumps(phone.subscription())})")
                page = context.new_page()
                page.set_default_timeout(60_000)
                page.goto(lab.url(f"lab?pmux-session={SID}"))
                # the panel opened with that row focused (selected)
                page.wait_for_function(
                    """(sid) => document.activeElement?.closest?.('#pmux-widget-panel')
                                && document.activeElement.closest('.pmux-row')
                                   ?.getAttribute('data-session-id') === sid""",
                    arg=SID,
                )
                assert "pmux-session" not in page.url, "the link's parameter is consumed"

                # the page said what its panel shows (the rules read it from notify.db)
                def presence() -> list[tuple[str, str, int]]:
                    db = sqlite3.connect(f"file:{pmux.root / 'notify.db'}?mode=ro", uri=True)
                    try:
                        return list(db.execute("SELECT device, sessions, visible FROM presence"))
                    finally:
                        db.close()

                seen = wait_until(
                    lambda: [p for p in presence() if SID in json.loads(p[1]) and p[2] == 1],
                    30,
                    what=lambda: f"the page's presence: {presence()}",
                )
                assert seen[0][0].startswith("page-")

                button = page.locator(".pmux-lab-push-subscribe")
                assert button.is_enabled() and button.text_content() == "Notify this device"
                button.click()
                page.wait_for_function(
                    "() => document.querySelector('.pmux-lab-push-note')?.textContent"
                    "?.includes('is notified')"
                )
                item = page.locator(".pmux-lab-push-devices li")
                item.wait_for()
                assert "(this device)" in (item.text_content() or "")
                subs = json.loads((pmux.root / "push" / "subscriptions.json").read_text())
                assert [s["endpoint"] for s in subs] == [phone.endpoint]

                # the session asks: once the page has not been used for looking_s, it is pushed
                hooks.fire("PermissionRequest", SID, tool_name="Bash",
                           tool_input={"command": "make deploy"})  # fmt: skip
                wait_until(lambda: push.delivered or push.errors, 60, what="the push")
                assert not push.errors, push.errors
                pushed = push.delivered[0].payload
                assert pushed["session_id"] == SID and pushed["state"] == "needs-input"
                assert pushed["url"] == f"/lab?pmux-session={SID}"

                # an answer from the notification (refused here: no terminal holds this
                # session) is listed with the device it came from once the panel shows again
                answer = requests.post(
                    f"http://127.0.0.1:{lab.port}/pmux/api/push/answer",
                    json={"token": pushed["token"], "action": "approve",
                          "endpoint": phone.endpoint},
                    headers={"Authorization": f"token {lab.token}"},
                    timeout=30,
                )  # fmt: skip
                assert answer.status_code == 409, answer.text
                # the panel collapsed: the page shows no session any more, and says so
                page.evaluate("window.jupyterapp.shell.collapseRight()")
                wait_until(
                    lambda: [p for p in presence() if p[1] == "[]"],
                    30,
                    what=lambda: f"the page's presence once hidden: {presence()}",
                )
                page.evaluate("window.jupyterapp.shell.expandRight()")
                listed = page.locator(".pmux-lab-push-answer").first
                listed.wait_for()
                assert (listed.text_content() or "").startswith("Allow once from Chrome on ")
                page.locator(".pmux-lab-push-remove").click()
                page.wait_for_function(
                    "() => document.querySelectorAll('.pmux-lab-push-devices li').length === 0"
                )
                assert json.loads((pmux.root / "push" / "subscriptions.json").read_text()) == []
            finally:
                browser.close()
    finally:
        push.stop()
        lab.stop()


def test_the_panel_says_why_push_is_off_on_an_insecure_page(
    tmp_path: Path, playwright_sync: Any
) -> None:
    """Over plain http at a name that is not localhost (a LAN address, a host name) the
    browser offers no push: the button is off and the panel says why."""

    from ..helpers import CHROMIUM, CHROMIUM_ARGS

    try:
        check_available()
    except LabUnavailable as exc:
        _unavailable(str(exc))
    built = Path(__file__).resolve().parents[2] / "pmux_widget" / "labextension"
    if not (built / "package.json").exists():
        _unavailable(f"{built} is not built: npm run build")
    server = LabServer(tmp_path, lab=True, args=("--ServerApp.allow_remote_access=True",))
    link = tmp_path / "jupyter-data" / "labextensions" / "pmux-widget"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(built, target_is_directory=True)
    try:
        server.start()
        with nullcontext(playwright_sync) as playwright:
            # pmux.test is this machine, but not a name the browser trusts as local
            args = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP pmux.test 127.0.0.1"]
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
            try:
                page = browser.new_page()
                page.set_default_timeout(60_000)
                page.goto(f"http://pmux.test:{server.port}/lab?token={TOKEN}")
                assert page.evaluate("window.isSecureContext") is False
                note = page.locator(".pmux-lab-push-note")
                note.wait_for(state="attached")
                text = note.text_content() or ""
                assert "https" in text and "localhost" in text, text
                assert f"pmux.test:{server.port}" in text
                assert page.locator(".pmux-lab-push-subscribe").is_disabled()
            finally:
                browser.close()
    finally:
        server.stop()
