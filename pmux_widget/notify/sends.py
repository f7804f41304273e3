"""What one message to one destination is, as the outbox runs it (:class:`Delivery`): a
channel's Apprise send, or a browser's Web Push (whose 404/410 removes the subscription).
Built on the notifier's thread; sent on the destination's own sender thread."""

from __future__ import annotations

from typing import Any

from pmux_widget.core.notify_rules import link
from pmux_widget.system.home import PmuxHome

from . import webpush
from .channels import send_channel
from .config import Channel
from .delivery import Delivery, Gone

__all__ = ["channel_delivery", "push_delivery"]


def channel_delivery(
    channel: Channel, payload: dict[str, Any], *, priority: str, link_base: str, timeout: float
) -> Delivery:
    """``payload``'s title and body to ``channel``; its link only where a phone reaches it."""

    def send() -> None:
        send_channel(
            channel.url,
            payload["title"],
            payload["body"],
            priority=priority,
            click=link(link_base, payload["url"]),
            timeout=timeout,
        )

    return Delivery(channel.dest, channel.masked, send)


def push_delivery(
    home: PmuxHome,
    sub: webpush.Subscription,
    payload: dict[str, Any],
    *,
    vapid: Any,
    subject: str,
    ttl: int,
    priority: str,
    topic_of: str,
    timeout: float,
) -> Delivery:
    """``payload`` encrypted to the browser of ``sub``, with the session's ``Topic`` (a newer
    message replaces the older one at the push service)."""

    def send() -> None:
        try:
            webpush.send_push(
                sub,
                payload,
                vapid=vapid,
                subject=subject,
                ttl=ttl,
                urgency=priority,
                topic=webpush.topic_of(topic_of),
                timeout=timeout,
            )
        except webpush.PushGone as exc:
            raise Gone(str(exc)) from None

    def gone() -> None:
        webpush.remove_subscription(home, sub.endpoint)

    label = f"browser {sub.device or sub.listed()['service']}"
    return Delivery(sub.dest, label, send, on_gone=gone)
