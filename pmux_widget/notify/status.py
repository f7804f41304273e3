"""What ``pmux-widget doctor`` and the panel say about notifications: the files' modes, the
optional packages, the channels whose last send failed (masked names only)."""

from __future__ import annotations

import importlib.util
import os
import stat
from dataclasses import dataclass
from typing import Any

from pmux_widget.system.home import PmuxHome

from . import webpush
from .config import DELAY_ENV, ConfigError, config_path, load_config
from .delivery import failing, read_health

__all__ = ["NotifyCheck", "notify_checks", "overview"]


@dataclass(frozen=True)
class NotifyCheck:
    name: str
    ok: bool
    message: str
    optional: bool = False


def _mode_ok(path: object) -> bool:
    try:
        return stat.S_IMODE(path.stat().st_mode) & 0o077 == 0  # type: ignore[attr-defined]
    except OSError:
        return True


def notify_checks(home: PmuxHome) -> list[NotifyCheck]:
    """Nothing when notifications were never set up; else one line each for the channels,
    the browsers and any failing destination."""
    path = config_path(home)
    subs = webpush.load_subscriptions(home)
    if not path.exists() and not subs:
        return []
    checks: list[NotifyCheck] = []
    try:
        config = load_config(home)
    except ConfigError as exc:
        return [NotifyCheck("notifications", False, f"{exc}: fix or remove the file")]
    raw_delay = os.environ.get(DELAY_ENV, "").strip()
    if raw_delay:
        try:
            if float(raw_delay) < 0:
                raise ValueError
        except ValueError:
            checks.append(
                NotifyCheck(DELAY_ENV, False, f"{raw_delay!r} is not a number of seconds: ignored")
            )
    push = webpush.push_dir(home)
    secret_files = [path, push / "vapid.json", push / "subscriptions.json"]
    loose = [str(p) for p in secret_files if not _mode_ok(p)]
    if loose:
        checks.append(NotifyCheck("notify files", False, f"chmod 600 {' '.join(loose)}"))
    n = len(config.channels)
    if n and importlib.util.find_spec("apprise") is None:
        checks.append(NotifyCheck("channels", False, "pip install 'pmux-widget[notify]'"))
    elif n:
        checks.append(NotifyCheck("channels", True, f"{n} configured (`pmux-widget notify list`)"))
    if subs:
        missing = importlib.util.find_spec("pywebpush") is None
        subject = config.settings.vapid_subject
        message = f"{len(subs)} browser(s) subscribed"
        if missing:  # a dependency: only a broken install lacks it
            fix = "pip install 'pywebpush>=2.5,<3' 'py-vapid>=1.9,<2'"
            checks.append(NotifyCheck("web push", False, f"pywebpush is missing: {fix}"))
        elif not subject:
            message += (
                "; set your contact: pmux_widget.notify_settings(vapid_subject="
                "'mailto:you@example.com') (the default is a placeholder)"
            )
            checks.append(NotifyCheck("web push", True, message, optional=True))
        else:
            checks.append(NotifyCheck("web push", True, f"{message}, contact {subject}"))
    for bad in failing(home):
        checks.append(
            NotifyCheck(
                f"notify {bad.get('label', bad['dest'])}",
                False,
                f"failing: {bad.get('last_error') or 'error'} ({bad.get('failures', 1)} in a row)"
                "; `pmux-widget notify test` tries again",
            )
        )
    return checks


def overview(home: PmuxHome) -> dict[str, Any]:
    """What the panel's notification settings and ``notify list`` show: the channels (masked,
    numbered from 1, with their filters), the browsers (no keys), each one's last outcome
    ("ok" or "failing: <why>"), and the settings. ConfigError when notify.json is unreadable."""
    config = load_config(home)
    health = read_health(home)

    def state(dest: str) -> str:
        entry = health.get(dest) or {}
        return f"failing: {entry.get('last_error')}" if entry.get("failures") else "ok"

    channels = [
        {"n": i, "url": c.masked, "filters": c.filters.to_json(), "status": state(c.dest)}
        for i, c in enumerate(config.channels, 1)
    ]
    browsers = [{**s.listed(), "status": state(s.dest)} for s in webpush.load_subscriptions(home)]
    return {"channels": channels, "browsers": browsers, "settings": config.settings.to_json()}
