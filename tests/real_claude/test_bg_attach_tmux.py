""" "Attach in a terminal" outside JupyterLab with the real CLI (issue 26): ``Session.attach()``
opens a window running ``claude attach <job>`` in a PRIVATE tmux server (``TMUX_TMPDIR`` in the
test's folder and ``PMUX_WIDGET_TMUX_SOCKET``: never the user's tmux) whose screen shows the
session's dialog; a second call brings the same window to the front and opens none; ``pmux-widget
attach --tmux`` finds it too; a session that is no background one is refused. The session runs
on after the window's server is gone (the attach was only a client)."""

from __future__ import annotations

import importlib
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

import pmux_widget
from pmux_widget.agents.claude.screen import parse_screen
from pmux_widget.cli import commands as cli
from pmux_widget.core import model
from pmux_widget.core import signals as s
from pmux_widget.core.model import State
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.runtime.action_outcome import ActionError
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until

pytestmark = pytest.mark.all_versions

SOCKET = "pmux-attach-test"


class PrivateTmux:
    def __init__(self, folder: Path) -> None:
        self.env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.env["TMUX_TMPDIR"] = str(folder)

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", SOCKET, *args], env=self.env, capture_output=True, text=True
        )
        return done.stdout if done.returncode == 0 else ""

    def windows(self) -> list[str]:
        return self.run(
            "list-windows", "-a", "-F", "#{session_name}:#{window_index} #{@pmux-attach}"
        ).splitlines()


@pytest.fixture
def hub_with_bg(
    make_bg: Callable[..., BgClaude], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[BgClaude, Hub, PrivateTmux]]:
    home = PmuxHome(tmp_path / "pmux")
    bg = make_bg(pmux_home=home)
    folder = tmp_path / "tmux"
    folder.mkdir()
    monkeypatch.setenv("TMUX_TMPDIR", str(folder))
    monkeypatch.setenv("PMUX_WIDGET_TMUX_SOCKET", SOCKET)
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/elsewhere,1,0")  # a caller inside another tmux
    monkeypatch.setenv("TMUX_PANE", "%77")
    hub = make_hub(home=home.root, claude_home=bg.env.config_dir).start()
    # Session.attach() through the API, on this hub (the module that defines hub())
    api = importlib.import_module(pmux_widget.hub.__module__)
    monkeypatch.setattr(api, "_hub", hub)
    monkeypatch.setattr(model, "_session_handler", api._SessionHandler())
    tmux = PrivateTmux(folder)
    try:
        yield bg, hub, tmux
    finally:
        tmux.run("kill-server")
        hub.stop()
    assert hub.errors == 0


def _clients(bg: BgClaude, job: str) -> list[int]:
    """The ``claude attach <job>`` clients of this env (other tests may run their own), but
    the hub's warm attach (held in a private tmux server of its own, ``pmux-attach-*``, while
    the dialog waits: runtime/warm_attach.py), which is no window of the user's."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        argv = proc.info["cmdline"] or []
        if proc.info["status"] == psutil.STATUS_ZOMBIE or argv[-2:] != ["attach", job]:
            continue
        if Path(argv[0]).name == "tmux":  # a tmux server keeps the argv that started it
            continue
        try:
            env = proc.environ()
            socket = Path(env.get("TMUX", "").split(",")[0])  # the warm one's: a mkdtemp dir
            warm = socket.parent.name.startswith("pmux-attach-")
            if env.get("CLAUDE_CONFIG_DIR") == str(bg.env.config_dir) and not warm:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def _sid(hub: Hub, job: str) -> str | None:
    for session in hub.fleet.values():
        if session.background is not None and session.background.job == job and not session.ended:
            return session.session_id
    return None


def test_attach_opens_one_window_showing_the_dialog(
    hub_with_bg: tuple[BgClaude, Hub, PrivateTmux],
) -> None:
    bg, hub, tmux = hub_with_bg
    job = bg.start("run the command", "attached")
    wait_until(lambda: _sid(hub, job), 60, what=f"the hub knows job {job}")
    sid = _sid(hub, job)
    assert sid is not None
    wait_until(
        lambda: hub.fleet[sid].state is State.NEEDS_INPUT and hub.fleet[sid].running,
        60,
        what=lambda: f"needs-input: {hub.fleet[sid].state} ({hub.fleet[sid].source})",
    )

    before = bg.worker(job)
    assert before is not None
    window = hub.fleet[sid].attach()
    assert window.opened and window.socket == SOCKET
    assert window.target == "pmux-attach:0"  # no server ran: a detached session of ours
    assert window.attach_command == f"tmux -L {SOCKET} attach -t pmux-attach:0"
    assert tmux.windows() == [f"pmux-attach:0 {job}"]

    def dialog() -> str | None:
        shown = parse_screen(tmux.run("capture-pane", "-p", "-t", window.target))
        return shown.dialog.title if shown.dialog is not None else None

    wait_until(
        lambda: dialog() == "Bash command",
        30,
        what=lambda: tmux.run("capture-pane", "-p", "-t", window.target),
    )

    # a second call: the same window, to the front, none opened
    tmux.run("new-window", "-d", "-t", "pmux-attach:", "sleep 300")
    tmux.run("select-window", "-t", "pmux-attach:1")
    again = hub.fleet[sid].attach()
    assert (again.target, again.opened) == (window.target, False)
    assert len(tmux.windows()) == 2
    assert tmux.run("display-message", "-p", "-t", "pmux-attach", "#{window_index}").strip() == "0"

    # the CLI (no terminal here, or --tmux): the same window again, through the live hub
    base = ["--home", str(hub.home.root), "--claude-home", str(bg.env.config_dir)]
    assert cli.main([*base, "attach", "--tmux", sid[:12]]) == 0
    assert len(tmux.windows()) == 2
    assert cli.main([*base, "attach", "--tmux", "nosuchsession"]) == 2

    # the CLI in a terminal outside tmux: it becomes `claude attach <job>` right there
    here = [
        "env", "-u", "TMUX", "-u", "TMUX_PANE", str(Path(sys.executable).parent / "pmux-widget"),
        *base, "attach", sid[:12],
    ]  # fmt: skip
    tmux.run("new-window", "-t", "pmux-attach:", shlex.join(here))

    def in_place() -> str | None:
        shown = parse_screen(tmux.run("capture-pane", "-p", "-t", "pmux-attach:2"))
        return shown.dialog.title if shown.dialog is not None else None

    wait_until(
        lambda: in_place() == "Bash command",
        30,
        what=lambda: tmux.run("capture-pane", "-p", "-t", "pmux-attach:2"),
    )
    assert [w.split()[-1] for w in tmux.windows()].count(job) == 1  # it opened no window
    assert dialog() == "Bash command"  # two clients: the first still draws the session

    # the attach clients are no sessions, and the row is in no pane of theirs (the hub's
    # poll, reading this very tmux server, has run meanwhile)
    assert [x.session_id for x in hub.fleet.values() if not x.ended] == [sid]
    assert hub.fleet[sid].tmux is None and hub.fleet[sid].background is not None

    # a session that is no background one is refused, and opens nothing
    hub.call(lambda: hub.apply(s.UserPromptSubmit(at=now_ms(), session_id="plain-1", cwd="/")))
    wait_until(lambda: "plain-1" in hub.fleet, 10, what="the plain row")
    with pytest.raises(ActionError, match="not a Claude Code background session"):
        hub.fleet["plain-1"].attach()
    assert len(tmux.windows()) == 3

    # the attach was a client only: its server gone, the session still waits on its dialog
    assert len(_clients(bg, job)) == 2  # the window's, and the CLI's in place
    tmux.run("kill-server")
    wait_until(lambda: not _clients(bg, job), 10, what=lambda: f"left: {_clients(bg, job)}")
    found = bg.worker(job)
    assert found is not None and found[1].get("status") == "waiting"
    assert found[0] == before[0]  # the same worker
    assert hub.fleet[sid].state is State.NEEDS_INPUT
