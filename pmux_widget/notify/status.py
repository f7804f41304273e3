"""What ``pmux-widget doctor`` and the panel say about notifications: the files' modes, the
optional packages, the channels whose last send failed (masked names only)."""

from __future__ import annotations

import importlib.util
import stat
from dataclasses import dataclass

from pmux_widget.system.home import PmuxHome

from . import webpush
from .config import ConfigError, config_path, load_config
from .delivery import failing

__all__ = ["NotifyCheck", "notify_checks"]


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
        if missing:
            checks.append(NotifyCheck("web push", False, "pip install 'pmux-widget[notify]'"))
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
