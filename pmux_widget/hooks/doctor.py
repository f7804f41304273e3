"""``pmux-widget doctor``: what the hooks need, checked one line at a time. Hubs are checked
over HTTP (``GET /api/health``), never by importing the runtime.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import sqlite3
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmux_widget.agents.codex import CodexHome
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.processes import pid_alive

from .codex_install import codex_hooks_status
from .hubs import live_hubs
from .install import hooks_status
from .spool import spooled_count

__all__ = ["DoctorCheck", "doctor"]


@dataclass(frozen=True)
class DoctorCheck:
    """One line of ``pmux-widget doctor``: ``message`` says what is fine or what to do."""

    name: str
    ok: bool
    message: str
    optional: bool = False


def _health(port: int, timeout: float) -> str | None:
    """None if ``GET /api/health`` answers ``{"ok": true}``, else why not."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/api/health", timeout=timeout) as response:
            body = json.loads(response.read(65536) or b"null")
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, OSError) and reason.errno == errno.ECONNREFUSED:
            return "connection refused"
        return str(reason) or type(exc).__name__
    if isinstance(body, dict) and body.get("ok") is True:
        return None
    return "unexpected answer"


def doctor(
    claude_home_dir: Path,
    home: PmuxHome,
    *,
    timeout: float = 0.5,
    codex_home: CodexHome | None = None,
) -> list[DoctorCheck]:
    """Check what the hooks need, one :class:`DoctorCheck` per line. Never raises.
    ``codex_home``: Codex's (default ``$CODEX_HOME`` or ``~/.codex``); a missing one is a
    note, not a fault (Codex is optional)."""
    checks: list[DoctorCheck] = []
    claude_dir = Path(claude_home_dir)
    if claude_dir.is_dir():
        checks.append(DoctorCheck("claude config dir", True, f"{claude_dir}"))
    else:
        checks.append(
            DoctorCheck(
                "claude config dir",
                False,
                f"{claude_dir} not found: install Claude Code and run it once, "
                "or set CLAUDE_CONFIG_DIR",
            )
        )
    status = hooks_status(claude_dir / "settings.json", home)
    checks.append(DoctorCheck("hooks", status.ok, status.message))
    if status.script_exists and not status.script_current:
        checks.append(
            DoctorCheck(
                "hook script",
                False,
                f"{home.hook_script} differs from this version's: run `pmux-widget install`",
            )
        )
    elif status.script_exists:
        checks.append(DoctorCheck("hook script", status.script_executable, str(home.hook_script)))
    else:
        checks.append(
            DoctorCheck(
                "hook script", False, f"{home.hook_script} missing: run `pmux-widget install`"
            )
        )
    codex = codex_hooks_status(codex_home or CodexHome.resolve(), home)
    checks.append(
        DoctorCheck("codex hooks", codex.ok, codex.message, optional=not codex.home_exists)
    )
    token = home.token_file
    if token.is_file():
        mode = token.stat().st_mode & 0o777
        checks.append(
            DoctorCheck(
                "token",
                mode & 0o077 == 0,
                f"{token}" if mode & 0o077 == 0 else f"{token} is {mode:o}: chmod 600 {token}",
            )
        )
    else:
        checks.append(DoctorCheck("token", False, f"{token} missing: run `pmux-widget install`"))
    checks.append(_store_check(home))
    curl = shutil.which("curl")
    checks.append(
        DoctorCheck("curl", True, curl)
        if curl
        else DoctorCheck("curl", False, "curl not found on PATH: install curl (apt install curl)")
    )
    checks.append(_hub_check(home, timeout))
    checks.extend(_jupyter_checks(home))
    from pmux_widget.notify.status import notify_checks  # only doctor needs it: hooks load fast

    checks.extend(DoctorCheck(c.name, c.ok, c.message, c.optional) for c in notify_checks(home))
    tmux = shutil.which("tmux")
    checks.append(
        DoctorCheck("tmux", True, tmux, optional=True)
        if tmux
        else DoctorCheck(
            "tmux",
            False,
            "tmux not found (optional: sessions are then grouped by project)",
            optional=True,
        )
    )
    return checks


def _store_check(home: PmuxHome) -> DoctorCheck:
    """Whether a hub found ``state.db`` corrupt, unreadable or locked and moved it aside (the
    store writes ``state.db.corrupt-<time>`` / ``state.db.locked-<time>``): said here until
    the user removes the file, so a rebuild from scratch never goes unexplained."""
    db = home.db_path
    try:
        aside = sorted(
            (
                p
                for p in db.parent.glob(f"{db.name}.*-*")
                if p.name[len(db.name) + 1 :].startswith(("corrupt-", "locked-"))
                and not p.name.endswith(("-wal", "-shm", "-journal"))
            ),
            key=lambda p: p.name.split("-", 1)[1],  # by time, whichever the kind
        )
    except OSError:
        aside = []
    if _locked_now(db):
        return DoctorCheck(
            "store",
            False,
            f"{db} is locked by another process right now (a stuck `sqlite3` shell or tool?): "
            "running hubs keep tracking and hold their changes in a queue, written once the "
            "lock is gone; if it stays locked a minute they move the file aside",
            optional=True,
        )
    if not aside:
        return DoctorCheck("store", True, str(db))
    last = aside[-1]
    kind = "corrupt or unreadable" if ".corrupt-" in last.name else "locked by a stuck process"
    return DoctorCheck(
        "store",
        True,
        f"{db.name} was {kind}: a hub moved it aside to {last} and rebuilt the sessions "
        "from PID files, transcripts and the spool (their history before that is in the "
        f"moved file; delete {last.name}* once you no longer need it)"
        + (f"; {len(aside) - 1} older such file(s) too" if len(aside) > 1 else ""),
    )


def _locked_now(db: Path, wait: float = 1.0) -> bool:
    """Whether another process holds the write lock of ``db`` for longer than ``wait`` (a
    hub's own writes hold it for milliseconds). Takes the lock and gives it back: writes
    nothing, creates nothing."""
    if not db.is_file():
        return False
    try:
        conn = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=wait, isolation_level=None)
    except sqlite3.Error:
        return False
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        return getattr(exc, "sqlite_errorcode", None) in (5, 6) or "locked" in str(exc)
    finally:
        conn.close()
    return False


def _hub_check(home: PmuxHome, timeout: float) -> DoctorCheck:
    spooled = spooled_count(home)
    waiting = f"; {spooled} spooled events wait for it" if spooled else ""
    try:
        files = sorted(home.runtime_dir.glob("*.json"))
    except OSError:
        files = []
    # No hub is information, not a failure (hooks spool until one starts): a note.
    if not files:
        return DoctorCheck(
            "hub",
            False,
            "no hub running: call pmux_widget.start() (or show()) in a notebook, "
            f"or run `pmux-widget serve`{waiting}",
            optional=True,
        )
    reachable, problems = [], []
    live = {hub.path: hub for hub in live_hubs(home)}
    for path in files:
        hub = live.get(path)
        if hub is None:
            problems.append(f"{path.name}: stale (process gone or bad file)")
            continue
        why = _health(hub.port, timeout)
        if why is None:
            reachable.append(f"127.0.0.1:{hub.port} (pid {hub.pid})")
        else:
            problems.append(f"{path.name}: port {hub.port}: {why}")
    if reachable:
        extra = f" ({'; '.join(problems)})" if problems else ""
        return DoctorCheck("hub", True, f"reachable: {', '.join(reachable)}{extra}{waiting}")
    return DoctorCheck(
        "hub",
        False,
        f"no hub reachable ({'; '.join(problems)}): start one with pmux_widget.start() "
        f"or `pmux-widget serve`{waiting}",
        optional=True,
    )


#: The server extension's module, as ``jpserver_extensions`` names it.
SERVER_EXTENSION = "pmux_widget.jupyter"


def _jupyter_checks(home: PmuxHome) -> list[DoctorCheck]:
    """The Jupyter server extension: enabled in this Python's Jupyter config, and whether each
    running Jupyter server runs a hub (it must be installed where the *server* runs, which
    may not be where this command or a kernel runs). Optional: notebooks work without it."""
    try:
        from jupyter_core.paths import jupyter_config_path, jupyter_runtime_dir
        from jupyter_server.extension.config import ExtensionConfigManager
    except ImportError:
        return [
            DoctorCheck(
                "jupyter server extension",
                False,
                f"jupyter_server is not installed for {sys.executable}: install pmux-widget "
                "into the environment that runs the Jupyter server (JupyterLab, Notebook 7, "
                "JupyterHub's single-user server) for the side panel and status bar",
                optional=True,
            )
        ]
    checks: list[DoctorCheck] = []
    try:
        manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
        extensions: dict[str, Any] = manager.get_jpserver_extensions()  # type: ignore[no-untyped-call]
        enabled: bool | None = bool(extensions.get(SERVER_EXTENSION))
    except Exception as exc:  # a malformed config file: say which, never crash doctor
        checks.append(
            DoctorCheck(
                "jupyter server extension",
                False,
                f"could not read Jupyter's config: {exc}",
                optional=True,
            )
        )
        enabled = None
    if enabled is True:
        checks.append(
            DoctorCheck(
                "jupyter server extension",
                True,
                f"{SERVER_EXTENSION} enabled for {sys.executable} "
                "(c.PmuxWidget.hub = False or PMUX_WIDGET_SERVER_HUB=0 turns its hub off)",
                optional=True,
            )
        )
    elif enabled is False:
        checks.append(
            DoctorCheck(
                "jupyter server extension",
                False,
                f"{SERVER_EXTENSION} is not enabled for {sys.executable}: a wheel install "
                "enables it (etc/jupyter/jupyter_server_config.d/pmux_widget.json); an "
                f"editable one needs `jupyter server extension enable {SERVER_EXTENSION}`",
                optional=True,
            )
        )
    hub_pids = {hub.pid for hub in live_hubs(home)}
    for server in _running_servers(jupyter_runtime_dir()):
        pid, url = server["pid"], str(server.get("url") or "?")
        if pid in hub_pids:
            checks.append(
                DoctorCheck("jupyter server", True, f"{url} (pid {pid}) runs a hub", optional=True)
            )
        else:
            checks.append(
                DoctorCheck(
                    "jupyter server",
                    False,
                    f"{url} (pid {pid}) runs no pmux-widget hub: install pmux-widget with "
                    "that server's Python and restart it (or its hub is turned off)",
                    optional=True,
                )
            )
    return checks


def _running_servers(runtime_dir: str) -> list[dict[str, Any]]:
    """The info files of running Jupyter servers (read only: stale ones are left alone)."""
    found: list[dict[str, Any]] = []
    try:
        names = sorted(os.listdir(runtime_dir))
    except OSError:
        return found
    for name in names:
        if not re.fullmatch(r"jpserver-\d+\.json", name):
            continue
        try:
            info = json.loads(Path(runtime_dir, name).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and isinstance(info.get("pid"), int) and pid_alive(info["pid"]):
            found.append(info)
    return found
