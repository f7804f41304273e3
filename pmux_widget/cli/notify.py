"""``pmux-widget notify``: add, list, remove and test the places notifications go, and show
or change the settings. Channel URLs are secrets: only their masked form is ever printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from pmux_widget.system.home import PmuxHome

# Everything else is imported by the command that needs it: every `pmux-widget` run builds
# this parser, and `status` must stay quick.

__all__ = ["add_parser", "cmd_notify"]

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _home(args: argparse.Namespace) -> PmuxHome:
    return PmuxHome.resolve(args.home)


def _err(text: str) -> None:
    print(f"pmux-widget notify: {text}", file=sys.stderr)


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(v.strip() for raw in values or () for v in raw.split(",") if v.strip())


def cmd_add(args: argparse.Namespace) -> int:
    from pmux_widget.core.notify_rules import ChannelFilter
    from pmux_widget.notify.channels import check_url
    from pmux_widget.notify.config import Channel, ConfigError, edit_config

    url = args.url.strip()
    try:
        masked = check_url(url)
    except (ValueError, RuntimeError) as exc:
        _err(f"{exc}")
        return EXIT_USAGE
    flt = ChannelFilter(_split(args.states), _split(args.projects), _split(args.hosts))
    bad = [s for s in flt.states if s not in ("needs-input", "review")]
    if bad:
        _err(f"--states: {bad[0]!r} is not needs-input or review")
        return EXIT_USAGE
    try:
        with edit_config(_home(args)) as box:
            if any(c.url == url for c in box[0].channels):
                _err(f"{masked} is already there")
                return EXIT_USAGE
            box[0] = type(box[0])((*box[0].channels, Channel(url, flt)), box[0].settings)
            number = len(box[0].channels)
    except ConfigError as exc:
        _err(str(exc))
        return EXIT_FAIL
    print(f"{number}: {masked} added (stored 0600 in {_home(args).root / 'notify.json'})")
    if url.startswith(("ntfy://", "ntfys://")) and "token=" not in url and "@" not in url:
        print(
            "note: anyone who knows an ntfy topic without a token can read it and publish "
            "to it: use a long random topic, or an access token (?token=tk_...)"
        )
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from pmux_widget.notify.config import ConfigError
    from pmux_widget.notify.status import overview

    try:
        data = overview(_home(args))
    except ConfigError as exc:
        _err(str(exc))
        return EXIT_FAIL
    if args.json:
        print(json.dumps(data, indent=2))
        return EXIT_OK
    if not data["channels"] and not data["browsers"]:
        print(
            "no channels and no browsers: `pmux-widget notify add URL` (see docs/notifications.md)"
        )
    for c in data["channels"]:
        flt = {k: v for k, v in c["filters"].items() if v}
        only = " only " + "; ".join(f"{k}={','.join(v)}" for k, v in flt.items()) if flt else ""
        print(f"{c['n']}: {c['url']}{only} [{c['status']}]")
    for b in data["browsers"]:
        added = (
            time.strftime("%Y-%m-%d", time.localtime(b["added_at"] / 1000))
            if b["added_at"]
            else "?"
        )
        name = b["device"] or "(unnamed)"
        print(f"{b['id']}: browser {name} via {b['service']}, since {added} [{b['status']}]")
    return EXIT_OK


def cmd_remove(args: argparse.Namespace) -> int:
    from pmux_widget.notify import webpush
    from pmux_widget.notify.config import ConfigError, edit_config

    home = _home(args)
    which = args.which
    if which.startswith("push:"):
        if webpush.remove_subscription(home, which):
            print(f"{which} removed")
            return EXIT_OK
        _err(f"no browser {which}")
        return EXIT_USAGE
    try:
        number = int(which)
    except ValueError:
        _err("give a channel's number (from `notify list`) or a browser's push:... id")
        return EXIT_USAGE
    try:
        with edit_config(home) as box:
            channels = list(box[0].channels)
            if not 1 <= number <= len(channels):
                _err(f"no channel {number} (there are {len(channels)})")
                return EXIT_USAGE
            gone = channels.pop(number - 1)
            box[0] = type(box[0])(tuple(channels), box[0].settings)
    except ConfigError as exc:
        _err(str(exc))
        return EXIT_FAIL
    print(f"{number}: {gone.masked} removed")
    return EXIT_OK


def cmd_test(args: argparse.Namespace) -> int:
    """Send a test message to every channel and browser (or one), now, and say how it went."""
    from pmux_widget.notify.config import ConfigError
    from pmux_widget.notify.testing import send_test

    home = _home(args)
    try:
        results = send_test(home, args.which)
    except (ConfigError, ValueError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    if not results:
        print("nothing to test: `pmux-widget notify add URL` first")
        return EXIT_FAIL
    for label, error in results:
        print(f"{'OK  ' if not error else 'FAIL'} {label}{': ' + error if error else ''}")
    return EXIT_OK if all(not e for _, e in results) else EXIT_FAIL


def cmd_settings(args: argparse.Namespace) -> int:
    from pmux_widget.notify.config import ConfigError, notify_settings

    changes: dict[str, Any] = {}
    for item in args.changes:
        name, sep, raw = item.partition("=")
        if not sep:
            _err(f"{item!r}: write name=value")
            return EXIT_USAGE
        try:
            changes[name.strip()] = json.loads(raw)
        except ValueError:
            changes[name.strip()] = raw
    try:
        settings = notify_settings(_home(args).root, **changes)
    except (ValueError, ConfigError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    print(json.dumps(settings.to_json(), indent=2))
    return EXIT_OK


def run_fleet_notifier(
    args: argparse.Namespace,
    stop: threading.Event | None = None,
    started: Callable[[Any], None] | None = None,
) -> int:
    """``pmux-widget notify --fleet URL``: notify for every host of the fleet, until Ctrl+C
    (or ``stop``; ``started(notifier)`` is told once it runs). Claims go to the fleet's bucket
    too, so no host sends twice."""
    import signal
    import socket

    from pmux_widget.fleet import Subscriber
    from pmux_widget.fleet.notify_claims import FleetClaims
    from pmux_widget.fleet.view import FleetView
    from pmux_widget.notify.notifier import Notifier

    home = _home(args)
    try:
        subscriber = Subscriber(args.fleet, creds=args.fleet_creds).start(timeout=10)
    except Exception as exc:
        _err(f"fleet {args.fleet}: {exc}")
        return EXIT_FAIL
    view = FleetView(subscriber, home=home.root)
    claims = FleetClaims(args.fleet, creds=args.fleet_creds).start()
    notifier = Notifier(home, host=socket.gethostname(), hub_id="fleet", hub=view, fleet=True)
    notifier.remote_claim = claims.claim
    notifier.answers_here = False
    notifier.on_stop.append(claims.stop)
    notifier.start_sync()
    if started is not None:
        started(notifier)
    print(f"notifying for every host of the fleet at {args.fleet}; Ctrl+C stops", flush=True)
    done = stop or threading.Event()
    if stop is None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: done.set())
    try:
        while not done.wait(0.5):
            pass
    finally:
        notifier.stop_sync()
        view.close()
        subscriber.stop()
    return EXIT_OK


def cmd_notify(args: argparse.Namespace) -> int:
    if args.notify_command is None:
        if args.fleet:
            return run_fleet_notifier(args)
        _err("say what: add, list, remove, test, settings, or --fleet URL")
        return EXIT_USAGE
    return int(args.notify_func(args))


def add_parser(sub: Any) -> None:
    """``pmux-widget notify ...`` under the main parser's subcommands."""
    p = sub.add_parser("notify", help="phone notifications: channels, browsers, settings")
    p.add_argument(
        "--fleet",
        metavar="URL",
        help="notify for every host of this NATS fleet (runs until Ctrl+C)",
    )
    p.add_argument("--fleet-creds", metavar="FILE", help="NATS credentials file for --fleet")
    notify_sub = p.add_subparsers(dest="notify_command")
    p.set_defaults(func=cmd_notify)

    q = notify_sub.add_parser("add", help="add a channel: an Apprise URL (ntfy://, pover://, ...)")
    q.add_argument("url", help="e.g. ntfys://ntfy.sh/<a long random topic>, tgram://TOKEN/CHAT")
    q.add_argument("--states", action="append", help="only these: needs-input,review")
    q.add_argument("--projects", action="append", help="only these projects (globs)")
    q.add_argument("--hosts", action="append", help="only these hosts (globs)")
    q.set_defaults(notify_func=cmd_add)

    q = notify_sub.add_parser("list", help="channels (masked) and browsers, with their health")
    q.add_argument("--json", action="store_true")
    q.set_defaults(notify_func=cmd_list)

    q = notify_sub.add_parser("remove", help="remove channel N, or a browser by its push:... id")
    q.add_argument("which")
    q.set_defaults(notify_func=cmd_remove)

    q = notify_sub.add_parser("test", help="send a test message now to each (or one) destination")
    q.add_argument("which", nargs="?", help="a channel number or a browser id (default: all)")
    q.set_defaults(notify_func=cmd_test)

    q = notify_sub.add_parser("settings", help="show, or change with name=value (JSON values)")
    q.add_argument("changes", nargs="*", help="e.g. delay_s=0 quiet_start=22:00 generic=true")
    q.set_defaults(notify_func=cmd_settings)
