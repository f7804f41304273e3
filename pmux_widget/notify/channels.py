"""Channels: Apprise URLs (``ntfy://``, ``pover://``, ``tgram://``, ``slack://``,
``discord://``, ``gotify://``, ``mailto://``, ``json://``, ``form://`` …), ``pmux-widget[notify]``.

Each send builds the service's object afresh from the URL (a parse, well under a millisecond):
Apprise's per-object throttle (5.5 s for ntfy and Pushover) would otherwise block the next
message; our per-channel queue already sends one at a time. Images are off (ntfy would send
an ``X-Icon`` link to github.com), the timeouts are ours, and the priority is the service's
own where it has one.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["ChannelError", "check_url", "send_channel"]


class ChannelError(RuntimeError):
    """A send failed: the message is Apprise's, secrets masked."""


#: our priority → the service's, for the services that take one (attribute, values)
_PRIORITY: dict[str, tuple[str, dict[str, Any]]] = {
    "NotifyNtfy": ("priority", {"high": "high", "normal": "default", "low": "low"}),
    "NotifyPushover": ("priority", {"high": 1, "normal": 0, "low": -1}),
    "NotifyGotify": ("priority", {"high": 8, "normal": 5, "low": 2}),
}


def _apprise() -> Any:
    try:
        import apprise
    except ImportError:
        raise ChannelError("channels need Apprise: pip install 'pmux-widget[notify]'") from None
    return apprise


def check_url(url: str) -> str:
    """The URL's masked form if Apprise knows it; ValueError (with why) otherwise."""
    apprise = _apprise()
    obj = apprise.Apprise.instantiate(url.strip(), suppress_exceptions=True)
    if obj is None:
        raise ValueError("not a notification URL Apprise knows (see its wiki for the schemes)")
    return str(obj.url(privacy=True))


def send_channel(
    url: str,
    title: str,
    body: str,
    *,
    priority: str = "normal",
    click: str = "",
    timeout: float = 10.0,
) -> None:
    """Send one message; ChannelError with Apprise's reason when it did not go."""
    apprise = _apprise()
    obj = apprise.Apprise.instantiate(url, suppress_exceptions=True)
    if obj is None:
        raise ChannelError("not a notification URL Apprise knows")
    obj.request_rate_per_sec = 0  # our queue paces; Apprise's would block in sleep()
    obj.socket_connect_timeout = timeout
    obj.socket_read_timeout = timeout
    for attr in ("include_image", "avatar"):
        if hasattr(obj, attr):
            setattr(obj, attr, False)
    mapping = _PRIORITY.get(type(obj).__name__)
    if mapping is not None and hasattr(obj, mapping[0]):
        setattr(obj, mapping[0], mapping[1].get(priority, mapping[1]["normal"]))
    if click and hasattr(obj, "click"):
        obj.click = click
    notify_type = apprise.NotifyType.WARNING if priority == "high" else apprise.NotifyType.INFO
    with apprise.LogCapture(level=logging.WARNING) as captured:
        ok = obj.notify(body=body or title, title=title, notify_type=notify_type)
    if not ok:
        text = captured.getvalue().strip().splitlines()
        raise ChannelError(text[-1][:300] if text else "the service refused the message")
