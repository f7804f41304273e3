"""A question's notification in the service worker (``pmux_widget/jupyter/sw.js``), headless
Chromium on a real Jupyter server with the extension (issue 34 part 4): the push the server
made for AskUserQuestion (hooks fired as Claude Code does, actions on, encrypted to a loopback
push service that decrypts it with the subscribed browser's key) is handed to the worker
through the DevTools protocol (``ServiceWorker.deliverPushMessage``); it shows the question
and one button per option, and a click on "Amber" posts the notification's token with that
label to ``pmux/api/push/answer`` (the server logs the attempt with the label). A question with
more options than the browser shows buttons gets none: a click opens its row.

Stand-ins, as in ``test_push_worker.py``: the push service (loopback), and the click (a
``NotificationEvent`` built in the worker around the real notification: headless Chromium
shows none to click). The session has no terminal here, so the answer is refused once it
reaches ``act`` (the keys reaching a pane: ``tests/test_push_answer_question.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from pmux_widget.demo.scripts import COLOUR_QUESTION
from pmux_widget.notify.config import notify_settings

from ..helpers import WorkerNotifications, launch_chromium, wait_until
from ..jupyter_ext import TOKEN, Hooks, LabServer
from ..notify_servers import PushService
from .conftest import LabUnavailable, _unavailable, check_available

SID = "6c1d0a9e-0000-4000-8000-00000000c0de"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LabServer, PushService]]:
    try:
        check_available()
    except LabUnavailable as exc:
        _unavailable(str(exc))
    push = PushService().start()
    server = LabServer(tmp_path, lab=True, env={"PMUX_WIDGET_NOTIFY_DELAY": "0"})
    notify_settings(server.pmux.root, cooldown_s=0, actions=True)
    try:
        server.start()
        yield server, push
    finally:
        server.stop()
        push.stop()


def test_an_option_button_posts_its_label(
    served: tuple[LabServer, PushService], playwright_sync: Any
) -> None:
    server, push = served
    answer = server.post("pmux/api/push/subscriptions", push.browser("phone").subscription())
    assert answer.status_code == 201, answer.text
    Hooks(server).fire(
        "PermissionRequest", SID, tool_name="AskUserQuestion", tool_input=COLOUR_QUESTION
    )
    pushed = wait_until(
        lambda: next((d.payload for d in push.delivered if d.payload.get("token")), None),
        30,
        what=lambda: f"the question's push: {push.delivered} {push.errors}",
    )
    origin = f"http://127.0.0.1:{server.port}"
    with nullcontext(playwright_sync) as playwright:
        browser = launch_chromium(playwright)
        try:
            context = browser.new_context()
            context.grant_permissions(["notifications"], origin=origin)
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(server.url(f"lab?token={TOKEN}"))  # logs in: the cookie from now on
            page.wait_for_selector("#jp-main-dock-panel", state="attached")
            cdp = context.new_cdp_session(page)
            registrations: list[dict[str, Any]] = []
            cdp.on(
                "ServiceWorker.workerRegistrationUpdated",
                lambda event: registrations.extend(event["registrations"]),
            )
            cdp.send("ServiceWorker.enable")  # else deliverPushMessage does nothing
            scope = page.evaluate(
                """async () => {
                     const reg = await navigator.serviceWorker.register('/pmux/sw.js');
                     const w = reg.installing || reg.waiting || reg.active;
                     if (w.state !== 'activated') await new Promise(done =>
                       w.addEventListener('statechange', () => w.state === 'activated' && done()));
                     return reg.scope; }"""
            )

            def registered() -> dict[str, Any] | None:
                page.evaluate("0")  # events reach Python only while a call runs
                return next(
                    (r for r in registrations if r["scopeURL"] == scope and not r["isDeleted"]),
                    None,
                )

            registration = wait_until(registered, 30, what=lambda: f"{registrations}")
            worker = next((w for w in context.service_workers if "pmux/sw.js" in w.url), None)
            if worker is None:
                worker = context.wait_for_event(
                    "serviceworker", lambda w: "pmux/sw.js" in w.url, timeout=30_000
                )

            def deliver(message: dict[str, Any]) -> None:
                cdp.send(
                    "ServiceWorker.deliverPushMessage",
                    {"origin": origin, "registrationId": registration["registrationId"],
                     "data": json.dumps(message)},
                )  # fmt: skip

            # read only once the worker's shows are done (WorkerNotifications says why)
            shown = WorkerNotifications(worker)

            max_actions = worker.evaluate("Notification.maxActions")
            assert max_actions >= 2, "Chromium shows two buttons"
            shown.expect()
            deliver(pushed)
            first = wait_until(shown, 30, what="the question's notification")
            assert first[0]["body"] == "asks: Which colour should the badge use? — Purple / Amber"
            assert first[0]["actions"] == [["answer:Purple", "Purple"], ["answer:Amber", "Amber"]]

            click = """async ([tag, action]) => {
                const [n] = (await self.registration.getNotifications())
                    .filter(n => (n.data.tag || n.tag) === tag);
                self.dispatchEvent(new NotificationEvent('notificationclick',
                                                         {notification: n, action}));
                return true; }"""
            shown.expect()  # the refusal
            worker.evaluate(click, [SID, "answer:Amber"])

            def tried() -> list[str]:
                answers = server.get("pmux/api/notify").json()["answers"]
                return [f"{a['action']} -> {a['outcome']}" for a in answers]

            attempts = wait_until(tried, 30, what="the worker's answer at the server")
            # the label reached the route with the token (then act: no terminal holds it)
            assert len(attempts) == 1 and attempts[0].startswith("answer: Amber -> 409"), attempts
            wait_until(
                lambda: [n for n in shown() if n["title"] == "Not answered"],
                30,
                what=lambda: f"the refusal shown: {shown.describe()}",
            )

            # more options than buttons: none at all (some would hide the others)
            many = [
                {"action": f"answer:{x}", "title": x, "option": x}
                for x in ("Purple", "Amber", "Teal", "Grey")[: max_actions + 1]
            ]
            shown.expect()
            deliver({**pushed, "actions": many, "body": "asks: Which colour? — …"})
            wait_until(
                lambda: [n for n in shown() if n["body"] == "asks: Which colour? — …"],
                30,
                what=lambda: f"the many-option notification: {shown.describe()}",
            )
            assert shown()[0]["actions"] == []
        finally:
            browser.close()
