"""Exactly once across hubs, hammered: three real hubs on one home, each hook reaching them a
few milliseconds apart in a different order every time, the settings rewritten while they
decide, and every kind of destination at once (a browser at the loopback push service, an
Apprise ``json://`` channel, ``ntfy://``, and ``mailto://`` to a local SMTP server). Every
transition into needs-input or review reaches every destination once, and an answered
dialog's notification is closed once, whichever hub wins each claim.

Half the sessions also have a hub that learns the dialog and the end of the turn from the PID
file before the hook (the hook's POST to it was late: a loaded machine), so it dates them
when Claude wrote the PID file, after the hook returned: seconds after the others' dating
(the hook's own stamp). Stand-in: those PID-file and transcript signals are handed to the
hub (``Hub.submit``) as its watchers would, without a live Claude process behind them.

``PMUX_ONCE_ITERATIONS`` sets how many sessions go through a dialog and a review
(``make stress``: ``PMUX_STRESS=1``, 1000).
"""

from __future__ import annotations

import collections
import http.client
import json
import os
import random
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from email.header import decode_header, make_header
from typing import Any

import pytest

from pmux_widget.core.signals import PidRecord, TranscriptUpdate
from pmux_widget.core.vocabulary import PidStatus
from pmux_widget.notify import webpush
from pmux_widget.notify.config import Channel, NotifyConfig, edit_config
from pmux_widget.notify.notifier import find
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.boot import live_pid_file
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

from .helpers import free_port, wait_until
from .notify_servers import PushService, Recorder
from .test_hook_path import payload

STRESS = os.environ.get("PMUX_STRESS") == "1"
ITERATIONS = int(os.environ.get("PMUX_ONCE_ITERATIONS") or (1000 if STRESS else 120))
#: sessions in flight at once
PARALLEL = 24
#: the latest a hook reaches a hub after its first hub (the hook script's parallel curls
#: land milliseconds apart; more on a loaded machine)
SKEW_S = 0.03
#: the longest a hook runs before Claude writes its PID file (the hook's stamp is taken as it
#: starts; on a loaded 2-core machine starting sh and curl takes seconds)
HOOK_RUN_MS = 9_000


class Mailbox:
    """A local SMTP server (aiosmtpd) keeping every message's subject."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.subjects: list[str] = []
        self.lock = threading.Lock()
        box = self

        class Keep:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                import email

                message = email.message_from_bytes(envelope.content)
                subject = str(make_header(decode_header(message["Subject"] or "")))
                with box.lock:
                    box.subjects.append(subject)
                return "250 OK"

        self.port = free_port()
        self.controller = Controller(Keep(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()


@pytest.fixture
def servers() -> Iterator[tuple[Recorder, PushService, Mailbox]]:
    http, push, mail = Recorder().start(), PushService().start(), Mailbox()
    try:
        yield http, push, mail
    finally:
        mail.stop()
        push.stop()
        http.stop()


@pytest.fixture
def hubs() -> Iterator[list[Hub]]:
    started: list[Hub] = []
    yield started
    for hub in started:
        hub.stop()


def _post(port: int, token: str, body: dict[str, Any], sent: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"X-Pmux-Token": token, "X-Pmux-Sent": str(sent), "X-Pmux-Pane": "",
                   "Content-Type": "application/json"}  # fmt: skip
        conn.request("POST", "/api/hook", json.dumps(body), headers)
        status = conn.getresponse().status
        assert status == 204, status
    finally:
        conn.close()


def _fire(hubs: list[Hub], token: str, body: dict[str, Any], rng: random.Random, sent: int) -> None:
    """One hook to every hub as the hook script sends it (one X-Pmux-Sent), each arriving
    after its own random delay: another hub wins the race each time."""
    threads = []
    for hub in hubs:
        delay = rng.uniform(0, SKEW_S)

        def deliver(port: int = hub.port, delay: float = delay) -> None:
            threading.Event().wait(delay)  # the arrival skew under test, not a wait for a state
            _post(port, token, body, sent)

        threads.append(threading.Thread(target=deliver))
    for t in threads:
        t.start()
    for t in threads:
        t.join(15)


def _settings_churn(home: Any, stop: threading.Event, seed: float) -> int:
    """Rewrite notify.json until ``stop``: what the panel and the CLI change while hubs
    decide (answers on and off, generic text, a link base, the away delay, presence window).
    The destinations and the once-per-transition promise stay."""
    rng = random.Random(seed)
    edits = 0
    while not stop.is_set():
        with edit_config(home) as box:
            box[0] = box[0].with_settings(
                actions=rng.random() < 0.5,
                generic=rng.random() < 0.3,
                link_base=rng.choice(["", "https://lab.example.org"]),
                delay_s=rng.choice([0, 0, 0.05, 0.15]),
                looking_s=rng.choice([60, 30]),
            )
        edits += 1
        stop.wait(rng.uniform(0.005, 0.03))
    return edits


def test_each_transition_reaches_each_destination_once_across_three_hubs(
    homes: Any, servers: tuple[Recorder, PushService, Mailbox], hubs: list[Hub],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    http, push, mail = servers
    monkeypatch.delenv("PMUX_WIDGET_NOTIFY_DELAY", raising=False)  # the settings' delay rules
    channels = (
        Channel(f"json://127.0.0.1:{http.port}/json"),
        Channel(f"ntfy://127.0.0.1:{http.port}/claude-topic"),
        Channel(f"mailto://127.0.0.1:{mail.port}?from=hub@example.com&to=me@example.com"
                "&mode=insecure"),
    )  # fmt: skip
    with edit_config(homes.pmux) as box:
        box[0] = NotifyConfig(
            channels, box[0].settings.updated(cooldown_s=0, cap=1_000_000, delay_s=0)
        )
    phone = push.browser("phone")
    webpush.add_subscription(
        homes.pmux, webpush.Subscription.from_json(phone.subscription(), device="phone")
    )
    for _ in range(3):
        hubs.append(make_hub(sources=False).start())
    for hub in hubs:
        notifier = find(hub)
        assert notifier is not None and notifier.ready.wait(30), "a hub runs no notifier"
    token = homes.pmux.token()
    rng = random.Random(int(os.environ.get("PMUX_ONCE_SEED") or 30))

    seen: collections.Counter[tuple[str, str]] = collections.Counter()
    read = {"http": 0, "mail": 0, "push": 0}
    reading = threading.Lock()

    def titles() -> collections.Counter[tuple[str, str]]:
        """What each destination got so far, as (kind, title) counts (read incrementally:
        the sessions poll it all the time)."""
        with reading:
            with http.lock:
                requests = http.requests[read["http"] :]
            for r in requests:
                kind = "json" if r.path.startswith("/json") else "ntfy"
                seen[(kind, r.json()["title"])] += 1
            read["http"] += len(requests)
            with mail.lock:
                subjects = mail.subjects[read["mail"] :]
            seen.update(("mail", s) for s in subjects)
            read["mail"] += len(subjects)
            delivered = push.delivered[read["push"] :]
            for d in delivered:
                seen[("push", d.payload["title"] or f"closed · {d.payload['session_id']}")] += 1
            read["push"] += len(delivered)
            return collections.Counter(seen)

    def reached(title: str, kinds: tuple[str, ...] = ("json", "ntfy", "mail", "push")) -> bool:
        got = titles()
        return all(got[(k, title)] >= 1 for k in kinds)

    def session(i: int) -> None:
        sid, project = f"once-{i}", f"p{i}"
        cwd = f"/work/{project}"
        local = random.Random(rng.random())
        # The session's turn, dated up to 30 s ago (the later PID files fit before now).
        t0 = now_ms() - 30_000
        late = local.choice(hubs) if local.random() < 0.5 else None
        ran = local.randint(0, HOOK_RUN_MS)
        on_time = [hub for hub in hubs if hub is not late]

        def pid_file(status: PidStatus, at: int) -> None:
            assert late is not None
            record = PidRecord(
                pid=4_000_000 + i, session_id=sid, cwd=cwd, started_at=t0, status=status,
                status_updated_at=at,
            )  # fmt: skip
            late.submit(live_pid_file(record))

        _fire(hubs, token, payload("UserPromptSubmit", sid, cwd=cwd, prompt="go"), local, t0)
        body = payload("PermissionRequest", sid, cwd=cwd, tool_name="Bash")
        body["tool_input"] = {"command": f"make step-{i}"}
        if late is not None:  # the dialog's PID file reaches it before the hook does
            pid_file("waiting", t0 + 1_000 + ran)
        _fire(on_time, token, body, local, t0 + 1_000)
        if late is not None:
            _fire([late], token, body, local, t0 + 1_000)
        # the dialog is answered only once every destination has it (an answer before the
        # away delay ends sends nothing: that is the rules', not the claim's, business)
        wait_until(lambda: reached(f"Needs you · {project}"), 30, what=f"{sid}'s dialog")
        post = payload("PostToolUse", sid, cwd=cwd, tool_name="Bash")
        _fire(hubs, token, post, local, t0 + 12_000)
        stop = payload("Stop", sid, cwd=cwd)
        if late is not None:  # the answer in the transcript, then the idle PID file
            late.submit(TranscriptUpdate(at=t0 + 12_500, session_id=sid, ending="clean",
                                         last_assistant="done"))  # fmt: skip
            pid_file("idle", t0 + 13_000 + ran)
        _fire(on_time, token, stop, local, t0 + 13_000)
        if late is not None:
            _fire([late], token, stop, local, t0 + 13_000)
        wait_until(lambda: reached(f"Done · {project}"), 30, what=f"{sid}'s review")
        wait_until(lambda: reached(f"closed · {sid}", ("push",)), 30, what=f"{sid}'s close")

    stop = threading.Event()
    with ThreadPoolExecutor(1) as churner, ThreadPoolExecutor(PARALLEL) as pool:
        churn = churner.submit(_settings_churn, homes.pmux, stop, rng.random())
        try:
            for done in [pool.submit(session, i) for i in range(ITERATIONS)]:
                done.result()
        finally:
            stop.set()
        assert churn.result() > 0
    for hub in hubs:
        notifier = find(hub)
        assert notifier is not None and notifier.wait_idle(30), "a notifier did not settle"
    assert not push.errors, push.errors[:5]
    got = titles()
    expected = collections.Counter(
        {(kind, f"{head} · p{i}"): 1 for i in range(ITERATIONS)
         for head in ("Needs you", "Done") for kind in ("json", "ntfy", "mail", "push")}
    )  # fmt: skip
    expected.update({("push", f"closed · once-{i}"): 1 for i in range(ITERATIONS)})
    extra = {k: n for k, n in got.items() if n != expected.get(k)}
    assert not extra, (
        f"{len(extra)} (destination, message) counts off: {sorted(extra.items())[:10]}"
    )
