"""Channels: Apprise URLs (``ntfy://``, ``pover://``, ``tgram://``, ``slack://``,
``discord://``, ``gotify://``, ``mailto://``, ``json://``, ``form://`` …), ``pmux-widget[notify]``.

Each send builds the service's object afresh from the URL (a parse, well under a millisecond):
Apprise's per-object throttle (5.5 s for ntfy and Pushover) would otherwise block the next
message; our per-channel queue already sends one at a time. Images are off (ntfy would send
an ``X-Icon`` link to github.com), the timeouts are ours, and the priority is the service's
own where it has one.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from .delivery import MaybeSent

__all__ = [
    "ChannelError",
    "ChannelMaybeSent",
    "check_url",
    "contained_logs",
    "scrub",
    "send_channel",
]


class ChannelError(RuntimeError):
    """A send failed: the message is Apprise's, secrets masked."""


class ChannelMaybeSent(ChannelError, MaybeSent):
    """The request went and no answer came in time: the service may have the message."""


#: what Apprise's debug line says (requests' exception) when the request went but its answer
#: did not come: the message may have arrived
_NO_ANSWER = ("Read timed out", "RemoteDisconnected", "Connection aborted")


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
    with contained_logs():
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
    with contained_logs():
        obj = apprise.Apprise.instantiate(_with_open_button(url, click), suppress_exceptions=True)
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
    # DEBUG: Apprise says only there why a request failed (a refusal, or no answer in time)
    with contained_logs(), _apprise_lines() as records:
        ok = obj.notify(body=body or title, title=title, notify_type=notify_type)
    if not ok:
        said = [r for r in records if r.levelno >= logging.WARNING] or records
        reason = said[-1].getMessage() if said else "the service refused the message"
        reason = scrub(reason, url)[:300]
        if any(marker in r.getMessage() for r in records for marker in _NO_ANSWER):
            raise ChannelMaybeSent(f"no answer in {timeout:g} s: {reason}")
        raise ChannelError(reason)


class _ThreadRecords(logging.Handler):
    """The records one thread logs (every channel's sender thread logs to Apprise's one
    logger at once)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.thread = threading.get_ident()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.records.append(record)


_debugging = 0
_saved_level = logging.NOTSET


@contextlib.contextmanager
def _apprise_lines() -> Iterator[list[logging.LogRecord]]:
    """What Apprise logs on this thread meanwhile, DEBUG included. Apprise's logger is at
    DEBUG while any send runs, back to its level after the last one: ``apprise.LogCapture``
    restores the level it found when its own block ends, so a channel whose send ended first
    turned DEBUG off under another one still waiting for its answer; that one's read timeout
    (said at DEBUG only) then looked like a refusal and was sent again: two identical POSTs."""
    global _debugging, _saved_level
    logger = logging.getLogger("apprise")
    handler = _ThreadRecords()
    with _propagating:
        if _debugging == 0:
            _saved_level = logger.level
            logger.setLevel(logging.DEBUG)
        _debugging += 1
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        with _propagating:
            logger.removeHandler(handler)
            _debugging -= 1
            if _debugging == 0:
                logger.setLevel(_saved_level)


def _with_open_button(url: str, click: str) -> str:
    """An ntfy URL with an "Open" button to ``click`` (ntfy's ``actions``, URL-encoded into the
    query as Apprise reads it: unencoded, its commas and ``=`` would split the URL's own
    parameters). A URL that names its own ``actions`` keeps them; never an http action that
    answers a dialog (anyone who knows an ntfy topic could post it)."""
    scheme = url.split("://", 1)[0].lower()
    if not click or scheme not in ("ntfy", "ntfys") or "actions=" in url:
        return url
    action = f"view, Open, {click}, clear=true"
    return f"{url}{'&' if '?' in url else '?'}actions={quote(action, safe='')}"


_propagating = threading.Lock()
_senders = 0
_saved_propagate: list[bool] = []


#: the loggers that may quote a channel's URL (Apprise's "Loaded … URL", urllib3's debug
#: line with the request path: Discord's and Telegram's tokens are in the path)
_QUOTING = ("apprise", "urllib3")


@contextlib.contextmanager
def contained_logs() -> Iterator[None]:
    """While we parse or send a channel URL, those loggers do not reach the host
    application's handlers (Jupyter's log): our own record is the health file, scrubbed.
    (Process-wide while any send runs: another library's urllib3 debug lines in that window
    are dropped too.)"""
    global _senders, _saved_propagate
    loggers = [logging.getLogger(name) for name in _QUOTING]
    with _propagating:
        if _senders == 0:
            _saved_propagate = [lg.propagate for lg in loggers]
            for lg in loggers:
                lg.propagate = False
        _senders += 1
    try:
        yield
    finally:
        with _propagating:
            _senders -= 1
            if _senders == 0:
                for lg, value in zip(loggers, _saved_propagate, strict=True):
                    lg.propagate = value


_PARTS = re.compile(r"[/:@?&=#,+\s]+")


def scrub(text: str, url: str) -> str:
    """``text`` without any part of ``url`` that could be a secret (user, password, tokens,
    path and query parts of 6 characters or more)."""
    rest = url.split("://", 1)[-1]
    for part in sorted({p for p in _PARTS.split(rest) if len(p) >= 6}, key=len, reverse=True):
        text = text.replace(part, "***")
    return text
