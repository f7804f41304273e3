"""``pmux-widget``: install, uninstall, status, serve, demo, doctor.

``status`` asks a live hub; with none running it computes a snapshot from the files (store,
spool, PID files, transcripts) without changing them.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from pmux_widget.claude.paths import ClaudeHome
from pmux_widget.hooks import live_hubs
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome

__all__ = ["main"]

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _paths(args: argparse.Namespace) -> tuple[PmuxHome, Any]:
    return PmuxHome.resolve(args.home), ClaudeHome.resolve(args.claude_home).root


# ------------------------------------------------------------------------------ install


def cmd_install(args: argparse.Namespace) -> int:
    from pmux_widget import hooks

    home, claude_dir = _paths(args)
    if args.settings_file:
        path = hooks.install_settings_file(home)
        print(f"Wrote {path}\nStart Claude Code with: claude --settings {path}")
        return EXIT_OK
    try:
        result = hooks.install(claude_dir / "settings.json", home)
    except hooks.SettingsError as exc:
        print(f"pmux-widget: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(result.message)
    return EXIT_OK


def cmd_uninstall(args: argparse.Namespace) -> int:
    from pmux_widget import hooks

    home, claude_dir = _paths(args)
    try:
        result = hooks.uninstall(claude_dir / "settings.json", home)
    except hooks.SettingsError as exc:
        print(f"pmux-widget: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(result.message)
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from pmux_widget import hooks

    home, claude_dir = _paths(args)
    checks = hooks.doctor(claude_dir, home)
    for check in checks:
        mark = "OK  " if check.ok else ("note" if check.optional else "FIX ")
        print(f"{mark} {check.name}: {check.message}")
    return EXIT_OK if all(c.ok or c.optional for c in checks) else EXIT_FAIL


# ------------------------------------------------------------------------------- status


def fetch_snapshot(
    home: PmuxHome, timeout: float = 2.0, *, include_ended: bool = False
) -> dict[str, Any] | None:
    """``GET /api/sessions`` from the first live hub that answers, or None (``include_ended``:
    ``?ended=1``, the ended sessions too)."""
    try:
        token = home.token_file.read_text().strip()
    except OSError:
        return None
    for info in live_hubs(home):
        request = urllib.request.Request(
            f"http://127.0.0.1:{info.port}/api/sessions" + ("?ended=1" if include_ended else ""),
            headers={"X-Pmux-Token": token},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                data = json.loads(response.read())
        except (OSError, ValueError, urllib.error.URLError):
            continue
        if isinstance(data, dict) and "sessions" in data:
            return data
    return None


def offline_snapshot(
    home: PmuxHome, claude_dir: Any, *, include_ended: bool = False
) -> dict[str, Any]:
    """What a hub would show, computed from the files alone (nothing is written)."""
    from pmux_widget.runtime.snapshot import compute_snapshot

    return compute_snapshot(home, claude_dir, include_ended=include_ended)


def _age(since_ms: int, now: int) -> str:
    seconds = max(0, (now - since_ms) // 1000)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}"
    return f"{seconds // 86400}d"


def _kilo(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def format_table(snapshot: dict[str, Any], now: int | None = None) -> str:
    """A readable table of the snapshot (what ``status`` prints)."""
    now = now_ms() if now is None else now
    sessions = snapshot.get("sessions", [])
    counts = snapshot.get("counts", {})
    header = (
        f"{counts.get('attention', 0)} need you · {counts.get('needs-input', 0)} needs-input · "
        f"{counts.get('review', 0)} review · {counts.get('busy', 0)} busy · "
        f"{counts.get('unknown', 0)} unknown · {counts.get('idle', 0)} idle"
    )
    if not sessions:
        return header + "\nNo sessions yet."
    rows = [("STATE", "FOR", "SESSION", "PROJECT", "DOING / LAST", "TOKENS", "WHY")]
    for s in sessions:
        state = s["state"] + ("" if s.get("running") else " (ended)")
        if s.get("error"):
            doing = f"error: {s['error']}"
        elif s.get("tool_summary") or s.get("current_tool"):
            doing = s.get("tool_summary") or s.get("current_tool")
        else:
            doing = s.get("last_assistant") or s.get("last_prompt") or ""
        if s.get("compacting"):
            doing = "[compacting] " + doing
        if s.get("subagents"):
            doing = f"[{s['subagents']} sub-agents] " + doing
        tokens = s.get("tokens") or {}
        total_in = tokens.get("input", 0) + tokens.get("cache_read", 0)
        total_in += tokens.get("cache_creation", 0)
        token_text = f"{_kilo(total_in)}/{_kilo(tokens.get('output', 0))}"
        if s.get("context_tokens"):
            token_text += f" ctx {_kilo(s['context_tokens'])}"
        tmux = s.get("tmux")
        project = s.get("project") or ""
        if tmux:
            project += f" {tmux.get('session')}:{tmux.get('window')}.{tmux.get('pane')}"
        rows.append(
            (
                state,
                _age(s.get("state_since") or now, now),
                s["session_id"][:8],
                project,
                doing[:60],
                token_text,
                s.get("source", ""),
            )
        )
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return header + "\n" + "\n".join(line.rstrip() for line in lines)


def cmd_status(args: argparse.Namespace) -> int:
    home, claude_dir = _paths(args)

    def snapshot() -> dict[str, Any]:
        ended = bool(getattr(args, "all", False))
        live = fetch_snapshot(home, include_ended=ended)
        return live if live is not None else offline_snapshot(home, claude_dir, include_ended=ended)

    if not claude_dir.is_dir():
        print(
            f"Claude Code not installed here: {claude_dir} does not exist "
            "(set CLAUDE_CONFIG_DIR if it lives elsewhere).",
            file=sys.stderr,
        )
    if not args.watch:
        data = snapshot()
        if args.json:
            print(json.dumps({"sessions": data["sessions"], "counts": data["counts"]}, indent=2))
        else:
            print(format_table(data))
        return EXIT_OK
    try:
        while True:
            data = snapshot()
            if args.json:
                print(json.dumps({"sessions": data["sessions"], "counts": data["counts"]}))
            else:
                sys.stdout.write("\x1b[H\x1b[2J" + format_table(data) + "\n")
            sys.stdout.flush()
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return EXIT_OK


# -------------------------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace) -> int:
    from pmux_widget.runtime.assemble import make_hub

    hub = make_hub(
        home=args.home, claude_home=args.claude_home, port=args.port, retain_days=args.retain_days
    )
    hub.start()
    print(f"pmux-widget hub on http://127.0.0.1:{hub.port} (pid {hub.hub_id}); Ctrl+C stops")
    sys.stdout.flush()
    done = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        while not done.wait(0.5):
            pass
    finally:
        hub.stop()
    print("pmux-widget hub stopped")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from pmux_widget.demo.launcher import main as demo_main

    return demo_main(list(args.extra))


# --------------------------------------------------------------------------------- main


def resolve_session(sessions: list[dict[str, Any]], given: str) -> str:
    """The session id that ``given`` names: the id itself, or a unique prefix of one (live
    sessions first). ValueError with the reason otherwise."""
    ids = [str(s.get("session_id", "")) for s in sessions]
    if given in ids:
        return given
    live = [str(s["session_id"]) for s in sessions if s.get("running") and not s.get("ended")]
    for pool in (live, ids):
        found = sorted({sid for sid in pool if sid.startswith(given)})
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            shown = ", ".join(sid[:12] for sid in found[:5])
            raise ValueError(f"{given!r} matches {len(found)} sessions ({shown}): give more")
    raise ValueError(f"no session {given!r}")


def post_action(
    home: PmuxHome, session: str, action: str, text: str | None, timeout: float = 30.0
) -> tuple[int, dict[str, Any]]:
    """``POST /api/sessions/<id>/actions`` to the first live hub: (status, JSON body).
    (0, {"error": ...}) when no hub answers."""
    try:
        token = home.token_file.read_text().strip()
    except OSError:
        return 0, {"error": "no pmux-widget token: no hub ever ran here"}
    body = json.dumps({"action": action, **({"text": text} if text is not None else {})})
    for info in live_hubs(home):
        request = urllib.request.Request(
            f"http://127.0.0.1:{info.port}/api/sessions/{session}/actions",
            data=body.encode(),
            method="POST",
            headers={"X-Pmux-Token": token, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            try:
                answer = json.loads(error.read() or b"{}")
            except ValueError:
                answer = {}
            return error.code, answer if isinstance(answer, dict) else {}
        except (OSError, ValueError):
            continue
    return 0, {"error": "no pmux-widget hub answered"}


def cmd_action(args: argparse.Namespace) -> int:
    """approve / deny / interrupt / send: through the live hub (exit 0 delivered, 2 refused).
    With no hub running, one is started here for the action and stopped after it."""
    home, claude_dir = _paths(args)
    text = getattr(args, "text", None)
    snapshot = fetch_snapshot(home)
    if snapshot is None:
        return _act_with_own_hub(home, claude_dir, args.session, args.command, text)
    try:
        sid = resolve_session(list(snapshot.get("sessions", [])), args.session)
    except ValueError as exc:
        print(f"pmux-widget {args.command}: {exc}", file=sys.stderr)
        return 2
    status, answer = post_action(home, sid, args.command, text)
    if status == 202:
        queued = " (queued: the session is busy)" if answer.get("queued") else ""
        print(f"{args.command}: delivered to {sid}{queued}")
        return 0
    print(f"pmux-widget {args.command}: {answer.get('error', f'HTTP {status}')}", file=sys.stderr)
    return 2


def _act_with_own_hub(
    home: PmuxHome, claude_dir: Any, given: str, action: str, text: str | None
) -> int:
    from pmux_widget.runtime.actions import ActionError, act
    from pmux_widget.runtime.assemble import make_hub

    hub = make_hub(home=home.root, claude_home=claude_dir).start()
    try:
        sid = resolve_session([s.to_json() | {"ended": s.ended} for s in hub.sessions()], given)
        result = act(hub, sid, action, text=text, record=hub.record_action)
    except (ValueError, ActionError) as exc:
        print(f"pmux-widget {action}: {exc}", file=sys.stderr)
        return 2
    finally:
        hub.stop()
    queued = " (queued: the session is busy)" if result.queued else ""
    print(f"{action}: delivered to {sid}{queued}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pmux-widget",
        description="Live status of every Claude Code session on this machine.",
    )
    parser.add_argument(
        "--home", help="pmux-widget's home (default $PMUX_WIDGET_HOME or ~/.pmux_widget)"
    )
    parser.add_argument(
        "--claude-home", help="Claude's config dir (default $CLAUDE_CONFIG_DIR or ~/.claude)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("install", help="install the status hooks into Claude's settings.json")
    p.add_argument(
        "--settings-file",
        action="store_true",
        help="write hooks/hooks.json for `claude --settings <file>` instead",
    )
    p.set_defaults(func=cmd_install)

    p = sub.add_parser("uninstall", help="remove exactly our hooks from Claude's settings.json")
    p.set_defaults(func=cmd_uninstall)

    p = sub.add_parser("status", help="print every live session's state")
    p.add_argument("--json", action="store_true", help='{"sessions": [...], "counts": {...}}')
    p.add_argument(
        "--all", action="store_true", help="list ended sessions too (counts stay the live ones)"
    )
    p.add_argument("--watch", action="store_true", help="refresh until Ctrl+C")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between refreshes")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("serve", help="run a hub in the foreground until SIGINT/SIGTERM")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    p.add_argument(
        "--retain-days",
        type=float,
        default=30.0,
        metavar="N",
        help="keep ended sessions' history N days after their last activity (default 30)",
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "demo",
        help="JupyterLab over a demo fleet of Claude sessions (options: pmux-widget demo --help)",
        add_help=False,
    )
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("doctor", help="check the setup, line by line")
    p.set_defaults(func=cmd_doctor)

    for name, what in (
        ("approve", 'choose "Yes" in the session\'s permission dialog'),
        ("deny", 'choose "No" in the session\'s permission dialog'),
        ("interrupt", "press Esc in the session (stops its turn, or a dialog)"),
        ("send", "type a prompt into the session and submit it"),
    ):
        p = sub.add_parser(name, help=f"{what} (exit 0 delivered, 2 refused)")
        p.add_argument("session", help="a session id or a unique prefix of one")
        if name == "send":
            p.add_argument("text", help="the prompt (one line)")
        p.set_defaults(func=cmd_action)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "demo":  # only the demo forwards its own options
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
