"""``pmux-widget``: install, uninstall, status, serve, demo, doctor.

``status`` asks a live hub; with none running it computes a snapshot from the files (store,
spool, PID files, transcripts) without changing them.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.agents.codex import CodexHome
from pmux_widget.agents.seam import seam_of
from pmux_widget.cli.notify import add_parser as add_notify_parser
from pmux_widget.cli.table import format_table, redraw, watch
from pmux_widget.core.agents import Agent
from pmux_widget.hooks import live_hubs
from pmux_widget.system.home import PmuxHome

__all__ = ["main"]

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _paths(args: argparse.Namespace) -> tuple[PmuxHome, Any]:
    return PmuxHome.resolve(args.home), ClaudeHome.resolve(args.claude_home).root


# ------------------------------------------------------------------------------ install

#: Each agent's command-line options: its home, and install's flag that creates a missing one.
_HOME_OPTION: dict[Agent, str] = {"claude": "claude_home", "codex": "codex_home"}
_CREATE_FLAG: dict[Agent, str] = {"claude": "create", "codex": "codex"}


def _codex_home(args: argparse.Namespace) -> CodexHome:
    return CodexHome.resolve(getattr(args, "codex_home", None))


def _agent_home(args: argparse.Namespace, agent: Agent) -> Path:
    return seam_of(agent).home(getattr(args, _HOME_OPTION[agent], None)).root


def cmd_install(args: argparse.Namespace) -> int:
    from pmux_widget import hooks

    home = PmuxHome.resolve(args.home)
    if args.settings_file:
        path = hooks.install_settings_file(home, tool_hooks=args.tool_hooks)
        print(f"Wrote {path}\nStart Claude Code with: claude --settings {path}")
        return EXIT_OK
    code = EXIT_OK
    for agent, ours in hooks.AGENT_HOOKS.items():
        root, flag = _agent_home(args, agent), _CREATE_FLAG[agent]
        create = bool(getattr(args, flag))
        if ours.optional and not root.is_dir() and not create:
            title = seam_of(agent).facts.title
            print(f"{title}: {root} not found, skipped (--{flag} creates it and installs there)")
            continue
        try:
            print(ours.install(root, home, create, args.tool_hooks))
        except hooks.SettingsError as exc:
            print(f"pmux-widget: {exc}", file=sys.stderr)
            code = EXIT_USAGE
    return code


def cmd_uninstall(args: argparse.Namespace) -> int:
    from pmux_widget import hooks

    home = PmuxHome.resolve(args.home)
    code = EXIT_OK
    for agent, ours in hooks.AGENT_HOOKS.items():
        root = _agent_home(args, agent)
        if ours.optional and not root.is_dir():
            continue
        try:
            print(ours.uninstall(root, home))
        except hooks.SettingsError as exc:
            print(f"pmux-widget: {exc}", file=sys.stderr)
            code = EXIT_USAGE
    return code


def cmd_doctor(args: argparse.Namespace) -> int:
    from pmux_widget import hooks

    home, claude_dir = _paths(args)
    checks = hooks.doctor(claude_dir, home, codex_home=_codex_home(args))
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
    home: PmuxHome,
    claude_dir: Any,
    *,
    include_ended: bool = False,
    as_sessions: bool = False,
    reads: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What a hub would show, computed from the files alone (nothing is written);
    ``as_sessions``: the sessions as values with their bookkeeping, for the table; ``reads``:
    kept between refreshes (``--watch``), so each reads only what the transcripts gained."""
    from pmux_widget.runtime.snapshot import TranscriptReads, compute_snapshot

    kept = reads.setdefault("reads", TranscriptReads()) if reads is not None else None
    return compute_snapshot(
        home, claude_dir, include_ended=include_ended, as_sessions=as_sessions, reads=kept
    )


def cmd_status(args: argparse.Namespace) -> int:
    if args.fleet:
        from pmux_widget.cli.fleet import status_fleet

        return status_fleet(args)
    home, claude_dir = _paths(args)
    reads: dict[str, Any] = {}  # the runtime loads only when no hub answers

    def snapshot() -> dict[str, Any]:
        ended = bool(getattr(args, "all", False))
        live = fetch_snapshot(home, include_ended=ended)
        if live is not None:
            return live
        return offline_snapshot(
            home, claude_dir, include_ended=ended, as_sessions=not args.json, reads=reads
        )

    if not claude_dir.is_dir():
        print(
            f"Claude Code not installed here: {claude_dir} does not exist "
            "(set CLAUDE_CONFIG_DIR if it lives elsewhere).",
            file=sys.stderr,
        )
    raw_why = bool(getattr(args, "why", False))
    if not args.watch:
        data = snapshot()
        if args.json:
            print(json.dumps({"sessions": data["sessions"], "counts": data["counts"]}, indent=2))
        else:
            print(format_table(data, raw_why=raw_why))
        return EXIT_OK

    def frame() -> str:
        data = snapshot()
        if args.json:
            return json.dumps({"sessions": data["sessions"], "counts": data["counts"]}) + "\n"
        return redraw(format_table(data, raw_why=raw_why))

    return watch(frame, args.interval, in_place=not args.json)


# -------------------------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace) -> int:
    from pmux_widget.cli.fleet import fleet_url, start_fleet_publisher
    from pmux_widget.fleet.notify_claims import attach_fleet_claims
    from pmux_widget.runtime.assemble import make_hub

    # The handlers go in before the hub says it listens: whoever read that line may stop it at
    # once, and a SIGTERM before them killed the process (-15) with its runtime file left.
    done = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    hub = make_hub(
        home=args.home, claude_home=args.claude_home, port=args.port, retain_days=args.retain_days
    )
    hub.start()
    print(
        f"pmux-widget hub on http://127.0.0.1:{hub.port} (hub {hub.hub_id}, pid {os.getpid()});"
        " Ctrl+C stops"
    )
    publisher, url = None, fleet_url(args.fleet)
    if url:
        try:
            publisher = start_fleet_publisher(
                hub, url, host=args.host_name, creds=args.fleet_creds, redact=args.redact
            )
        except (ImportError, RuntimeError, ValueError) as exc:  # no nats-py, a bad host name
            hub.stop()
            print(f"pmux-widget: {exc}", file=sys.stderr)
            return EXIT_USAGE
        print(f"publishing to the fleet at {url} as host {publisher.host}")
        attach_fleet_claims(hub, url, creds=args.fleet_creds, host=publisher.host)
    sys.stdout.flush()
    try:
        while not done.wait(0.5):
            pass
    finally:
        if publisher is not None:
            publisher.stop()
        hub.stop()
    print("pmux-widget hub stopped")
    return EXIT_OK


def _cmd_fleet_forget(args: argparse.Namespace) -> int:
    from pmux_widget.cli.fleet import fleet_forget

    return fleet_forget(args)


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
    home: PmuxHome,
    session: str,
    action: str,
    text: str | None,
    timeout: float = 30.0,
    *,
    options: Sequence[str] | None = None,
    mode: str | None = None,
) -> tuple[int, dict[str, Any]]:
    """``POST /api/sessions/<id>/actions`` to the first live hub: (status, JSON body).
    (0, {"error": ...}) when no hub answers."""
    try:
        token = home.token_file.read_text().strip()
    except OSError:
        return 0, {"error": "no pmux-widget token: no hub ever ran here"}
    fields = {"text": text, "options": list(options) if options else None, "mode": mode}
    body = json.dumps({"action": action, **{k: v for k, v in fields.items() if v is not None}})
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
    """approve / deny / interrupt / send / stop / remove: through the live hub (exit 0
    delivered, 2 refused).
    With no hub running, one is started here for the action and stopped after it."""
    home, claude_dir = _paths(args)
    text = getattr(args, "text", None)
    options = getattr(args, "option", None)
    mode = getattr(args, "mode", None)
    snapshot = fetch_snapshot(home)
    if snapshot is None:
        return _act_with_own_hub(
            home, claude_dir, args.session, args.command, text, options=options, mode=mode
        )
    try:
        sid = resolve_session(list(snapshot.get("sessions", [])), args.session)
    except ValueError as exc:
        print(f"pmux-widget {args.command}: {exc}", file=sys.stderr)
        return 2
    status, answer = post_action(home, sid, args.command, text, options=options, mode=mode)
    if status == 202:
        queued = " (queued: the session is busy)" if answer.get("queued") else ""
        print(f"{args.command}: delivered to {sid}{queued}")
        return 0
    print(f"pmux-widget {args.command}: {answer.get('error', f'HTTP {status}')}", file=sys.stderr)
    return 2


def _act_with_own_hub(
    home: PmuxHome,
    claude_dir: Any,
    given: str,
    action: str,
    text: str | None,
    *,
    options: Sequence[str] | None = None,
    mode: str | None = None,
) -> int:
    from pmux_widget.runtime.actions import ActionError, act
    from pmux_widget.runtime.assemble import make_hub

    hub = make_hub(home=home.root, claude_home=claude_dir).start()
    try:
        sid = resolve_session([s.to_json() | {"ended": s.ended} for s in hub.sessions()], given)
        result = act(
            hub, sid, action, text=text, options=options, mode=mode, record=hub.record_action
        )
    except (ValueError, ActionError) as exc:
        print(f"pmux-widget {action}: {exc}", file=sys.stderr)
        return 2
    finally:
        hub.stop()
    queued = " (queued: the session is busy)" if result.queued else ""
    print(f"{action}: delivered to {sid}{queued}")
    return 0


def cmd_attach(args: argparse.Namespace) -> int:
    """Attach in a terminal: run in a terminal and outside tmux, this process becomes ``claude
    attach <job>`` (the terminal is already there: a window elsewhere would be out of sight);
    inside tmux, with ``--tmux``, or with no terminal, a tmux window (``Session.attach()``),
    brought to the front if one is open already. Exit 2 with the reason when refused."""
    from pmux_widget.core.model import Session
    from pmux_widget.runtime.actions import ActionError
    from pmux_widget.runtime.attach_window import attach_here, attach_session

    home, claude_dir = _paths(args)
    snapshot = fetch_snapshot(home)
    hub = None
    if snapshot is not None:
        # every row of a hub is this machine's, whatever host name it publishes under
        rows = [{**s, "host": None} for s in snapshot["sessions"]]
        sessions = {str(s["session_id"]): Session.from_record(s) for s in rows}
    else:  # no hub runs: one reads the files, for this command only
        from pmux_widget.runtime.assemble import make_hub

        hub = make_hub(home=home.root, claude_home=claude_dir).start()
        sessions = {s.session_id: s for s in hub.sessions() if not s.ended}
    try:
        sid = resolve_session([s.to_json() for s in sessions.values()], args.session)
        here = sys.stdin.isatty() and not os.environ.get("TMUX") and not args.tmux
        if here:
            argv, env = attach_here(claude_dir, sessions[sid])
        else:
            window = attach_session(claude_dir, sessions[sid])
    except (ValueError, ActionError) as exc:
        print(f"pmux-widget attach: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if hub is not None:
            hub.stop()
    if here:
        sys.stdout.flush()
        os.execvpe(argv[0], argv, env)  # Ctrl+Z detaches; the session runs on
    again = "" if window.opened else " (open already: brought to the front)"
    print(f"attached in tmux window {window.target}{again}: {window.attach_command}")
    return EXIT_OK


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
    parser.add_argument("--codex-home", help="Codex's home (default $CODEX_HOME or ~/.codex)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "install",
        help="install the status hooks into Claude's settings.json, and into Codex's hooks.json "
        "(trusted in its config.toml) when Codex's home exists",
    )
    p.add_argument(
        "--settings-file",
        action="store_true",
        help="write hooks/hooks.json for `claude --settings <file>` instead",
    )
    p.add_argument(
        "--tool-hooks",
        action="store_true",
        help="also register PreToolUse, PostToolUse and PostToolUseFailure (async): not "
        "needed by the monitor (the transcript names the current tool), and they cost the "
        "agent about 16 ms per tool call; without this flag, install removes them",
    )
    p.add_argument(
        "--create",
        action="store_true",
        help="create Claude's config dir when it is missing (it is not created otherwise: "
        "a missing one usually means Claude Code is not installed, or CLAUDE_CONFIG_DIR "
        "points elsewhere)",
    )
    p.add_argument(
        "--codex",
        action="store_true",
        help="install into Codex too even when its home ($CODEX_HOME or ~/.codex) does not "
        "exist yet (it is created)",
    )
    p.set_defaults(func=cmd_install)

    p = sub.add_parser(
        "uninstall",
        help="remove exactly our hooks from Claude's settings.json and Codex's hooks.json "
        "(and their trust)",
    )
    p.set_defaults(func=cmd_uninstall)

    p = sub.add_parser("status", help="print every live session's state")
    p.add_argument("--json", action="store_true", help='{"sessions": [...], "counts": {...}}')
    p.add_argument(
        "--all", action="store_true", help="list ended sessions too (counts stay the live ones)"
    )
    p.add_argument(
        "--why", action="store_true", help="the raw source of each state beside its words"
    )
    p.add_argument("--watch", action="store_true", help="refresh in place until Ctrl+C")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between refreshes")
    p.add_argument("--fleet", metavar="URL", help="every host's sessions from this NATS server")
    p.add_argument("--fleet-creds", metavar="FILE", help="NATS credentials file for --fleet")
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
    p.add_argument(
        "--fleet", metavar="URL", help="publish to this NATS server (default $PMUX_WIDGET_FLEET)"
    )
    p.add_argument("--host-name", help="this machine's name in the fleet (default: hostname)")
    p.add_argument("--fleet-creds", metavar="FILE", help="NATS credentials file for --fleet")
    p.add_argument("--redact", action="store_true", help="publish no prompt, answer or tool input")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("fleet", help="manage the fleet's shared state")
    fleet_sub = p.add_subparsers(dest="fleet_command", required=True)
    p = fleet_sub.add_parser("forget", help="remove a host that is gone for good")
    p.add_argument("host", help="the host's name as the fleet shows it")
    p.add_argument("--fleet", metavar="URL", help="the NATS server (default $PMUX_WIDGET_FLEET)")
    p.add_argument("--fleet-creds", metavar="FILE", help="NATS credentials file")
    p.set_defaults(func=_cmd_fleet_forget)

    add_notify_parser(sub)

    p = sub.add_parser(
        "demo",
        help="JupyterLab over a demo fleet of Claude sessions (options: pmux-widget demo --help)",
        add_help=False,
    )
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("doctor", help="check the setup, line by line")
    p.set_defaults(func=cmd_doctor)

    for name, what in (
        ("approve", 'choose "Yes" in the session\'s permission dialog, or accept its plan'),
        ("deny", 'choose "No" in the session\'s permission dialog, or keep planning'),
        ("interrupt", "press Esc in the session (stops its turn, or a dialog)"),
        ("send", "type a prompt into the session and submit it"),
        ("answer", "answer the session's question by option label (or --text for Other)"),
        ("stop", "stop a Claude Code background session (claude stop <job>)"),
        ("remove", "remove a Claude Code background session (claude rm <job>)"),
    ):
        p = sub.add_parser(name, help=f"{what} (exit 0 delivered, 2 refused)")
        p.add_argument("session", help="a session id or a unique prefix of one")
        if name == "send":
            p.add_argument("text", help="the prompt (one line)")
        if name == "answer":
            p.add_argument(
                "--option",
                action="append",
                metavar="LABEL",
                help="an option's label (repeat for a multi-select or several questions)",
            )
            p.add_argument("--text", help='the free-text answer ("Other")')
        if name == "approve":
            p.add_argument(
                "--mode",
                help="a plan: the permission mode to switch to (default: ask for each edit)",
            )
        if name == "deny":
            p.add_argument("--text", help="a plan: the feedback Claude keeps planning with")
        p.set_defaults(func=cmd_action)

    p = sub.add_parser(
        "attach",
        help="attach a Claude Code background session: claude attach <job> in this terminal "
        "(outside tmux), else in a tmux window, brought to the front (exit 2 refused)",
    )
    p.add_argument("session", help="a session id or a unique prefix of one")
    p.add_argument("--tmux", action="store_true", help="a tmux window even when run in a terminal")
    p.set_defaults(func=cmd_attach)
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
