"""The hook script, run exactly as Claude Code runs it, against real local HTTP receivers.

Each test installs the hooks into a temp ``settings.json``, reads OUR command back from it and
runs ``/bin/sh -c <command>`` with the payload on stdin (compact JSON + "\\n", like Claude).
Receivers are real HTTP servers on 127.0.0.1 (threads) that record what they got; a "hung" hub
is a listening socket that never answers. Timing bounds are generous on purpose (loaded 2-core
CI); the real numbers are measured separately (see the hooks module docstring).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pmux_widget import hooks
from pmux_widget.core.signals import HOOK_EVENTS
from pmux_widget.system.home import PmuxHome

SID = "5f0c3a2e-8d1b-4c3e-9a57-2b6f1e0d4c11"
TRANSCRIPT = f"/home/dev/.claude/projects/-home-dev-projects-acme-api/{SID}.jsonl"


def payload_for(event: str, **extra: Any) -> bytes:
    """A payload shaped like Claude's: common fields, hook_event_name, then specific fields."""
    data: dict[str, Any] = {
        "session_id": SID,
        "transcript_path": TRANSCRIPT,
        "cwd": "/home/dev/projects/acme-api",
    }
    if event in ("PreToolUse", "PostToolUse", "PermissionRequest", "UserPromptSubmit", "Stop"):
        data["permission_mode"] = "default"
    data["hook_event_name"] = event
    specific: dict[str, dict[str, Any]] = {
        "SessionStart": {"source": "startup", "model": "claude-opus-4-6"},
        "UserPromptSubmit": {"prompt": "fix the failing test in tests/test_api.py, please"},
        "PreToolUse": {
            "tool_name": "Bash",
            "tool_input": {"command": "pytest -q", "description": "Run tests"},
            "tool_use_id": "toolu_01",
        },
        "PermissionRequest": {"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}},
        "Notification": {
            "message": "Claude needs your permission",
            "notification_type": "permission_prompt",
        },
        "PostToolUse": {
            "tool_name": "Bash",
            "tool_input": {"command": "pytest -q"},
            "tool_response": {"stdout": "3 passed\n", "stderr": "", "interrupted": False},
            "tool_use_id": "toolu_01",
        },
        "PostToolUseFailure": {
            "tool_name": "Bash",
            "tool_input": {"command": "false"},
            "tool_use_id": "toolu_02",
            "error": "Exit code 1",
            "is_interrupt": False,
        },
        "Stop": {"stop_hook_active": False, "last_assistant_message": "Done: all tests pass."},
        "StopFailure": {"error": "rate_limit", "error_details": "429 Too Many Requests"},
        "PreCompact": {"trigger": "auto", "custom_instructions": None},
        "PostCompact": {"trigger": "auto", "compact_summary": "Summary…"},
        "SubagentStart": {"agent_id": "a1b2c3", "agent_type": "Explore"},
        "SubagentStop": {
            "stop_hook_active": False,
            "agent_id": "a1b2c3",
            "agent_transcript_path": f"{TRANSCRIPT[:-6]}/subagents/agent-a1b2c3.jsonl",
            "agent_type": "Explore",
        },
        "SessionEnd": {"reason": "prompt_input_exit"},
    }
    data.update(specific.get(event, {}))
    data.update(extra)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


SMALL = payload_for("PreToolUse")
UNICODE = payload_for(
    "UserPromptSubmit",
    prompt="héllo — ✓ 日本語 🎉 \"quotes\" \\ back\\slash\n\ttab \u2028 '$(rm -rf /)' `x` %s %n",
)
# A Write tool's content: MBs, with every escape JSON has.
LARGE = payload_for(
    "PreToolUse",
    tool_name="Write",
    tool_input={
        "file_path": "/home/dev/projects/acme-api/big.txt",
        "content": ('line ✓ with "quotes", \\ and\ttabs }{ ][ \'\n' * 120_000),
    },
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the real ~/.claude or ~/.pmux_widget (every home here is explicit anyway)."""
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(tmp_path / "unused-pmux-home"))


# --------------------------------------------------------------------------- receivers


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A real HTTP server on 127.0.0.1 answering ``status`` to everything, recording requests."""

    status: int = 204
    requests: list[Request] = field(default_factory=list)
    port: int = 0

    def start(self) -> Receiver:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                receiver.requests.append(
                    Request(self.command, self.path, dict(self.headers.items()), body)
                )
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_GET = _handle

            def log_message(self, *args: object) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            request_queue_size = 128  # like Tornado; http.server's 5 drops concurrent SYNs

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def receivers() -> Iterator[Callable[[int], Receiver]]:
    started: list[Receiver] = []

    def make(status: int = 204) -> Receiver:
        receiver = Receiver(status=status).start()
        started.append(receiver)
        return receiver

    yield make
    for receiver in started:
        receiver.stop()


@pytest.fixture
def hung_port() -> Iterator[int]:
    """A hub that accepts TCP connections (kernel backlog) and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    yield sock.getsockname()[1]
    sock.close()


# --------------------------------------------------------------------------- environment


@dataclass
class Setup:
    home: PmuxHome
    command: str
    env: dict[str, str]
    tmp: Path

    def hub(self, port: int, pid: int | None = None, name: str | None = None) -> Path:
        """Write a runtime file for a hub on ``port`` (pid: this test process by default)."""
        data: dict[str, Any] = {"port": port, "pid": os.getpid() if pid is None else pid}
        path = self.home.runtime_dir / f"{name or f'hub-{port}'}.json"
        path.write_text(json.dumps(data))
        return path


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    """A home (with a space and a quote in its path), hooks installed into a temp settings.json."""
    home = PmuxHome(tmp_path / "pmux home's")
    settings_file = tmp_path / "claude" / "settings.json"
    hooks.install(settings_file, home, create_config_dir=True, tool_hooks=True)  # every event
    doc = json.loads(settings_file.read_text())
    commands = {
        hook["command"]
        for event in HOOK_EVENTS
        for group in doc["hooks"][event]
        for hook in group["hooks"]
    }
    assert len(commands) == 1
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "user-home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "PMUX_WIDGET_HOME": str(tmp_path / "elsewhere"),  # ignored: the script knows its home
        "TMUX_PANE": "%7",
        "CLAUDECODE": "1",
        "CLAUDE_CODE_SESSION_ID": SID,
        # A proxy that would swallow everything: the script must not use it.
        "http_proxy": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "all_proxy": "http://127.0.0.1:9",
    }
    return Setup(home, commands.pop(), env, tmp_path)


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    pid: int
    started_ms: int
    ended_ms: int


def run_hook(
    setup: Setup,
    payload: bytes,
    *,
    argv: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """Run the hook like Claude: ``/bin/sh -c <command>``, payload on stdin, then wait."""
    started_ms = time.time_ns() // 1_000_000
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv or ["/bin/sh", "-c", setup.command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env or setup.env,
        cwd=setup.tmp,
    )
    stdout, stderr = proc.communicate(payload, timeout=30)
    seconds = time.perf_counter() - t0
    ended_ms = time.time_ns() // 1_000_000
    return Run(proc.returncode, stdout, stderr, seconds, proc.pid, started_ms, ended_ms)


def assert_silent_success(run: Run) -> None:
    assert run.returncode == 0
    assert run.stdout == b""
    assert run.stderr == b""


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.005)


def no_temp_files(home: PmuxHome) -> bool:
    return not [name for name in os.listdir(home.spool_dir) if name.startswith(".")]


def assert_headers(setup: Setup, request: Request, run: Run, pane: str = "%7") -> None:
    assert request.method == "POST" and request.path == "/api/hook"
    headers = {key.lower(): value for key, value in request.headers.items()}
    assert headers["content-type"] == "application/json"
    assert headers["x-pmux-token"] == setup.home.token()
    assert headers["x-pmux-pane"] == pane
    # The command execs the script, so the script IS the `sh -c` process and its parent is
    # whoever ran the hook (Claude; here this test). A shell that forks instead would make
    # it the `sh -c` pid: both are fine for the hub, which walks up to Claude.
    assert int(headers["x-pmux-ppid"]) in (os.getpid(), run.pid)
    assert run.started_ms - 1 <= int(headers["x-pmux-sent"]) <= run.ended_ms + 1
    assert int(headers["x-pmux-hook"]) == run.pid  # with X-Pmux-Sent: the hook, once
    assert "expect" not in headers
    assert int(headers["content-length"]) == len(request.body)


# --------------------------------------------------------------------------- delivery


@pytest.mark.parametrize("payload", [SMALL, UNICODE, LARGE], ids=["small", "unicode", "large"])
def test_delivered_unchanged(
    setup: Setup, receivers: Callable[..., Receiver], payload: bytes
) -> None:
    hub = receivers()
    setup.hub(hub.port)
    run = run_hook(setup, payload)
    assert_silent_success(run)
    assert len(hub.requests) == 1
    request = hub.requests[0]
    assert request.body == payload
    assert_headers(setup, request, run)
    assert hooks.read_spool(setup.home) == []
    wait_until(lambda: no_temp_files(setup.home))


def test_every_event(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    hub = receivers()
    setup.hub(hub.port)
    for event in HOOK_EVENTS:
        payload = payload_for(event)
        run = run_hook(setup, payload)
        assert_silent_success(run)
        assert hub.requests[-1].body == payload
        assert json.loads(hub.requests[-1].body)["hook_event_name"] == event
    assert len(hub.requests) == len(HOOK_EVENTS)
    assert hooks.read_spool(setup.home) == []


@pytest.mark.parametrize("payload", [SMALL, LARGE], ids=["small", "large"])
def test_two_hubs_both_get_it(
    setup: Setup, receivers: Callable[..., Receiver], payload: bytes
) -> None:
    first, second = receivers(), receivers()
    setup.hub(first.port)
    setup.hub(second.port)
    run = run_hook(setup, payload)
    assert_silent_success(run)
    for hub in (first, second):
        assert [r.body for r in hub.requests] == [payload]
        assert_headers(setup, hub.requests[0], run)
    assert hooks.read_spool(setup.home) == []
    wait_until(lambda: no_temp_files(setup.home))


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_stale_runtime_file_skipped(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    live, stale = receivers(), receivers()
    setup.hub(live.port)
    setup.hub(stale.port, pid=_dead_pid())
    assert_silent_success(run_hook(setup, SMALL))
    assert len(live.requests) == 1 and stale.requests == []
    assert hooks.read_spool(setup.home) == []


@pytest.mark.parametrize(
    "text",
    [
        '{{"pid":{pid},"port":{port}}}',
        '{{\n  "hub_id": "a-1",\n  "version": "0.1",\n  "port": {port},\n  "pid": {pid},\n'
        '  "started": 1782810845123\n}}\n',
        '{{\t"pid" :\t{pid} ,\r\n"port"\t:  {port}}}',
        '{{"port": {port}}}',  # no pid: assumed alive
    ],
    ids=["compact", "pretty-extra-keys", "odd-whitespace", "no-pid"],
)
def test_runtime_file_shapes(setup: Setup, receivers: Callable[..., Receiver], text: str) -> None:
    hub = receivers()
    (setup.home.runtime_dir / "h.json").write_text(text.format(pid=os.getpid(), port=hub.port))
    assert_silent_success(run_hook(setup, SMALL))
    assert [r.body for r in hub.requests] == [SMALL]


def test_one_accepting_hub_is_enough(
    setup: Setup, receivers: Callable[..., Receiver], hung_port: int
) -> None:
    good, bad = receivers(), receivers(500)
    setup.hub(good.port)
    setup.hub(bad.port)
    setup.hub(hung_port)
    run = run_hook(setup, SMALL)
    assert_silent_success(run)
    assert run.seconds < 3
    assert len(good.requests) == 1 and len(bad.requests) == 1
    assert hooks.read_spool(setup.home) == []


def test_ignores_curlrc(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    hub = receivers()
    setup.hub(hub.port)
    home_dir = Path(setup.env["HOME"])
    home_dir.mkdir(exist_ok=True)
    (home_dir / ".curlrc").write_text('proxy = "http://127.0.0.1:9"\nverbose\ninclude\n')
    assert_silent_success(run_hook(setup, SMALL))
    assert len(hub.requests) == 1


def test_pane_header(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    hub = receivers()
    setup.hub(hub.port)
    env = {k: v for k, v in setup.env.items() if k != "TMUX_PANE"}
    run = run_hook(setup, SMALL, env=env)
    assert_silent_success(run)
    assert_headers(setup, hub.requests[-1], run, pane="")
    # Anything but a plain pane id could inject headers or break the spool's JSON: dropped.
    run = run_hook(setup, SMALL, env={**setup.env, "TMUX_PANE": '%1\r\nX-Evil: 1"'})
    assert_silent_success(run)
    assert_headers(setup, hub.requests[-1], run, pane="")


def test_agent_header(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    """Codex's entries name their agent (``hook_command(home, "codex")``): the hub gets it
    as ``X-Pmux-Agent``; Claude's name none (an empty header); anything but a-z is dropped."""
    hub = receivers()
    setup.hub(hub.port)
    codex = hooks.hook_command(setup.home, "codex")
    odd = codex.replace(" codex;", " codex1;")
    for command, sent in ((codex, "codex"), (setup.command, ""), (odd, "")):
        run = run_hook(setup, SMALL, argv=["/bin/sh", "-c", command])
        assert_silent_success(run)
        headers = {k.lower(): v for k, v in hub.requests[-1].headers.items()}
        assert headers.get("x-pmux-agent", "") == sent
        assert_headers(setup, hub.requests[-1], run)
    run = run_hook(setup, SMALL, argv=["/bin/sh", "-c", codex.replace(" codex;", " 'co\"x';")])
    assert_silent_success(run)
    assert hub.requests[-1].headers.get("X-Pmux-Agent", "") == ""


def test_agent_is_spooled(setup: Setup) -> None:
    run = run_hook(setup, UNICODE, argv=["/bin/sh", "-c", hooks.hook_command(setup.home, "codex")])
    assert_silent_success(run)
    assert_spooled(setup, run, UNICODE)
    [entry] = hooks.read_spool(setup.home)
    assert entry.agent == "codex"
    path = hooks.write_spool_entry(
        setup.home, UNICODE, sent=entry.sent, pane="%7", ppid=entry.ppid, agent="codex"
    )
    assert path.read_bytes() == entry.path.read_bytes()


# --------------------------------------------------------------------------- spooling


def assert_spooled(setup: Setup, run: Run, payload: bytes, pane: str = "%7") -> None:
    entries = hooks.read_spool(setup.home)
    assert len(entries) == 1
    entry = entries[0]
    assert entry.error is None
    assert entry.payload_bytes == payload[:-1]  # byte for byte, minus the final newline
    assert run.started_ms - 1 <= entry.sent <= run.ended_ms + 1
    assert entry.pane == pane
    assert entry.ppid in (os.getpid(), run.pid)
    assert re.fullmatch(rf"{entry.sent:015d}-\d+\.hook", entry.path.name)
    assert entry.path.read_bytes().count(b"\n") == 1
    assert entry.path.stat().st_mode & 0o077 == 0
    wait_until(lambda: no_temp_files(setup.home))


@pytest.mark.parametrize("payload", [SMALL, UNICODE, LARGE], ids=["small", "unicode", "large"])
def test_no_hub_spools(setup: Setup, payload: bytes) -> None:
    run = run_hook(setup, payload)
    assert_silent_success(run)
    assert run.seconds < 1.0  # budget 50 ms; generous bound for a loaded machine
    assert_spooled(setup, run, payload)


def test_hung_hub_spools(setup: Setup, hung_port: int) -> None:
    setup.hub(hung_port)
    run = run_hook(setup, SMALL)
    assert_silent_success(run)
    assert run.seconds < 3.0  # budget 1.2 s (curl --max-time 1)
    assert_spooled(setup, run, SMALL)


def _curl_of(group: int) -> bool:
    """Whether a curl of process group ``group`` runs."""
    for pid in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (OSError, ValueError):
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if "(curl)" in stat and int(fields[2]) == group:
            return True
    return False


def _start_detached(setup: Setup, payload: bytes) -> subprocess.Popen[bytes]:
    """The hook run as Claude and Codex run async hooks: in a process group of its own."""
    proc = subprocess.Popen(
        ["/bin/sh", "-c", setup.command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=setup.env,
        cwd=setup.tmp,
        start_new_session=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(payload)
    proc.stdin.close()
    return proc


def test_sigterm_to_its_process_group_while_posting_still_spools(
    setup: Setup, hung_port: int
) -> None:
    """Claude Code 2.1.197 SIGTERMs the async hooks still running when it exits (their own
    process group: hooks are spawned detached): the event must still be spooled."""
    setup.hub(hung_port)
    started_ms = time.time_ns() // 1_000_000
    proc = _start_detached(setup, SMALL)
    wait_until(lambda: _curl_of(proc.pid))
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(10) == 0
    run = Run(0, proc.stdout.read(), proc.stderr.read(), 0.0, proc.pid, started_ms, 0)
    run.ended_ms = time.time_ns() // 1_000_000
    assert_silent_success(run)
    assert_spooled(setup, run, SMALL)


@pytest.mark.parametrize("hubs", [1, 2], ids=["one-hub", "two-hubs"])
def test_a_script_killed_while_posting_leaves_what_a_hub_adopts(
    setup: Setup, hung_port: int, hubs: int
) -> None:
    """Codex's `exec` SIGKILLs the async hooks still running when it exits: no trap runs, so
    the payload and its envelope stay as ``.in-<pid>`` and ``.in-<pid>.t``; adopted, they are
    the spool entry the script would have written, under the script's own name."""
    for n in range(hubs):
        setup.hub(hung_port, name=f"hung-{n}")
    started_ms = time.time_ns() // 1_000_000
    proc = _start_detached(setup, UNICODE)
    envelope = setup.home.spool_dir / f".in-{proc.pid}.t"

    def posting() -> bool:  # one hub: curl gets its options once the time is in the envelope
        with contextlib.suppress(OSError):
            return _curl_of(proc.pid) and len(envelope.read_text().splitlines()) == 2
        return False

    wait_until(posting)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    ended_ms = time.time_ns() // 1_000_000
    spool = setup.home.spool_dir
    assert sorted(os.listdir(spool)) == [f".in-{proc.pid}", f".in-{proc.pid}.t"]
    assert hooks.read_spool(setup.home) == []
    assert hooks.adopt_orphans(setup.home) == 0  # too young: its script might still run
    assert hooks.adopt_orphans(setup.home, min_age_s=0) == 1
    run = Run(0, b"", b"", 0.0, proc.pid, started_ms, ended_ms)
    assert_spooled(setup, run, UNICODE)  # the one file, no temp files
    entry = hooks.read_spool(setup.home)[0]
    assert entry.hook_id == (proc.pid, entry.sent)


def _orphan(home: PmuxHome, pid: int, envelope: str | None, payload: bytes, age: float) -> None:
    home.spool_dir.mkdir(parents=True, exist_ok=True)
    paths = [home.spool_dir / f".in-{pid}"]
    paths[0].write_bytes(payload)
    if envelope is not None:
        paths.append(home.spool_dir / f".in-{pid}.t")
        paths[1].write_text(envelope + "\n")
    for path in paths:
        os.utime(path, (time.time() - age, time.time() - age))


def test_orphans_adopted_once_and_only_whole(tmp_path: Path) -> None:
    home = PmuxHome(tmp_path / "home")
    stop = b'{"session_id":"s","hook_event_name":"Stop"}\n'
    _orphan(home, 11, "1700000000011 42 p=%3 a=codex", stop, age=60)
    _orphan(home, 12, "1700000000012 42 p= a=", stop, age=60)  # no pane, Claude's
    _orphan(home, 13, "1700000000013", stop, age=60)  # an older script's envelope
    _orphan(home, 14, None, b'{"session_id":"s","hook_ev', age=60)  # cut short: no envelope
    _orphan(home, 15, "1700000000015 42 p=%3 a=codex", stop, age=1)  # may still run
    _orphan(home, 16, "1700000000016 42 p=%3 a=", stop, age=60)  # a hub got it
    _orphan(home, 17, "1700000000017 42 p=%3 a=", stop, age=60)  # spooled before the kill
    hooks.write_spool_entry(home, stop, sent=1700000000017, pane="%3", ppid=42, hook_pid=17)
    _orphan(home, 18, "garbage p=%3", stop, age=60)  # not an envelope: dropped
    _orphan(home, 19, "0 42 p= a=codex", stop, age=60)  # killed before it read the clock
    _orphan(home, 20, "1700000000020 42 p= a=", b'{"session_id":"s","hook_ev', age=60)  # cut
    _orphan(home, 21, "0 42 p=%4 a=codex\n1700000000021", stop, age=60)  # time appended
    read_clock_at = int((home.spool_dir / ".in-19").stat().st_mtime * 1000)
    got = hooks.adopt_orphans(home, delivered=lambda hook_id: hook_id == (16, 1700000000016))
    assert got == 5
    entries = hooks.read_spool(home)
    assert [(e.hook_pid, e.sent, e.pane, e.ppid, e.agent) for e in entries] == [
        (11, 1700000000011, "%3", 42, "codex"),
        (12, 1700000000012, "", 42, ""),
        (13, 1700000000013, "", 0, ""),
        (17, 1700000000017, "%3", 42, ""),
        (21, 1700000000021, "%4", 42, "codex"),
        (19, read_clock_at, "", 42, "codex"),  # its payload file's time
    ]
    assert {e.payload_bytes for e in entries} == {stop[:-1]}
    assert sorted(os.listdir(home.spool_dir)) == sorted(
        [e.path.name for e in entries] + [".in-14", ".in-15", ".in-15.t"]
    )
    assert hooks.adopt_orphans(home) == 0  # once


@pytest.mark.parametrize(
    ("status", "payload"),
    [(401, SMALL), (403, SMALL), (413, LARGE), (500, UNICODE), (503, SMALL)],
)
def test_refusing_hub_spools(
    setup: Setup, receivers: Callable[..., Receiver], status: int, payload: bytes
) -> None:
    hub = receivers(status)
    setup.hub(hub.port)
    run = run_hook(setup, payload)
    assert_silent_success(run)
    assert [r.body for r in hub.requests] == [payload]
    assert_spooled(setup, run, payload)


def test_refusing_hubs_spool_once(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    first, second = receivers(401), receivers(500)
    setup.hub(first.port)
    setup.hub(second.port)
    run = run_hook(setup, SMALL)
    assert_silent_success(run)
    assert len(first.requests) == 1 and len(second.requests) == 1
    assert_spooled(setup, run, SMALL)


def test_refused_connection_and_garbage_runtime_files_spool(setup: Setup) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        free_port = sock.getsockname()[1]
    setup.hub(free_port)
    (setup.home.runtime_dir / "garbage.json").write_bytes(b"\x00\xffnot json")
    (setup.home.runtime_dir / "noport.json").write_text('{"pid": 1}')
    run = run_hook(setup, SMALL)
    assert_silent_success(run)
    assert_spooled(setup, run, SMALL)


def test_missing_token_spools_without_posting(
    setup: Setup, receivers: Callable[..., Receiver]
) -> None:
    hub = receivers()
    setup.hub(hub.port)
    setup.home.token_file.unlink()
    run = run_hook(setup, SMALL)
    assert_silent_success(run)
    assert hub.requests == []
    assert_spooled(setup, run, SMALL)


def test_missing_curl_spools(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    hub = receivers()
    setup.hub(hub.port)
    bin_dir = setup.tmp / "bin-without-curl"
    bin_dir.mkdir()
    for tool in ("cat", "date", "sed", "mv", "rm", "mkdir"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    run = run_hook(setup, SMALL, env={**setup.env, "PATH": str(bin_dir)})
    assert_silent_success(run)
    assert hub.requests == []
    assert_spooled(setup, run, SMALL)


def test_spool_order_and_replay(setup: Setup) -> None:
    payloads = [payload_for(event) for event in ("UserPromptSubmit", "PreToolUse", "Stop")]
    for payload in payloads:
        assert_silent_success(run_hook(setup, payload))
    entries = hooks.read_spool(setup.home)
    assert [e.payload_bytes for e in entries] == [p[:-1] for p in payloads]
    assert [e.sent for e in entries] == sorted(e.sent for e in entries)
    assert hooks.remove_spool_entries(entries) == 3
    assert hooks.read_spool(setup.home) == []
    assert hooks.remove_spool_entries(entries) == 0


def _run_concurrently(setup: Setup, payloads: list[bytes]) -> None:
    procs = [
        subprocess.Popen(
            ["/bin/sh", "-c", setup.command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=setup.env,
        )
        for _ in payloads
    ]
    for proc, payload in zip(procs, payloads, strict=True):
        assert proc.stdin is not None
        proc.stdin.write(payload)  # small: fits the pipe, so all of them run at once
        proc.stdin.close()
    for proc in procs:
        assert proc.wait(timeout=30) == 0
        assert proc.stdout is not None and proc.stderr is not None
        assert (proc.stdout.read(), proc.stderr.read()) == (b"", b"")
        proc.stdout.close()
        proc.stderr.close()


def test_concurrent_hooks(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    """Parallel tool calls fire hooks at once: none lost, none mixed up, live or spooled."""
    payloads = [payload_for("PreToolUse", tool_use_id=f"toolu_{i:02d}") for i in range(16)]
    hub = receivers()
    runtime = setup.hub(hub.port)
    _run_concurrently(setup, payloads)
    assert sorted(r.body for r in hub.requests) == sorted(payloads)
    runtime.unlink()
    _run_concurrently(setup, payloads)
    entries = hooks.read_spool(setup.home)
    assert sorted(e.payload_bytes for e in entries) == sorted(p[:-1] for p in payloads)
    wait_until(lambda: no_temp_files(setup.home))


def test_spool_is_bounded(setup: Setup) -> None:
    spool = setup.home.spool_dir
    for i in range(hooks.SPOOL_CAP):
        os.close(os.open(spool / f"{i + 1:015d}-1.hook", os.O_WRONLY | os.O_CREAT, 0o600))
    run = run_hook(setup, SMALL)
    assert_silent_success(run)
    names = sorted(name for name in os.listdir(spool) if name.endswith(".hook"))
    assert len(names) == hooks.SPOOL_CAP
    assert names[0] == f"{2:015d}-1.hook"  # the oldest went
    assert run.started_ms - 1 <= int(names[-1][:15]) <= run.ended_ms + 1  # ours is the newest


# --------------------------------------------------------------------------- always exit 0


def test_empty_stdin(setup: Setup, receivers: Callable[..., Receiver]) -> None:
    hub = receivers()
    setup.hub(hub.port)
    run = run_hook(setup, b"")
    assert_silent_success(run)
    assert hub.requests == [] and hooks.read_spool(setup.home) == []
    wait_until(lambda: no_temp_files(setup.home))


def test_missing_home(tmp_path: Path) -> None:
    """A script whose home is gone: drains stdin, creates nothing, silent, exit 0."""
    gone = PmuxHome(tmp_path / "gone")
    script = tmp_path / "status-hook.sh"
    script.write_text(hooks.render_script(gone))
    script.chmod(0o700)
    setup = Setup(gone, hooks.sh_quote(str(script)), {"PATH": os.environ["PATH"]}, tmp_path)
    for payload in (SMALL, LARGE):
        run = run_hook(setup, payload)
        assert_silent_success(run)
    assert not gone.root.exists()


def test_closed_stdin(setup: Setup) -> None:
    """Never exit 2 (a blocking error for Claude), even with no stdin at all."""
    run = run_hook(setup, b"", argv=["/bin/sh", "-c", f"exec <&-; {setup.command}"])
    assert_silent_success(run)
    assert hooks.read_spool(setup.home) == []


def test_missing_script(setup: Setup) -> None:
    """Home deleted without uninstall: the settings command itself still exits 0, silently."""
    shutil.rmtree(setup.home.root)
    for payload in (SMALL, LARGE):
        assert_silent_success(run_hook(setup, payload))


def test_missing_runtime_and_spool_dirs(setup: Setup) -> None:
    shutil.rmtree(setup.home.runtime_dir)
    shutil.rmtree(setup.home.spool_dir)
    run = run_hook(setup, SMALL)
    assert_silent_success(run)
    assert_spooled(setup, run, SMALL)


# --------------------------------------------------------------------------- other shells

SHELLS = [
    ["dash"],
    ["bash", "--posix"],
    ["bash"],
    ["busybox", "sh"],
    ["ksh"],
    ["mksh"],
    ["yash"],
    ["zsh", "--emulate", "sh"],
]


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: " ".join(s))
def test_other_shells(setup: Setup, receivers: Callable[..., Receiver], shell: list[str]) -> None:
    if not shutil.which(shell[0]):
        pytest.skip(f"{shell[0]} not installed")
    hub = receivers()
    setup.hub(hub.port)
    argv = [*shell, str(setup.home.hook_script)]
    run = run_hook(setup, UNICODE, argv=argv)
    assert_silent_success(run)
    assert [r.body for r in hub.requests] == [UNICODE]
    headers = {k.lower(): v for k, v in hub.requests[0].headers.items()}
    assert headers["x-pmux-pane"] == "%7" and headers["x-pmux-token"] == setup.home.token()
    assert int(headers["x-pmux-ppid"]) == os.getpid()  # its parent: this test
    assert run.started_ms - 1 <= int(headers["x-pmux-sent"]) <= run.ended_ms + 1

    hub.status = 500
    run = run_hook(setup, UNICODE, argv=argv)
    assert_silent_success(run)
    entries = hooks.read_spool(setup.home)
    assert [(e.payload_bytes, e.pane, e.ppid) for e in entries] == [
        (UNICODE[:-1], "%7", os.getpid())
    ]


# --------------------------------------------------------------------------- spool (Python)


def test_write_spool_entry_matches_script_format(setup: Setup) -> None:
    run = run_hook(setup, UNICODE)
    from_script = hooks.read_spool(setup.home)[0]
    path = hooks.write_spool_entry(
        setup.home, UNICODE, sent=from_script.sent, pane="%7", ppid=from_script.ppid
    )
    assert path.read_bytes() == from_script.path.read_bytes()
    assert run.returncode == 0


def test_read_spool_reports_corrupt_files(tmp_path: Path) -> None:
    home = PmuxHome(tmp_path / "home")
    assert hooks.read_spool(home) == []  # no spool dir: nothing, no error
    good = hooks.write_spool_entry(home, b'{"session_id":"s","hook_event_name":"Stop"}\n', sent=5)
    spool = home.spool_dir
    (spool / "000000000000001-1.hook").write_bytes(b'{"sent":1,"pane":"","ppid":2,"payload":{"a"')
    (spool / "000000000000002-1.hook").write_bytes(b"\xff\xfe garbage")
    (spool / "000000000000003-1.hook").write_bytes(b'{"sent":"x","pane":"","ppid":2,"payload":{}}')
    (spool / "000000000000004-1.hook").write_bytes(b"[1, 2]\n")
    (spool / "000000000000006-1.hook").write_bytes(
        b'{ "payload": {"b": 1}, "ppid": 3, "pane": "%1", "sent": 6 }\n'  # not our layout
    )
    (spool / ".in-123").write_bytes(b"partial")
    (spool / ".sp-123").write_bytes(b"partial")
    (spool / "notes.txt").write_bytes(b"ignored")
    entries = hooks.read_spool(home)
    assert [e.path.name[:15] for e in entries] == [f"{i:015d}" for i in (1, 2, 3, 4, 5, 6)]
    assert [e.error is not None for e in entries] == [True, True, True, True, False, False]
    assert entries[2].error and '"sent"' in entries[2].error
    assert entries[4].path == good and entries[4].sent == 5
    assert entries[4].payload_bytes == b'{"session_id":"s","hook_event_name":"Stop"}'
    assert (entries[5].pane, entries[5].ppid, entries[5].payload_bytes) == ("%1", 3, b'{"b":1}')
    assert hooks.remove_spool_entries(entries) == 6
    assert sorted(os.listdir(spool)) == [".in-123", ".sp-123", "notes.txt"]
    assert hooks.clean_spool_temp(home, max_age_s=3600) == 0
    old = time.time() - 7200
    for name in (".in-123", ".sp-123"):
        os.utime(spool / name, (old, old))
    assert hooks.clean_spool_temp(home, max_age_s=3600) == 2
    assert os.listdir(spool) == ["notes.txt"]
