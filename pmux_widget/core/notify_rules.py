"""When a phone hears about a session: the notifier's rules, as pure functions.

A live transition into needs-input or review becomes a :class:`NotifyEvent`. :func:`plan` runs
once, at the transition: it drops what no one asked for (a state switched off, a ``claude -p``
run, a muted project, a snooze) and otherwise says when to look again (the away delay).
:func:`check` runs at that time (and again whenever it answers "later"), with what the
notifier knows then: whether the session still waits, whether someone looks at it, what was
sent recently (shared by every hub on the machine), the local time of day. It answers send
(with a priority), later (at a time), digest, or drop. No I/O, clock or threads: the caller
passes ``now`` and the local minute of the day.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

__all__ = [
    "ATTENTION",
    "DEFAULTS",
    "SAME_TRANSITION_MS",
    "WORDS_POLL_MS",
    "WORDS_WAIT_MS",
    "ChannelFilter",
    "Decision",
    "NotifyEvent",
    "NotifySettings",
    "Presence",
    "Sent",
    "check",
    "in_quiet_hours",
    "link",
    "looking_until",
    "matches",
    "minutes_until",
    "plan",
    "ttl_seconds",
]

#: The states a phone hears about.
ATTENTION = ("needs-input", "review")
#: Two hubs can see one transition with different event times (one learnt it from the PID
#: file, the other from the hook): a send for the same session and state this close is the
#: same transition, whatever else is known (see :attr:`NotifyEvent.since` for the rest).
SAME_TRANSITION_MS = 5_000

Priority = Literal["high", "normal", "low"]
Verdict = Literal["send", "later", "digest", "drop"]


@dataclass(frozen=True, slots=True)
class NotifySettings:
    """What the user chose (``pmux_widget.notify_settings``; the panel's settings)."""

    #: which transitions notify at all
    states: tuple[str, ...] = ATTENTION
    #: wait this long, re-check that the session still waits, then send (0: at once)
    delay_s: float = 20.0
    #: at most one notification per session this often; a later one waits for the end
    cooldown_s: float = 60.0
    #: at most ``cap`` notifications per ``cap_window_s``; beyond, one digest per window
    cap: int = 5
    cap_window_s: float = 300.0
    #: quiet hours, local "HH:MM" (may wrap midnight): review waits for their end,
    #: needs-input still goes at low priority. Empty: none.
    quiet_start: str = ""
    quiet_end: str = ""
    #: no notification before this time (epoch ms; 0: not snoozed)
    snooze_until: int = 0
    #: project name → muted until (epoch ms; 0: for good)
    muted_projects: Mapping[str, int] = field(default_factory=dict)
    #: ``claude -p`` and SDK runs notify too
    include_non_interactive: bool = False
    #: a browser that showed the session with input this recently holds the push back
    looking_s: float = 60.0
    #: no command text, no answer: "a session needs you"
    generic: bool = False
    #: the fleet's ``--redact``: no prompt, answer or tool input
    redact: bool = False
    #: the VAPID ``sub`` (a real ``mailto:`` or ``https:`` contact: Apple refuses
    #: ``@localhost``)
    vapid_subject: str = ""
    #: Web Push notifications for a permission dialog carry Allow once / Deny / Open
    actions: bool = False
    #: where a phone reaches this JupyterLab (an origin, ``https://lab.example.org``): channel
    #: messages link to the session's row there (ntfy: a click and an Open button). Empty: no
    #: link (this machine's ``/lab`` means nothing on a phone); Web Push needs none.
    link_base: str = ""

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["states"] = list(self.states)
        data["muted_projects"] = dict(self.muted_projects)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> NotifySettings:
        """Lenient on unknown keys; a value of the wrong type is a ValueError naming it."""
        if not data:
            return cls()
        return cls().updated(**{k: v for k, v in data.items() if k in _FIELDS})

    def updated(self, **changes: Any) -> NotifySettings:
        """A copy with ``changes``, each checked (ValueError says which one is wrong)."""
        clean: dict[str, Any] = {}
        for name, value in changes.items():
            if name not in _FIELDS:
                raise ValueError(f"no notification setting {name!r}")
            clean[name] = _coerce(name, value)
        return replace(self, **clean)


DEFAULTS = NotifySettings()
_FIELDS = frozenset(f.name for f in fields(NotifySettings))


def _coerce(name: str, value: Any) -> Any:
    default = getattr(DEFAULTS, name)
    if name == "states":
        states = (value,) if isinstance(value, str) else tuple(value)
        bad = [s for s in states if s not in ATTENTION]
        if bad:
            raise ValueError(f"states: {bad[0]!r} is not one of {', '.join(ATTENTION)}")
        return states
    if name == "muted_projects":
        if not isinstance(value, Mapping):
            raise ValueError("muted_projects: a mapping of project name to epoch ms (0: forever)")
        return {str(k): int(v) for k, v in value.items()}
    if name in ("quiet_start", "quiet_end"):
        if value and _minute_of(str(value)) is None:
            raise ValueError(f"{name}: {value!r} is not a time of day HH:MM")
        return str(value or "")
    if name == "vapid_subject":
        return _subject(str(value or "").strip())
    if name == "link_base":
        return _origin(str(value or "").strip())
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{name}: true or false, not {value!r}")
        return value
    if isinstance(default, (int, float)) and not isinstance(value, bool):
        try:
            number = type(default)(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: a number, not {value!r}") from None
        if number < 0:
            raise ValueError(f"{name}: must not be negative")
        return number
    if isinstance(default, str):
        return str(value)
    raise ValueError(f"{name}: unexpected value {value!r}")


def _subject(text: str) -> str:
    """A VAPID contact: ``mailto:`` an address or an ``https:`` origin, never a local one
    (Apple's push service answers 403 BadJwtToken to ``@localhost`` and ``.local``)."""
    if not text:
        return ""
    lowered = text.lower()
    if lowered.startswith("mailto:"):
        domain = lowered.rpartition("@")[2]
        ok = "@" in lowered and "." in domain
    elif lowered.startswith("https://"):
        domain = lowered[8:].split("/", 1)[0]
        ok = "." in domain and lowered.rstrip("/") == f"https://{domain}"
    else:
        domain, ok = "", False
    if domain in ("localhost", "localhost.localdomain") or domain.endswith(
        (".local", ".localhost")
    ):
        raise ValueError(f"vapid_subject: {domain} is refused by Apple's push service (403)")
    if not ok:
        raise ValueError(
            "vapid_subject: mailto:you@example.com or an https:// origin (a real contact)"
        )
    return text.rstrip("/")


def _origin(text: str) -> str:
    """An ``http(s)://host[:port]`` origin, no path (the page's own path is added to it)."""
    if not text:
        return ""
    scheme, sep, rest = text.rstrip("/").partition("://")
    if (
        not sep
        or scheme.lower() not in ("http", "https")
        or not rest
        or any(ch in rest for ch in "/?#@ ")
    ):
        raise ValueError(
            "link_base: an origin such as https://lab.example.org (no path: the page's own "
            f"path is added), not {text!r}"
        )
    return f"{scheme.lower()}://{rest}"


def link(base: str, page: str) -> str:
    """The address a phone opens for ``page`` (a path of this server), or "" with no base."""
    if not base or not page:
        return ""
    return page if "://" in page else f"{base}/{page.lstrip('/')}"


@dataclass(frozen=True, slots=True)
class NotifyEvent:
    """A live transition into needs-input or review, as the notifier keeps it."""

    host: str
    session_id: str
    state: str
    #: the transition's event time (the session's ``state_since``), epoch ms
    at: int
    project: str | None = None
    #: False for ``claude -p`` / SDK runs; None when not known
    interactive: bool | None = None
    #: since when, in this hub's view, the session was in the state it left (epoch ms; 0:
    #: not known). Hubs date one transition by whatever told them first: the hook's stamp,
    #: or the PID file Claude writes once the hook returned, seconds later on a loaded
    #: machine. Another hub's send for this session and state dated after ``since`` is this
    #: same transition, however far from ``at``: the session never left the old state in
    #: between, as far as this hub saw.
    since: int = 0
    #: a non-interactive run (an Agent SDK run) that someone can answer: its permission
    #: call waits on our handler (``pmux_widget.can_use_tool``)
    answerable: bool = False

    @property
    def key(self) -> str:
        """The transition's identity, the same in every hub that saw it."""
        return f"{self.host}/{self.session_id}/{self.state}/{self.at}"


@dataclass(frozen=True, slots=True)
class Sent:
    """A notification that went (read back from the store every hub shares)."""

    key: str
    session_id: str
    state: str
    at: int
    sent_at: int
    #: ``send``: a notification of its own; ``digest``: "N sessions need you";
    #: ``folded``: this transition went out in a digest (so it is never sent on its own)
    kind: str = "send"
    host: str = ""

    @property
    def digest(self) -> bool:
        return self.kind == "digest"


@dataclass(frozen=True, slots=True)
class Presence:
    """A browser's report: which sessions its panel or widget shows, and whether someone
    uses it (the page is visible, focused, and had input at ``input_at``)."""

    device: str
    sessions: frozenset[str]
    visible: bool
    focused: bool
    input_at: int


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    #: for ``later`` and ``digest``: when to look again (epoch ms)
    at: int = 0
    priority: Priority = "normal"
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ChannelFilter:
    """Which notifications one channel gets: states, project and host globs (empty: all)."""

    states: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        return {
            "states": list(self.states),
            "projects": list(self.projects),
            "hosts": list(self.hosts),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> ChannelFilter:
        data = data or {}
        return cls(
            states=tuple(str(s) for s in data.get("states") or ()),
            projects=tuple(str(s) for s in data.get("projects") or ()),
            hosts=tuple(str(s) for s in data.get("hosts") or ()),
        )


def matches(flt: ChannelFilter, state: str, project: str | None, host: str) -> bool:
    """Whether a channel with filter ``flt`` gets this notification (a digest: state "")."""
    if flt.states and state and state not in flt.states:
        return False
    if flt.projects and not any(fnmatch.fnmatchcase(project or "", g) for g in flt.projects):
        return False
    return not flt.hosts or any(fnmatch.fnmatchcase(host, g) for g in flt.hosts)


# ------------------------------------------------------------------------------ time of day


def _minute_of(text: str) -> int | None:
    hours, sep, minutes = text.partition(":")
    if not sep or not hours.isdigit() or not minutes.isdigit():
        return None
    h, m = int(hours), int(minutes)
    return h * 60 + m if 0 <= h < 24 and 0 <= m < 60 else None


def in_quiet_hours(settings: NotifySettings, local_minute: int) -> bool:
    """Whether ``local_minute`` (0–1439) falls in the quiet hours; they may wrap midnight."""
    start, end = _minute_of(settings.quiet_start), _minute_of(settings.quiet_end)
    if start is None or end is None or start == end:
        return False
    if start < end:
        return start <= local_minute < end
    return local_minute >= start or local_minute < end


def minutes_until(local_minute: int, target: str) -> int:
    """Minutes from ``local_minute`` to the next ``target`` HH:MM (1–1440)."""
    goal = _minute_of(target)
    if goal is None:
        return 0
    return (goal - local_minute) % 1440 or 1440


# ------------------------------------------------------------------------------ presence


def looking_until(
    session_id: str, presences: Iterable[Presence], settings: NotifySettings, now: int
) -> int:
    """Until when someone looks at ``session_id`` (epoch ms; 0: nobody does): a browser that
    shows it, visible and focused, with input in the last ``looking_s``."""
    window = int(settings.looking_s * 1000)
    until = 0
    for p in presences:
        if session_id in p.sessions and p.visible and p.focused and now - p.input_at < window:
            until = max(until, p.input_at + window)
    return until


# ------------------------------------------------------------------------------ the rules


#: A dialog can reach a hub (its PID file's ``waiting``) before what it asks (the
#: PermissionRequest hook: ~0.1 s later, more under load): a notification due meanwhile
#: looks again every WORDS_POLL_MS, for at most WORDS_WAIT_MS after the transition, then
#: goes with what is known. (The notifier says the words are known for a session without
#: hooks: none are coming.)
WORDS_WAIT_MS = 2000
WORDS_POLL_MS = 100


def plan(event: NotifyEvent, settings: NotifySettings, now: int) -> Decision:
    """At the transition: drop what nobody asked for, else look again after the delay."""
    if event.state not in ATTENTION or event.state not in settings.states:
        return Decision("drop", reason="state not notified")
    if event.interactive is False and not (settings.include_non_interactive or event.answerable):
        return Decision("drop", reason="claude -p / SDK run")
    muted = _muted(settings, event.project, now)
    if muted:
        return Decision("drop", reason=muted)
    return Decision("later", at=now + int(settings.delay_s * 1000), reason="away delay")


def check(
    event: NotifyEvent,
    settings: NotifySettings,
    *,
    now: int,
    still_waiting: bool,
    looking: int,
    sent: Sequence[Sent],
    local_minute: int,
    knows_the_ask: bool = True,
) -> Decision:
    """At the due time: send, look again later, fold into a digest, or drop.

    ``still_waiting``: the session is still in the event's state, from the same transition;
    ``looking``: :func:`looking_until` now; ``sent``: recent notifications (every hub's);
    ``knows_the_ask``: the session says what its dialog asks (``wording.knows_the_ask``)."""
    if not still_waiting:
        return Decision("drop", reason="answered meanwhile")
    if any(_same_transition(event, s) for s in sent):
        return Decision("drop", reason="already sent")
    muted = _muted(settings, event.project, now)
    if muted:
        return Decision("drop", reason=muted)
    if event.state == "needs-input" and not knows_the_ask and now - event.at < WORDS_WAIT_MS:
        return Decision(
            "later",
            at=min(event.at + WORDS_WAIT_MS, now + WORDS_POLL_MS),
            reason="what it asks is not known yet",
        )
    if looking > now:
        return Decision("later", at=looking, reason="someone is looking")
    quiet = in_quiet_hours(settings, local_minute)
    if quiet and event.state == "review":
        wait = minutes_until(local_minute, settings.quiet_end)
        return Decision("later", at=now + wait * 60_000, reason="quiet hours")
    cooldown = int(settings.cooldown_s * 1000)
    last = max(
        (s.sent_at for s in sent if s.session_id == event.session_id and s.kind == "send"),
        default=None,
    )
    if last is not None and now - last < cooldown:
        return Decision("later", at=last + cooldown, reason="cooldown")
    window = int(settings.cap_window_s * 1000)
    recent = [s.sent_at for s in sent if s.kind == "send" and now - s.sent_at < window]
    if len(recent) >= settings.cap:
        digests = [s.sent_at for s in sent if s.digest and now - s.sent_at < window]
        if not digests:
            return Decision("digest", at=now, priority=_priority(event, quiet), reason="cap")
        return Decision("digest", at=max(digests) + window, reason="cap: next digest")
    return Decision("send", priority=_priority(event, quiet))


def _priority(event: NotifyEvent, quiet: bool) -> Priority:
    if event.state == "needs-input":
        return "low" if quiet else "high"
    return "normal"


def _same_transition(event: NotifyEvent, s: Sent) -> bool:
    if s.kind not in ("send", "folded"):
        return False
    if s.key == event.key:
        return True
    if (
        s.session_id != event.session_id
        or s.state != event.state
        or (s.host and s.host != event.host)
    ):
        return False
    return abs(s.at - event.at) <= SAME_TRANSITION_MS or 0 < event.since < s.at


def _muted(settings: NotifySettings, project: str | None, now: int) -> str:
    if settings.snooze_until > now:
        return "snoozed"
    if project is not None and project in settings.muted_projects:
        until = settings.muted_projects[project]
        if until == 0 or until > now:
            return "project muted"
    return ""


def ttl_seconds(state: str, asked_at: int, now: int) -> int:
    """The Web Push TTL: a dialog's notification lives at most 10 minutes from when it was
    asked (a phone offline longer would wake to a stale question), review at most 12 hours."""
    if state == "needs-input":
        left = 600 - max(0, now - asked_at) // 1000
        return max(30, min(600, left))
    return 12 * 3600
