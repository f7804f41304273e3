"""Claude's config dir: paths, project-dir encoding, PID files and process liveness.

Liveness tests use real processes (``sleep``) and real files; nothing touches ``~/.claude``.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmux_widget.agents.claude.paths import ClaudeHome, encode_project_dir, transcript_path_for
from pmux_widget.agents.claude.pidfiles import (
    is_alive,
    process_start_ticks,
    read_pid_file,
    scan_pid_files,
)
from pmux_widget.core.signals import Invalid, PidRecord, parse_pid_record

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


# --------------------------------------------------------------------------- the home


def test_resolve_argument_env_and_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ClaudeHome.resolve(tmp_path / "cfg").root == tmp_path / "cfg"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "env"))
    assert ClaudeHome.resolve().root == tmp_path / "env"
    assert ClaudeHome.resolve(tmp_path / "arg").root == tmp_path / "arg"  # the argument wins
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert ClaudeHome.resolve().root == tmp_path / "home" / ".claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")  # empty counts as unset
    assert ClaudeHome.resolve().root == tmp_path / "home" / ".claude"


def test_resolve_normalises_to_nfc(tmp_path: Path) -> None:
    decomposed = str(tmp_path / "cafe\u0301")
    assert ClaudeHome.resolve(decomposed).root == tmp_path / "caf\u00e9"


def test_paths_and_installed(tmp_path: Path) -> None:
    home = ClaudeHome(tmp_path / "cfg")
    assert home.projects_dir == tmp_path / "cfg" / "projects"
    assert home.sessions_dir == tmp_path / "cfg" / "sessions"
    assert home.settings_file == tmp_path / "cfg" / "settings.json"
    assert not home.installed  # "Claude not installed": the config dir is missing
    (tmp_path / "cfg").mkdir()
    assert home.installed


# ---------------------------------------------------------------- project-dir encoding


@pytest.mark.parametrize(
    ("path", "encoded"),
    [
        ("/home/alice/src/my-app", "-home-alice-src-my-app"),
        ("/Users/bob/.dotfiles", "-Users-bob--dotfiles"),
        ("my_app", "my-app"),
        ("caf\u00e9", "caf-"),
        ("\U0001f600", "--"),  # one emoji is two UTF-16 code units
        ("C:\\Users\\bob\\proj", "C--Users-bob-proj"),
        ("/home/maya/code/weather-station", "-home-maya-code-weather-station"),
        ("", ""),
    ],
)
def test_encode_project_dir(path: str, encoded: str) -> None:
    assert encode_project_dir(path) == encoded


def reference_hash(text: str) -> int:
    """Java's String.hashCode written as the polynomial sum s[0]*31^(n-1) + … + s[n-1],
    wrapped to a signed 32-bit int by ctypes (a different method from the module's loop)."""
    data = text.encode("utf-16-le", "surrogatepass")
    units = [data[i] | data[i + 1] << 8 for i in range(0, len(data), 2)]
    n = len(units)
    total = sum(u * pow(31, n - 1 - i, 1 << 32) for i, u in enumerate(units))
    return ctypes.c_int32(total % (1 << 32)).value


def test_encode_long_paths_known_answers() -> None:
    # suffixes computed with a JavaScript reference (String.charCodeAt, `h = (h << 5) - h + c
    # | 0`, Math.abs(h).toString(36)) run under node
    assert encode_project_dir("/x" * 150) == "-x" * 100 + "-4y6yx2"
    assert encode_project_dir("/" + "a" * 250) == "-" + "a" * 199 + "-feo44x"


def test_encode_length_boundary() -> None:
    assert encode_project_dir("a" * 200) == "a" * 200  # 200 is still short
    long = "a" * 201
    assert encode_project_dir(long).startswith("a" * 200 + "-")


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(codec="utf-8"), st.sampled_from(["/", ".", "-", "\U0001f600", "\u00e9"])
        ),
        min_size=150,
        max_size=400,
    )
)
def test_encode_long_paths_match_reference(path: str) -> None:
    units = len(path.encode("utf-16-le")) // 2
    encoded = encode_project_dir(path)
    replaced = "".join(
        c if c.isascii() and c.isalnum() else "-" * (len(c.encode("utf-16-le")) // 2) for c in path
    )
    assert len(replaced) == units
    if units <= 200:
        assert encoded == replaced
        return
    head, _, suffix = encoded.rpartition("-")
    assert encoded[:200] == replaced[:200] and encoded[200] == "-"
    assert head == replaced[:200]
    assert suffix == suffix.lower() and int(suffix, 36) == abs(reference_hash(path))


def test_transcript_path_for(tmp_path: Path) -> None:
    home = ClaudeHome(tmp_path)
    path = transcript_path_for(home, "/home/maya/code/weather-station", "3b8e1f20")
    assert path == tmp_path / "projects" / "-home-maya-code-weather-station" / "3b8e1f20.jsonl"


# --------------------------------------------------------------------------- PID files


def test_read_pid_file_fixtures() -> None:
    busy = read_pid_file(SESSIONS / "61234.json")
    assert isinstance(busy, PidRecord)
    assert (busy.pid, busy.session_id, busy.status) == (
        61234,
        "3b8e1f20-6c4d-4a9e-b2f1-7d5c0e9a8b31",
        "busy",
    )
    assert (busy.proc_start, busy.started_at, busy.kind, busy.entrypoint) == (
        "12345678",
        1783000000123,
        "interactive",
        "cli",
    )
    waiting = read_pid_file(SESSIONS / "61877.json")
    assert isinstance(waiting, PidRecord)
    assert (waiting.status, waiting.waiting_for) == ("waiting", "permission prompt")
    fresh = read_pid_file(SESSIONS / "62001.json")
    assert isinstance(fresh, PidRecord)
    assert (fresh.status, fresh.entrypoint, fresh.cwd) == (
        None,
        "sdk-cli",
        "/home/maya/code/dashboard",
    )
    legacy = read_pid_file(SESSIONS / "legacy" / "40404.json")
    assert isinstance(legacy, PidRecord)
    assert (legacy.pid, legacy.started_at, legacy.proc_start, legacy.status) == (
        40404,
        1772000000000,
        None,
        None,
    )


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"   \n",
        b"\x00\xff\xfe\x80binary",
        b'{"pid": 12, "sessionId": ',
        b"[1, 2, 3]",
        b'{"sessionId": "s"}',
        b'{"pid": -4, "sessionId": "s"}',
        b'{"pid": 12}',
        b"null",
    ],
)
def test_read_pid_file_malformed(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "12.json"
    path.write_bytes(content)
    result = read_pid_file(path)
    assert isinstance(result, Invalid) and result.reason


def test_read_pid_file_unreadable(tmp_path: Path) -> None:
    assert isinstance(read_pid_file(tmp_path / "missing.json"), Invalid)
    (tmp_path / "dir.json").mkdir()
    assert isinstance(read_pid_file(tmp_path / "dir.json"), Invalid)
    big = tmp_path / "13.json"
    big.write_bytes(b'{"pid": 13, "sessionId": "' + b"x" * (2 << 20) + b'"}')
    assert "larger" in read_pid_file(big).reason  # type: ignore[union-attr]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root reads files whatever their mode; test_read_pid_file_unreadable covers it",
)
def test_read_pid_file_permission_denied(tmp_path: Path) -> None:
    path = tmp_path / "14.json"
    shutil.copy(SESSIONS / "61234.json", path)
    path.chmod(0)
    try:
        assert isinstance(read_pid_file(path), Invalid)
    finally:
        path.chmod(0o600)


def test_scan_pid_files(tmp_path: Path) -> None:
    home = ClaudeHome(tmp_path)
    assert scan_pid_files(home) == []  # no sessions/ dir
    sessions = home.sessions_dir
    sessions.mkdir()
    for name in ("61234.json", "61877.json", "62001.json"):
        shutil.copy(SESSIONS / name, sessions / name)
    (sessions / "900.json").write_bytes(b"{not json")
    for junk in (".fleetview-heartbeat", "abc.json", "123.json.tmp", "12a.json", "-5.json"):
        (sessions / junk).write_text("{}")
    found = scan_pid_files(home)
    assert [p.name for p, _ in found] == ["900.json", "61234.json", "61877.json", "62001.json"]
    assert isinstance(found[0][1], Invalid)
    assert [r.pid for _, r in found[1:]] == [61234, 61877, 62001]  # type: ignore[union-attr]


# ---------------------------------------------------------------------------- liveness


@pytest.fixture
def sleeper() -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def record_for(pid: int, **fields: object) -> PidRecord:
    data = {"pid": pid, "sessionId": "s-1", "cwd": "/tmp", "startedAt": int(time.time() * 1000)}
    data.update(fields)
    data = {k: v for k, v in data.items() if v is not None}
    record = parse_pid_record(json.dumps(data))  # parsed the way the hub does
    assert isinstance(record, PidRecord)
    return record


def proc_stat_field_22(pid: int) -> str:
    """Independent parse: everything after the comm's last ')' then field 22 (1-based)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split(" ")[22 - 3]


@linux_only
def test_process_start_ticks_of_self() -> None:
    assert process_start_ticks(os.getpid()) == proc_stat_field_22(os.getpid())
    assert process_start_ticks(0) is None and process_start_ticks(-1) is None


@linux_only
def test_process_start_ticks_with_spaces_and_parens_in_comm(tmp_path: Path) -> None:
    odd = tmp_path / "x) (y z"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", odd)
    proc = subprocess.Popen([str(odd), "60"])
    try:
        assert psutil.Process(proc.pid).name() == "x) (y z"
        ticks = process_start_ticks(proc.pid)
        assert ticks is not None and ticks == proc_stat_field_22(proc.pid)
        # cross-check with psutil: boot time + ticks / CLK_TCK ≈ create time
        hz = os.sysconf("SC_CLK_TCK")
        created = psutil.boot_time() + int(ticks) / hz
        assert abs(created - psutil.Process(proc.pid).create_time()) < 1.5
    finally:
        proc.kill()
        proc.wait()


@linux_only
def test_alive_with_matching_proc_start(sleeper: subprocess.Popen[bytes]) -> None:
    ticks = process_start_ticks(sleeper.pid)
    assert is_alive(record_for(sleeper.pid, procStart=ticks))


@linux_only
def test_reused_pid_is_dead(sleeper: subprocess.Popen[bytes]) -> None:
    ticks = int(process_start_ticks(sleeper.pid) or 0)
    # the file was written by an earlier process that had this pid
    assert not is_alive(record_for(sleeper.pid, procStart=str(ticks - 12345)))


def test_dead_pid_is_dead(sleeper: subprocess.Popen[bytes]) -> None:
    pid = sleeper.pid
    ticks = process_start_ticks(pid)
    sleeper.kill()
    sleeper.wait()  # reaped: the pid is gone
    assert not is_alive(record_for(pid, procStart=ticks))
    assert not is_alive(record_for(pid))


@linux_only
def test_zombie_is_dead(sleeper: subprocess.Popen[bytes]) -> None:
    pid = sleeper.pid
    ticks = process_start_ticks(pid)
    sleeper.send_signal(signal.SIGKILL)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
    assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not is_alive(record_for(pid, procStart=ticks))
    assert not is_alive(record_for(pid))


def test_legacy_shape_uses_started_at(sleeper: subprocess.Popen[bytes]) -> None:
    created_ms = int(psutil.Process(sleeper.pid).create_time() * 1000)
    # written after the process started (the normal case): alive
    assert is_alive(record_for(sleeper.pid, startedAt=created_ms + 300))
    # within the 2 s slack of psutil's create time: still alive
    assert is_alive(record_for(sleeper.pid, startedAt=created_ms - 1500))
    # written an hour before this process existed: the pid was reused, dead
    assert not is_alive(record_for(sleeper.pid, startedAt=created_ms - 3_600_000))
    # nothing to compare with: the pid being there is all we know
    assert is_alive(record_for(sleeper.pid, startedAt=None))


def test_fixture_pids_are_not_claude(tmp_path: Path) -> None:
    """The fixtures' pids either do not exist here or started at other ticks: dead."""
    for name in ("61234.json", "61877.json", "62001.json"):
        record = read_pid_file(SESSIONS / name)
        assert isinstance(record, PidRecord)
        assert not is_alive(record)
