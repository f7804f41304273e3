"""What the user configured: channels (Apprise URLs, with their filters) and the settings, in
``$PMUX_WIDGET_HOME/notify.json`` (0600: channel URLs hold tokens and passwords).

```json
{"version": 1,
 "channels": [{"url": "ntfys://tk_…@ntfy.example/claude", "filters": {"states": [], ...}}],
 "settings": {"delay_s": 20, ...}}
```

Read-modify-write goes under an exclusive ``flock`` (the CLI, the panel and a kernel may edit
at once); the write is atomic (``system.files.atomic_write``). A URL is shown masked only
(Apprise's own ``privacy`` rendering). A bad file is refused with the reason, never replaced.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pmux_widget.core.notify_rules import ChannelFilter, NotifySettings
from pmux_widget.system.files import atomic_write
from pmux_widget.system.home import PmuxHome

from .webpush import load_subscriptions

__all__ = [
    "DELAY_ENV",
    "Channel",
    "ConfigError",
    "NotifyConfig",
    "config_path",
    "configured",
    "edit_config",
    "effective_settings",
    "env_wants_notifier",
    "load_config",
    "mask_url",
    "notify_settings",
]

DELAY_ENV = "PMUX_WIDGET_NOTIFY_DELAY"


class ConfigError(ValueError):
    """notify.json cannot be read, or an edit is refused: the message says why."""


@dataclass(frozen=True)
class Channel:
    url: str
    filters: ChannelFilter = field(default_factory=ChannelFilter)

    @property
    def dest(self) -> str:
        """The channel's id in claims and health: a hash, never the URL (it holds secrets)."""
        return "channel:" + hashlib.sha256(self.url.encode()).hexdigest()[:16]

    @property
    def masked(self) -> str:
        return mask_url(self.url)

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "filters": self.filters.to_json()}


@dataclass(frozen=True)
class NotifyConfig:
    channels: tuple[Channel, ...] = ()
    settings: NotifySettings = field(default_factory=NotifySettings)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "channels": [c.to_json() for c in self.channels],
            "settings": self.settings.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any) -> NotifyConfig:
        if not isinstance(data, dict):
            raise ConfigError("not a JSON object")
        channels = []
        for item in data.get("channels") or []:
            if not isinstance(item, dict) or not isinstance(item.get("url"), str):
                raise ConfigError("a channel without a URL")
            channels.append(Channel(item["url"], ChannelFilter.from_json(item.get("filters"))))
        try:
            settings = NotifySettings.from_json(data.get("settings"))
        except ValueError as exc:
            raise ConfigError(f"settings: {exc}") from None
        return cls(tuple(channels), settings)

    def with_settings(self, **changes: Any) -> NotifyConfig:
        return replace(self, settings=self.settings.updated(**changes))


def config_path(home: PmuxHome) -> Path:
    return home.root / "notify.json"


def load_config(home: PmuxHome) -> NotifyConfig:
    """The configuration (empty when there is no file); ConfigError when it is unreadable."""
    path = config_path(home)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return NotifyConfig()
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    try:
        return NotifyConfig.from_json(json.loads(text))
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None


@contextlib.contextmanager
def edit_config(home: PmuxHome) -> Iterator[list[NotifyConfig]]:
    """``with edit_config(home) as box: box[0] = box[0].with_settings(...)``: read, change,
    write back atomically, under an exclusive lock (nothing is written if the body raises)."""
    home.root.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock_path = home.root / ".notify.lock"
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        box = [load_config(home)]
        before = box[0]
        yield box
        if box[0] != before:
            data = json.dumps(box[0].to_json(), indent=2) + "\n"
            atomic_write(config_path(home), data.encode(), 0o600)
    finally:
        os.close(fd)


def effective_settings(config: NotifyConfig, env: dict[str, str] | None = None) -> NotifySettings:
    """The settings with ``PMUX_WIDGET_NOTIFY_DELAY`` (seconds; 0: at once) applied."""
    raw = (os.environ if env is None else env).get(DELAY_ENV, "").strip()
    if not raw:
        return config.settings
    try:
        return config.settings.updated(delay_s=float(raw))
    except ValueError:
        return config.settings  # a bad value is doctor's to report, not a reason to stop


_SECRETISH = re.compile(r"^([a-z][a-z0-9+.-]*://)(.*)$", re.I)


def mask_url(url: str) -> str:
    """The URL with its secrets hidden: Apprise's ``privacy`` rendering when Apprise knows
    the scheme, else the scheme and host only."""
    try:
        import apprise

        from .channels import contained_logs

        with contained_logs():
            obj: Any = apprise.Apprise.instantiate(url, suppress_exceptions=True)
        if obj is not None:
            return str(obj.url(privacy=True))
    except ImportError:
        pass
    match = _SECRETISH.match(url)
    if not match:
        return "***"
    rest = match.group(2)
    host = rest.split("@", 1)[-1].split("/", 1)[0].split("?", 1)[0]
    return f"{match.group(1)}***@{host}/…" if host else f"{match.group(1)}***"


def notify_settings(home: str | os.PathLike[str] | None = None, **changes: Any) -> NotifySettings:
    """The notification settings; with keyword arguments, changed first (and kept in
    notify.json). ``pmux_widget.notify_settings(delay_s=0, quiet_start="22:00",
    quiet_end="07:00", muted_projects={"scratch": 0})``. ValueError names a bad value."""
    where = PmuxHome.resolve(home)
    if not changes:
        return load_config(where).settings
    with edit_config(where) as box:
        box[0] = box[0].with_settings(**changes)
        return box[0].settings


def configured(home: PmuxHome) -> bool:
    """Whether any channel or browser subscription exists (else hubs run no notifier)."""
    try:
        if load_config(home).channels:
            return True
    except ConfigError:
        return True  # let the notifier start and report the bad file
    return bool(load_subscriptions(home))


def env_wants_notifier() -> bool | None:
    """``PMUX_WIDGET_NOTIFY=0|1`` forces the notifier off or on; unset: when configured."""
    value = os.environ.get("PMUX_WIDGET_NOTIFY", "").strip()
    return None if not value else value not in ("0", "false", "no")
