"""JupyterLab terminals (issue 21) without the real CLI: the ``terminal`` field's rule, which
terminal holds a process (a real process tree), a terminal's emulated screen (when it can be
trusted), the keys' bytes, and a real Jupyter server publishing its terminals as they open
and close (created through its REST API).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests

from pmux_widget.core import signals as sig
from pmux_widget.core.model import Session, State, TerminalLocation
from pmux_widget.core.tracker import reduce
from pmux_widget.jupyter.terminal_screen import MAX_PENDING, Feeder, TerminalScreen
from pmux_widget.system import jupyter_terminals, keys
from pmux_widget.system.home import PmuxHome

from .helpers import wait_until
from .jupyter_ext import LabServer
from .lab_terminal import LabTerminal

T0 = 1_700_000_000_000


# ----------------------------------------------------------------------------- the rule


def _fleet(**fields: object) -> dict[str, Session]:
    session = Session(session_id="s1", state=State.BUSY, running=True, pid=4242, **fields)  # type: ignore[arg-type]
    return {"s1": session}


def test_in_terminal_sets_and_clears_the_terminal_of_that_pid_only() -> None:
    fleet = _fleet()
    step = reduce(
        fleet, sig.InTerminal(at=T0, session_id="s1", pid=4242, terminal=TerminalLocation("3")), T0
    )
    after = step.sessions["s1"]
    assert after.terminal == TerminalLocation("3")
    assert after.to_json()["terminal"] == {"name": "3"}
    assert after.state is State.BUSY and after.name.endswith("(terminal 3)")
    # a late answer about another process (the session was resumed elsewhere) moves nothing
    stale = reduce(step.sessions, sig.InTerminal(at=T0, session_id="s1", pid=1, terminal=None), T0)
    assert stale.changes == [] and stale.sessions["s1"].terminal == TerminalLocation("3")
    closed = reduce(
        step.sessions, sig.InTerminal(at=T0, session_id="s1", pid=4242, terminal=None), T0
    )
    assert (
        closed.sessions["s1"].terminal is None
        and closed.sessions["s1"].to_json()["terminal"] is None
    )
    # the store's record keeps it
    assert Session.from_record(after.to_record()).terminal == TerminalLocation("3")


# ------------------------------------------------------------------- which terminal holds a pid


@pytest.fixture
def tree() -> Iterator[tuple[int, int]]:
    """A shell with a child: (shell pid, child pid)."""
    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 120 & echo $!; wait"], stdout=subprocess.PIPE)
    assert shell.stdout is not None
    child = int(shell.stdout.readline())
    yield shell.pid, child
    os.kill(child, signal.SIGKILL)
    shell.kill()
    shell.wait()


def test_a_process_belongs_to_the_terminal_whose_shell_is_its_ancestor(
    tmp_path: Path, tree: tuple[int, int]
) -> None:
    shell, child = tree
    home = PmuxHome(tmp_path / "pmux")
    here = jupyter_terminals.ServerTerminals(os.getpid(), "http://x/", 1234, {"1": 1, "7": shell})
    jupyter_terminals.write_server_file(home, here)
    path = jupyter_terminals.terminals_dir(home) / f"{os.getpid()}.json"
    assert path.stat().st_mode & 0o777 == 0o600
    servers = jupyter_terminals.read_servers(home)
    assert servers == [here]
    found = jupyter_terminals.find_terminal(child, servers)
    assert found is not None and found[1] == "7" and found[0].hub_port == 1234
    assert jupyter_terminals.find_terminal(os.getpid(), servers) is None
    # a server that is gone: its file is ignored
    gone = subprocess.Popen(["true"])
    gone.wait()
    jupyter_terminals.write_server_file(
        home, jupyter_terminals.ServerTerminals(gone.pid, "", None, {"9": shell})
    )
    assert jupyter_terminals.read_servers(home) == [here]
    (jupyter_terminals.terminals_dir(home) / "junk.json").write_text("{not json")
    assert jupyter_terminals.read_servers(home) == [here]


# ------------------------------------------------------------------------ the emulated screen


@pytest.fixture
def feeder() -> Iterator[Feeder]:
    f = Feeder()
    yield f
    f.stop()


def _screen(feeder: Feeder, *, complete: bool, rows: int = 6, cols: int = 30) -> TerminalScreen:
    screen = TerminalScreen("5", rows, cols, complete=complete)
    screen.on_pending = feeder.pending
    return screen


def test_a_screen_seen_from_the_first_byte_reads_as_drawn(feeder: Feeder) -> None:
    screen = _screen(feeder, complete=True)
    screen.queue("hello   \r\n\x1b[31mworld\x1b[0m")
    assert screen.text().splitlines()[:2] == ["hello", "world"]
    screen.queue("\x1b[2J\x1b[Hagain")
    assert screen.text().splitlines()[0] == "again"
    screen.close()
    with pytest.raises(OSError, match="closed"):
        screen.text()


def test_a_screen_attached_late_is_trusted_only_after_a_full_repaint(feeder: Feeder) -> None:
    screen = _screen(feeder, complete=False)
    screen.queue("half a dialog\r\n")
    with pytest.raises(OSError, match="started before pmux-widget watched it"):
        screen.text(wait_s=0.2)
    # 2.1.332 repaints on a resize with an erase of the display
    screen.queue("\x1b[2J\x1b[H❯ 1. Yes")
    assert screen.text().splitlines()[0] == "❯ 1. Yes"
    # 2.1.197: the cursor home, then every row erased one by one
    late = _screen(feeder, complete=False, rows=3)
    late.queue("x")
    late.queue("\x1b[H" + "\x1b[2K\x1b[1B" * 2 + "\x1b[2K")
    late.queue("\x1b[Hdrawn")
    assert late.text().splitlines()[0] == "drawn"


def test_a_wait_for_output_ends_when_the_next_output_is_drawn(feeder: Feeder) -> None:
    """An action waiting on a terminal's screen is woken by its next output, not a poll."""
    screen = _screen(feeder, complete=True)
    screen.queue("first")
    screen.text()
    mark = screen.drawn()
    t0 = time.monotonic()
    screen.wait_drawn(mark, 0.05)  # nothing new: the timeout
    assert time.monotonic() - t0 >= 0.04
    threading.Timer(0.1, screen.queue, args=("\r\nsecond",)).start()
    t0 = time.monotonic()
    screen.wait_drawn(mark, 30)
    assert time.monotonic() - t0 < 10  # woken by the output, long before the timeout
    assert screen.drawn() > mark and "second" in screen.text()
    screen.close()
    t0 = time.monotonic()
    screen.wait_drawn(screen.drawn(), 30)
    assert time.monotonic() - t0 < 10  # a closed terminal wakes its waiters too


def test_output_faster_than_the_emulator_is_dropped_and_says_so(feeder: Feeder) -> None:
    screen = TerminalScreen("5", 6, 30, complete=True)  # nobody feeds it: it only queues
    screen.queue("x" * (MAX_PENDING + 1))
    assert not screen.trusted
    screen.on_pending = feeder.pending
    with pytest.raises(OSError, match="faster than pmux-widget could read it"):
        screen.text(wait_s=0.2)
    screen.queue("\x1b[2Jfresh")
    assert "fresh" in screen.text()


# ------------------------------------------------------------------------------- the keys


class _Pty:
    """A terminal target that records what reaches its PTY (the real one is a terminado PTY,
    driven in tests/real_claude/test_terminal_sessions.py)."""

    name = "1"

    def __init__(self) -> None:
        self.written: list[str] = []

    def screen_text(self) -> str:
        return "screen"

    def write(self, data: str) -> None:
        self.written.append(data)

    def drawn(self) -> int:
        return len(self.written)

    def wait_drawn(self, beyond: int, timeout: float) -> None:
        pass


def test_keys_reach_a_terminal_as_the_bytes_a_terminal_sends() -> None:
    pty = _Pty()
    keys.send_keys(pty, "Down", "Down", "Enter")
    keys.send_keys(pty, "Escape")
    keys.send_keys(pty, "2")
    keys.send_keys(pty, "make it so", literal=True)
    assert pty.written == ["\x1b[B", "\x1b[B", "\r", "\x1b", "2", "make it so"]
    assert keys.capture(pty) == "screen"
    with pytest.raises(ValueError, match="no terminal bytes"):
        keys.send_keys(pty, "C-c")


# --------------------------------------------------------------- a real server's terminals


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LabServer]:
    lab = LabServer(tmp_path).start()
    yield lab
    lab.stop()


def _published(server: LabServer) -> dict[str, int]:
    servers = [s for s in jupyter_terminals.read_servers(server.pmux) if s.pid == server.pid]
    return dict(servers[0].shells) if servers else {}


def test_the_server_publishes_its_terminals_as_they_open_and_close(server: LabServer) -> None:
    first = LabTerminal(server)
    second = LabTerminal(server)
    try:
        wait_until(
            lambda: set(_published(server)) == {first.name, second.name},
            20,
            what=lambda: f"both terminals published: {_published(server)}",
        )
        shells = _published(server)
        # each shell is the terminal's own: a process started in it is found there
        first.type("sleep 300 & echo started:$!\r")
        text = first.wait_for(r"started:(\d+)", 20)
        child = int(text.split("started:")[-1].split()[0])
        servers = jupyter_terminals.read_servers(server.pmux)
        found = jupyter_terminals.find_terminal(child, servers)
        assert found is not None and found[1] == first.name
        assert found[0].hub_port == server.server_hubs()[0]["port"]
        assert shells[first.name] != shells[second.name]
    finally:
        second.close()
    wait_until(
        lambda: set(_published(server)) == {first.name},
        20,
        what=lambda: f"the closed terminal gone: {_published(server)}",
    )
    first.close()
    pid = server.pid
    assert (jupyter_terminals.terminals_dir(server.pmux) / f"{pid}.json").exists()
    server.stop()  # a clean stop takes its file along
    assert not (jupyter_terminals.terminals_dir(server.pmux) / f"{pid}.json").exists()


def test_a_server_without_terminals_publishes_none(tmp_path: Path) -> None:
    lab = LabServer(tmp_path, args=("--ServerApp.terminals_enabled=False",)).start()
    try:
        assert lab.post("api/terminals", {}).status_code == 404
        # it publishes that it has none (with its hub, which kernels may ask)
        servers = wait_until(
            lambda: [
                s
                for s in jupyter_terminals.read_servers(lab.pmux)
                if s.pid == lab.pid and s.hub_port is not None
            ],
            20,
            what="the server's (empty) terminals published",
        )
        assert servers[0].shells == {}
    finally:
        lab.stop()


# ------------------------------------------------------------------- POST pmux/api/sessions/new


def test_new_session_route_checks_its_body_and_says_when_terminals_are_off(
    tmp_path: Path,
) -> None:
    lab = LabServer(tmp_path, args=("--ServerApp.terminals_enabled=False",)).start()
    try:
        route = "pmux/api/sessions/new"
        folder = str(tmp_path)
        for body, why in (
            ({"where": "terminal"}, "cwd"),
            ({"cwd": str(tmp_path / "nowhere"), "where": "terminal"}, "no folder"),
            ({"cwd": folder, "where": "screen"}, "where"),
            ({"cwd": folder, "where": "tmux", "permission_mode": "yolo"}, "permission_mode"),
            ({"cwd": folder, "where": "tmux", "prompt": 3}, "prompt"),
            ({"cwd": folder, "where": "background"}, "needs a prompt"),  # claude --bg
            ({"cwd": folder, "where": "background", "prompt": "x", "name": 3}, "name"),
            ({"cwd": folder, "where": "tmux", "agent": "gemini"}, '"agent" must be one of'),
            ({"cwd": folder, "where": "background", "prompt": "x", "agent": "codex"}, "Codex"),
            (
                {"cwd": folder, "where": "tmux", "agent": "codex", "permission_mode": "plan"},
                "Codex",
            ),
            ([1], "body must be"),
        ):
            answer = lab.post(route, body)
            assert answer.status_code == 400 and why in answer.json()["error"], (body, answer.text)
        assert lab.post(route, b"{nope").status_code == 400
        answer = lab.post(route, {"cwd": folder, "where": "terminal"})
        assert answer.status_code == 409, answer.text
        assert "terminals_enabled" in answer.json()["error"]
        assert lab.get("api/terminals").status_code == 404  # and none was made
        told = lab.get("pmux/api/terminals").json()
        assert told["available"] is False and "terminals_enabled" in told["reason"]
        assert told["terminals"] == []
        # no credentials: 403 (it types into a terminal it opens)
        assert requests.post(lab.url(route), json={}, timeout=15).status_code == 403
        # Attach in a terminal (issue 26): a session id, a known one, a background one
        attach = "pmux/api/sessions/attach"
        assert lab.post(attach, {}).status_code == 400
        assert lab.post(attach, {"session_id": "nope"}).status_code == 404
        assert requests.post(lab.url(attach), json={}, timeout=15).status_code == 403
    finally:
        lab.stop()


def _argvs(pid: int) -> list[list[str]]:
    """The tails of the command lines below ``pid`` (after ``sh -c <script>``)."""
    found = []
    for child in psutil.Process(pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            found.append(child.cmdline()[3:])
    return found


def test_new_session_route_opens_a_terminal_or_a_tmux_window(tmp_path: Path) -> None:
    socket = f"pmux-new-{os.getpid()}"
    # a stand-in for claude that shows its arguments and waits (the real CLI:
    # tests/real_claude/test_terminal_new_session.py)
    fake = 'sh -c "echo fake-claude $*; sleep 120" fake'
    lab = LabServer(
        tmp_path, env={"PMUX_WIDGET_CLAUDE": fake, "PMUX_WIDGET_TMUX_SOCKET": socket}
    ).start()
    try:
        route = "pmux/api/sessions/new"
        body = {"cwd": str(tmp_path), "prompt": "first words", "permission_mode": "plan"}
        answer = lab.post(route, {**body, "where": "terminal"})
        assert answer.status_code == 201, answer.text
        name = answer.json()["terminal"]
        assert name in [t["name"] for t in lab.get("api/terminals").json()]
        told = lab.get("pmux/api/terminals").json()
        assert told == {"available": True, "reason": None, "terminals": [name]}
        shell: int = wait_until(
            lambda: _published(lab).get(name, 0), 20, what="the terminal published"
        )
        wait_until(
            lambda: ["fake", "--permission-mode", "plan", "first words"] in _argvs(shell),
            20,
            what=lambda: f"the command in the new terminal's shell: {_argvs(shell)}",
        )
        answer = lab.post(route, {**body, "where": "tmux"})
        assert answer.status_code == 201, answer.text
        pane = answer.json()["tmux"]
        assert pane.startswith("%")

        def panes() -> str:
            return subprocess.run(
                ["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_id} #{pane_current_path}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout

        # (tmux learns a new pane's folder once its process runs)
        wait_until(lambda: f"{pane} {tmp_path}" in panes(), 20, what=lambda: panes())
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
        lab.stop()


def test_the_agents_tutorial_is_a_valid_notebook_that_starts_sessions() -> None:
    import nbformat

    path = Path(__file__).parent.parent / "notebooks" / "agents.ipynb"
    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    nbformat.validate(notebook)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "pmux_widget.new_session(" in code and "session.ask(" in code
    assert 'where="background"' in code and "session.remove()" in code  # issue 26
    # its flow, with the real CLI: tests/real_claude/test_terminal_new_session.py


# ------------------------------------------------- a session's terminal, kept current on close

#: A stand-in for Claude Code (the real CLI: tests/real_claude/test_terminal_sessions.py): a
#: script named ``claude`` (the hub knows Claude's process by that name, above the hooks it
#: fires), firing SessionStart through the installed hook command, then waiting.
FAKE_CLAUDE = """#!/bin/sh
printf '{"session_id":"%s","hook_event_name":"SessionStart","source":"startup","cwd":"%s"}\\n' \\
  "$2" "$PWD" | sh -c "$(cat "$1")"
echo "fake claude $2 ready"
exec sleep 600
"""


def _terminals_seen(lab: LabServer, session: Any) -> str:
    """What a failure to clear a terminal needs: the server's own terminals, the published
    file, and whether the session's process still runs (each step of the path)."""
    listed = lab.get("api/terminals").json()
    files = {p.name: p.read_text() for p in (lab.pmux.root / "terminals").glob("*.json")}
    pid = session.pid if session is not None else None
    alive = pid is not None and psutil.pid_exists(pid)
    return f"server's terminals {listed}; published {files}; pid {pid} alive: {alive}"


def test_a_sessions_terminal_is_set_at_once_and_cleared_when_it_closes(tmp_path: Path) -> None:
    from pmux_widget.runtime.assemble import make_hub

    from .jupyter_ext import Hooks

    lab = LabServer(tmp_path).start()
    hooks = Hooks(lab)
    kernel_hub = make_hub(home=lab.pmux.root, claude_home=lab.claude).start()
    try:
        command = tmp_path / "session-start.cmd"
        command.write_text(hooks.commands["SessionStart"])
        script = tmp_path / "bin" / "claude"
        script.parent.mkdir()
        script.write_text(FAKE_CLAUDE)
        script.chmod(0o755)
        term = LabTerminal(lab)
        sid = "5e55a0b1-0000-4000-8000-00000000f00d"
        term.type(f"PMUX_WIDGET_HOME={lab.pmux.root} {script} {command} {sid}\r")
        term.wait_for(f"fake claude {sid} ready", 20)

        def shown(where: str) -> Any:
            if where == "server":
                rows = lab.get("pmux/api/sessions?ended=1").json()["sessions"]
                return next((r["terminal"] for r in rows if r["session_id"] == sid), "none")
            session = kernel_hub.fleet.get(sid)
            return session.to_json()["terminal"] if session is not None else "none"

        def everywhere(value: Any) -> bool:
            return all(shown(where) == value for where in ("server", "kernel"))

        wait_until(
            lambda: everywhere({"name": term.name}),
            20,
            what=lambda: f"the terminal in both hubs: {shown('server')}, {shown('kernel')}",
        )
        term.close()  # the terminal goes, and its processes with it
        # 20 s ran out in a sharded fresh-clone run (both hubs still showed the terminal):
        # not root-caused; the deadline is a loaded machine's, the failure names both hubs
        wait_until(
            lambda: everywhere(None),
            60,
            what=lambda: (
                f"the terminal cleared in both: {shown('server')}, {shown('kernel')}; "
                f"{_terminals_seen(lab, kernel_hub.fleet.get(sid))}"
            ),
        )
    finally:
        kernel_hub.stop()
        lab.stop()


def test_the_sdk_agents_notebook_is_valid_and_uses_the_handler() -> None:
    import nbformat

    path = Path(__file__).parent.parent / "notebooks" / "sdk_agents.ipynb"
    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    nbformat.validate(notebook)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "pmux_widget.agent_options(" in code and "offline_sdk()" in code
    assert '.answer("Amber")' in code
    # run for real, approved from another hub as the panel does: tests/test_demo.py


#: A program that repaints its whole screen on a resize to a width it has not drawn (as the
#: CLIs do), deaf to its first ``missed`` SIGWINCHs (Claude Code 2.1.197 handled none it got
#: while stopped, once in about ten runs, and in a CI run).
_REPAINTER = """
import os, signal, sys, time
missed, label = int(sys.argv[1]), sys.argv[2]
drawn, got = os.get_terminal_size().columns, 0
def draw(cols):
    sys.stdout.write(f"\\x1b[H\\x1b[2J{label} at {cols}\\r\\n")
    sys.stdout.flush()
    with open(label + ".log", "a") as log:
        log.write(f"{cols}\\n")
def on_winch(*_):
    global drawn, got
    got += 1
    cols = os.get_terminal_size().columns
    if got > missed and cols != drawn:
        drawn = cols
        draw(cols)
signal.signal(signal.SIGWINCH, on_winch)
draw(drawn)
while True:
    time.sleep(1)
"""


@pytest.mark.parametrize("missed", [0, 1, 2])
def test_a_screen_not_known_is_repainted_by_widths_the_program_never_drew(
    server: LabServer, tmp_path: Path, missed: int
) -> None:
    """The repaint asks for one column narrower, then narrower still while nothing is
    redrawn, and the width back once it is: a program that missed a resize (or reads it late)
    still repaints, and no key is typed."""
    program = tmp_path / "repainter.py"
    program.write_text(_REPAINTER)
    term = LabTerminal(server, cwd=tmp_path)
    try:
        term.type(f"exec {sys.executable} {program} {missed} painted-{missed}\r")
        term.wait_for(f"painted-{missed} at 160", 30)
        route = f"pmux/api/test/screen?terminal={term.name}"
        forget = f"pmux/api/test/forget-screen?terminal={term.name}"
        # (the extension finds a new terminal by a 0.5 s poll: 404 until then; ci18)
        wait_until(lambda: server.post(forget, {}).status_code == 202, 20, what="the terminal")
        answer = server.get(route)
        assert answer.status_code == 200, answer.text
        assert answer.json()["text"].startswith(f"painted-{missed} at ")
        term.wait_for(f"painted-{missed} at 160", 10)  # its width came back
        drawn = tmp_path / f"painted-{missed}.log"
        # its widths: the first it did not miss, then its own again
        assert drawn.read_text().split() == ["160", str(160 - 1 - missed), "160"]
        assert server.get(route).json()["text"].startswith(f"painted-{missed} at 160")
    finally:
        term.close()
