"""``pmux-widget notify test``: one message to each destination, now, outside the rules and
the claims (it is not a transition), through the same senders, waiting for the outcome."""

from __future__ import annotations

import contextlib

from pmux_widget.core.notify_rules import NotifySettings
from pmux_widget.system.home import PmuxHome

from . import webpush
from .channels import send_channel
from .config import load_config
from .delivery import Delivery, Gone, Outbox

__all__ = ["send_test"]

TITLE = "Test · pmux-widget"
BODY = "Notifications from pmux-widget reach this device."


def send_test(
    home: PmuxHome, which: str | None = None, timeout: float = 10.0
) -> list[tuple[str, str]]:
    """(label, error or "") per destination tried. ``which``: a channel number or a browser's
    ``push:...`` id; ValueError when it names nothing."""
    config = load_config(home)
    settings: NotifySettings = config.settings
    results: dict[str, str] = {}
    outbox = Outbox(home, tries=1)
    deliveries: list[Delivery] = []
    for n, channel in enumerate(config.channels, 1):
        if which not in (None, str(n)):
            continue

        def send(url: str = channel.url) -> None:
            send_channel(url, TITLE, BODY, priority="normal", timeout=timeout)

        deliveries.append(Delivery(channel.dest, channel.masked, send))
    subs = [s for s in webpush.load_subscriptions(home) if which in (None, s.dest)]
    if subs:
        vapid = webpush.vapid_keys(home).vapid()
        for sub in subs:

            def push(s: webpush.Subscription = sub) -> None:
                payload = {"title": TITLE, "body": BODY, "session_id": "", "state": "test",
                           "host": "", "url": "", "tag": "pmux-test"}  # fmt: skip
                try:
                    webpush.send_push(s, payload, vapid=vapid, subject=settings.vapid_subject,
                                      ttl=60, timeout=timeout)  # fmt: skip
                except webpush.PushGone as exc:
                    raise Gone(str(exc)) from None

            label = f"browser {sub.device or sub.listed()['service']} ({sub.dest})"

            def prune(endpoint: str = sub.endpoint) -> None:
                webpush.remove_subscription(home, endpoint)

            deliveries.append(Delivery(sub.dest, label, push, on_gone=prune))
    if which is not None and not deliveries:
        raise ValueError(f"no channel or browser {which!r} (see `pmux-widget notify list`)")
    for d in deliveries:
        results[d.label] = "no answer in time"

        def ok(label: str = d.label) -> None:
            results[label] = ""

        outbox.submit(Delivery(d.dest, d.label, d.send, d.on_gone, on_sent=ok))
    outbox.wait_idle(timeout * 2 + 5)
    outbox.stop()
    from .delivery import read_health

    health = read_health(home)
    for d in deliveries:
        if results[d.label]:
            with contextlib.suppress(Exception):
                entry = health.get(d.dest) or {}
                results[d.label] = str(entry.get("last_error") or results[d.label])
    return list(results.items())
