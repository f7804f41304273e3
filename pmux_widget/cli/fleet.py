"""The fleet commands of ``pmux-widget``: ``status --fleet``, ``serve --fleet``, ``fleet forget``.

Kept apart from commands.py so that the fleet (and nats-py, an optional extra) loads only when a
command asks for it. The table is ``status``'s (:func:`pmux_widget.cli.table.format_table`), once
per host, rows ordered by workspace.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from pmux_widget.system.clock import now_ms

if TYPE_CHECKING:
    from pmux_widget.fleet import Publisher
    from pmux_widget.runtime.hub import Hub

__all__ = ["fleet_url", "format_fleet_table", "start_fleet_publisher", "status_fleet"]

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
#: How long ``status --fleet`` waits for the broker's snapshot before it gives up.
SNAPSHOT_TIMEOUT = 10.0


class FleetUnavailable(RuntimeError):
    """nats-py is missing: the fleet is an optional extra."""


def _fleet() -> Any:
    try:
        from pmux_widget import fleet
    except ImportError as exc:
        raise FleetUnavailable(
            f"the fleet needs nats-py ({exc}): pip install 'pmux-widget[fleet]'"
        ) from None
    return fleet


def fleet_url(explicit: str | None) -> str | None:
    """``--fleet URL``, else ``$PMUX_WIDGET_FLEET``, else None (no fleet)."""
    return explicit or os.environ.get("PMUX_WIDGET_FLEET") or None


def start_fleet_publisher(
    hub: Hub,
    url: str,
    *,
    host: str | None = None,
    creds: str | None = None,
    redact: bool = False,
) -> Publisher:
    """Publish ``hub`` to the fleet (returns at once; connects in the background)."""
    publisher: Publisher = _fleet().start_publisher(hub, url, host=host, creds=creds, redact=redact)
    hub.host_name = publisher.host  # the local JSON names the host as the fleet does
    return publisher


def _ago(ms: int, now: int) -> str:
    from pmux_widget.cli.table import age as _age

    return "never" if not ms else _age(ms, now) + " ago"


def format_fleet_table(snapshot: dict[str, Any], now: int | None = None, dim: bool = False) -> str:
    """Every host's sessions: the fleet's counts, then per host a line and its table."""
    from pmux_widget.cli.table import format_table, terminal_width
    from pmux_widget.core.wording import need_you

    now = now_ms() if now is None else now
    fleet = _fleet()
    counts = snapshot.get("counts", {})
    hosts: dict[str, dict[str, Any]] = snapshot.get("hosts", {})
    by_host: dict[str, list[dict[str, Any]]] = {host: [] for host in hosts}
    for session in snapshot.get("sessions", []):
        by_host.setdefault(str(session.get("host") or "?"), []).append(session)
    online = sum(1 for h in hosts.values() if h.get("online"))
    lines = [
        f"fleet: {len(by_host)} hosts ({online} online) · {need_you(counts.get('attention', 0))}"
        f" · {counts.get('busy', 0)} busy · {counts.get('idle', 0)} idle"
    ]
    for host in sorted(by_host):
        info = hosts.get(host, {})
        sessions = fleet.sort_fleet(by_host[host])
        ended = sum(1 for s in sessions if fleet.is_ended(s))  # listed with --all only
        listed = f"{len(sessions)} sessions" + (f" ({ended} ended)" if ended else "")
        if info.get("online"):
            title = f"== {host} · online · {listed}"
        else:
            title = (
                f"== {host} · OFFLINE (last seen {_ago(int(info.get('last_seen') or 0), now)}) "
                f"· its last known {listed}"
            )
        table = format_table(
            {"sessions": sessions, "counts": fleet.count_json(sessions)},
            now,
            width=terminal_width() - 3,
        )
        block = [title, *("   " + line for line in table.splitlines())]
        if dim and not info.get("online"):
            block = [f"\x1b[2m{line}\x1b[0m" for line in block]
        lines.append("")
        lines.extend(block)
    if not by_host:
        lines.append("No host has published yet.")
    return "\n".join(lines)


def status_fleet(args: argparse.Namespace) -> int:
    """``pmux-widget status --fleet URL [--json] [--all] [--watch]``: the live sessions, as
    local ``status``; ``--all`` lists the ended ones too (the counts stay the live ones')."""
    try:
        fleet = _fleet()
    except FleetUnavailable as exc:
        print(f"pmux-widget: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # a one-shot status fails fast when the broker is down; --watch waits for it
    subscriber = fleet.Subscriber(
        args.fleet, creds=args.fleet_creds, reconnect_forever=bool(args.watch)
    )
    try:
        subscriber.start(timeout=SNAPSHOT_TIMEOUT)
    except TimeoutError as exc:
        print(f"pmux-widget: {exc}", file=sys.stderr)
        return EXIT_FAIL
    dim = sys.stdout.isatty()
    include_ended = bool(getattr(args, "all", False))
    try:
        if not args.watch:
            data = subscriber.snapshot_json(include_ended)
            print(json.dumps(data, indent=2) if args.json else format_fleet_table(data, dim=dim))
            return EXIT_OK
        from pmux_widget.cli.table import redraw, watch

        def frame() -> str:
            data = subscriber.snapshot_json(include_ended)
            if args.json:
                return json.dumps(data) + "\n"
            return redraw(format_fleet_table(data, dim=dim))

        return watch(frame, args.interval, in_place=not args.json)
    finally:
        subscriber.stop()


def fleet_forget(args: argparse.Namespace) -> int:
    """``pmux-widget fleet forget HOST --fleet URL``: drop a host gone for good."""
    url = fleet_url(args.fleet)
    if not url:
        print("pmux-widget: fleet forget needs --fleet URL (or PMUX_WIDGET_FLEET)", file=sys.stderr)
        return EXIT_USAGE
    try:
        removed = _fleet().forget(url, args.host, creds=args.fleet_creds)
    except FleetUnavailable as exc:
        print(f"pmux-widget: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # broker unreachable, bad credentials: say so plainly
        print(f"pmux-widget: could not reach the fleet at {url}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    print(f"Removed {removed} keys of host {args.host} from the fleet.")
    return EXIT_OK
