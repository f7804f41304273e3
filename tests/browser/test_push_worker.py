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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..helpers import launch_chromium, wait_until
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
    server = LabServer(tmp_path, base_url=BASE, lab=True).start()
    try:
        yield server
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


def test_push_shows_replaces_closes_and_clicks_reach_the_page(served: LabServer) -> None:
    from playwright.sync_api import sync_playwright

    origin = f"http://127.0.0.1:{served.port}"
    with sync_playwright() as playwright:
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
            registration = wait_until(
                lambda: next(
                    (r for r in registrations if r["scopeURL"] == scope and not r["isDeleted"]),
                    None,
                ),
                30,
                what=lambda: f"the registration's id: {registrations}",
            )
            worker = wait_until(
                lambda: next((w for w in context.service_workers if "pmux/sw.js" in w.url), None),
                30,
                what="the worker",
            )

            def deliver(data: str) -> None:
                cdp.send(
                    "ServiceWorker.deliverPushMessage",
                    {"origin": origin, "registrationId": registration["registrationId"],
                     "data": data},
                )  # fmt: skip

            def shown() -> list[dict[str, Any]]:
                found: list[dict[str, Any]] = page.evaluate(
                    """async (scope) => {
                         const reg = await navigator.serviceWorker.getRegistration(scope);
                         const all = await reg.getNotifications();
                         return all.map(n => ({title: n.title, body: n.body, tag: n.tag,
                           data: n.data, actions: n.actions.map(a => a.action)})); }""",
                    scope,
                )
                return found

            deliver(payload("needs-input", "Needs you · acme-api", "asks to run: make deploy"))
            first = wait_until(shown, 30, what="the first notification")
            assert [(n["title"], n["tag"]) for n in first] == [("Needs you · acme-api", SID)]
            assert first[0]["body"] == "asks to run: make deploy"
            assert first[0]["actions"] == [], "no buttons unless the payload carries a token"

            # a newer state of the same session replaces it (one notification per tag)
            deliver(payload("review", "Done · acme-api", "2 failed, 140 passed"))
            wait_until(
                lambda: [n["title"] for n in shown()] == ["Done · acme-api"],
                30,
                what=lambda: f"the replacement: {shown()}",
            )
            # "answered" closes the session's notification
            deliver(payload("answered", "", ""))
            wait_until(lambda: shown() == [], 30, what=lambda: f"the close: {shown()}")

            # a click focuses the open JupyterLab page and tells it the session
            deliver(payload("needs-input", "Needs you · acme-api", "asks to run: make deploy"))
            wait_until(shown, 30, what="the notification to click")
            click = """async ([tag, action]) => {
                const [n] = await self.registration.getNotifications({tag});
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
            deliver(payload("needs-input", "Needs you · acme-api", "asks to run: make deploy",
                            actions=actions, token="not-a-real-token"))  # fmt: skip
            with_buttons = wait_until(shown, 30, what="the notification with buttons")
            # Chromium shows two buttons at most: "Open" is the click on the notification
            max_actions = worker.evaluate("Notification.maxActions")
            expected = ["approve", "deny", "open"] if max_actions >= 3 else ["approve", "deny"]
            assert with_buttons[0]["actions"] == expected
            assert with_buttons[0]["data"]["token"] == "not-a-real-token"
            worker.evaluate(click, [SID, "approve"])
            refused = wait_until(
                lambda: [n for n in shown() if n["title"] == "Not answered"],
                30,
                what=lambda: f"the refusal: {shown()}",
            )
            assert refused[0]["body"] == "unknown token" and refused[0]["tag"] == SID
            assert refused[0]["actions"] == [] and refused[0]["data"]["token"] == ""
        finally:
            browser.close()
