"""Harness for the real Claude Code CLI: install it, give it a sealed environment, drive it in tmux.

Why: pmux-widget watches Claude Code's hooks, PID files and transcripts. Guessing their shapes
and order is how monitors go wrong, so tests and the demo run the *real* CLI
(``@anthropic-ai/claude-code``, pinned to the versions of :data:`CLI_VERSIONS`) against the
scripted model (:mod:`pmux_widget.demo.scripted_model`), interactively in a private tmux server.

* :func:`ensure_cli` installs a pinned version once into its own folder of a cache (versions
  side by side) with npm and returns the binary.
* :class:`ClaudeEnv` is a temporary ``HOME`` + ``CLAUDE_CONFIG_DIR`` + project folder, seeded
  so the CLI starts without onboarding, API-key or folder-trust dialogs, optionally with hooks
  (e.g. :meth:`ClaudeEnv.add_recorder_hooks`, which logs every hook payload to a JSONL file).
* :class:`TmuxClaude` runs ``claude`` in a pane of ``tmux -L <unique socket>`` and offers
  keystroke helpers (prompt, approve, deny, Esc, /clear, /compact, /exit), screen capture,
  polling with deadlines, and access to the session's PID file and transcript.

Nothing here touches the real ``~/.claude``: every path lives under the env's temp root.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import libtmux
import psutil

from pmux_widget.claude.paths import encode_project_dir  # the CLI's rule, one copy

__all__ = [
    "ALL_HOOK_EVENTS",
    "CLI_PACKAGE",
    "CLI_VERSION",
    "CLI_VERSIONS",
    "NEWEST",
    "OLDEST",
    "ClaudeEnv",
    "CliUnavailable",
    "TmuxClaude",
    "default_cache_dir",
    "encode_project_dir",
    "ensure_cli",
    "read_jsonl",
    "wait_until",
]

CLI_PACKAGE = "@anthropic-ai/claude-code"
CLI_VERSIONS: tuple[str, ...] = ("2.1.197", "2.1.332")
"""The pinned CLI versions the real-CLI suite runs against, oldest first: the oldest release
we support and the newest at the last upgrade (``python -m devtools.upgrade_cli``)."""
OLDEST = CLI_VERSIONS[0]
NEWEST = CLI_VERSIONS[-1]
CLI_VERSION = OLDEST
"""The version the first recordings (``tests/fixtures/real/<scenario>/``) were made with."""


def version_key(version: str) -> tuple[int, ...]:
    """``"2.1.332"`` → ``(2, 1, 332)``, to compare versions."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def auto_mode_default(version: str) -> bool:
    """Whether ``version`` starts in "auto" permission mode (a classifier approves most tool
    calls) unless settings ask for ``"defaultMode": "default"``: observed on 2.1.332, not on
    2.1.197. Versions in between were not recorded; the boundary is our newest pin's."""
    return version_key(version) > version_key(OLDEST)


ALL_HOOK_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "InstructionsLoaded",
    "CwdChanged",
    "ConfigChange",
)
"""Events the recorder hook subscribes to: every 2.1.197 event that a passive command hook can
observe without changing behaviour (WorktreeCreate and Elicitation hooks would *replace*
built-in behaviour, FileChanged needs watch paths, MessageDisplay fires per streamed batch)."""

T = TypeVar("T")


class CliUnavailable(RuntimeError):
    """The Claude Code CLI could not be installed or does not run here."""


# --------------------------------------------------------------------------- polling


def wait_until(
    predicate: Callable[[], T | None], timeout: float = 10.0, interval: float = 0.05, what: str = ""
) -> T:
    """Poll ``predicate`` until it returns a truthy value, and return that value.

    Raises :class:`TimeoutError` (naming ``what``) after ``timeout`` seconds. Exceptions from
    the predicate count as "not yet" (files appear and are rewritten while we poll).
    """
    deadline = time.monotonic() + timeout
    last_exc: BaseException | None = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except (OSError, ValueError, KeyError) as exc:
            last_exc = exc
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_exc!r})" if last_exc else ""
            raise TimeoutError(
                f"timed out after {timeout:.1f}s waiting for {what or predicate}" + detail
            )
        time.sleep(interval)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Complete JSON lines of ``path`` (a torn last line is skipped); [] if it is missing."""
    try:
        data = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in data.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out


# --------------------------------------------------------------------------- install


def default_cache_dir() -> Path:
    """Where :func:`ensure_cli` installs the CLI.

    ``$PMUX_CLAUDE_CACHE`` if set; else ``<checkout>/.cache/claude-code`` when this package
    runs from a source checkout (a ``pyproject.toml`` next to the package); else
    ``~/.cache/pmux-widget/claude-code``.
    """
    env = os.environ.get("PMUX_CLAUDE_CACHE")
    if env:
        return Path(env).expanduser()
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        return checkout / ".cache" / "claude-code"
    return Path.home() / ".cache" / "pmux-widget" / "claude-code"


def cli_version(binary: str | os.PathLike[str], timeout: float = 60.0) -> str | None:
    """The version ``binary --version`` prints (e.g. ``2.1.197``), or None if it fails."""
    try:
        with tempfile.TemporaryDirectory(prefix="pmux-claude-version-") as home:
            proc = subprocess.run(
                [str(binary), "--version"],
                capture_output=True,
                text=True,
                timeout=timeout,
                env={**_base_env(), "HOME": home, "CLAUDE_CONFIG_DIR": home},
                check=False,
            )
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"\s*(\d+\.\d+\.\d+)", proc.stdout)
    return m.group(1) if proc.returncode == 0 and m else None


def _candidates(prefix: Path) -> list[Path]:
    nm = prefix / "node_modules"
    plat = "linux-x64" if os.uname().machine in ("x86_64", "amd64") else "linux-arm64"
    return [
        nm / ".bin" / "claude",
        # npm >= 11 may skip the postinstall that copies the native binary over bin/claude.exe;
        # the platform package's binary is the same program.
        nm / "@anthropic-ai" / f"claude-code-{plat}" / "claude",
        nm / "@anthropic-ai" / f"claude-code-{plat}-musl" / "claude",
    ]


def _make_executable(prefix: Path) -> None:
    """npm 11 skips install scripts, and a package's binary can then lack its x bit: set it."""
    nm = prefix / "node_modules" / "@anthropic-ai"
    for f in [*nm.glob("claude-code-*/claude"), *nm.glob("claude-code/bin/claude*")]:
        with contextlib.suppress(OSError):
            if f.is_file() and not os.access(f, os.X_OK):
                f.chmod(f.stat().st_mode | 0o111)


def _working(prefixes: Iterable[Path], version: str) -> Path | None:
    for prefix in prefixes:
        _make_executable(prefix)
        for cand in _candidates(prefix):
            if cand.exists() and cli_version(cand) == version:
                return cand
    return None


def ensure_cli(
    version: str = NEWEST,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout: float = 900.0,
) -> Path:
    """Return a working ``claude`` binary of ``version``, installing it with npm if needed.

    Each version lives in its own npm prefix, ``<cache_dir>/<version>/`` (default cache:
    :func:`default_cache_dir`), so several stay installed side by side; an install made before
    versions were separated (``<cache_dir>/node_modules``) is still used when its version
    matches. ``$PMUX_CLAUDE_CLI_<version with _ for .>`` (e.g. ``PMUX_CLAUDE_CLI_2_1_332``) or,
    for any version, ``$PMUX_CLAUDE_CLI`` (a path to a binary) wins when it prints that version.
    An exclusive file lock makes concurrent callers (parallel test workers) install only once.
    Raises :class:`CliUnavailable` with the reason when no working binary can be had.
    """
    override = os.environ.get("PMUX_CLAUDE_CLI_" + version.replace(".", "_")) or os.environ.get(
        "PMUX_CLAUDE_CLI"
    )
    if override:
        path = Path(override).expanduser()
        found = cli_version(path)
        if found != version:
            raise CliUnavailable(
                f"PMUX_CLAUDE_CLI={override}: --version gave {found!r}, expected {version}"
            )
        return path
    root = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    prefix = root / version
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found_bin = _working((prefix, root), version)
        if found_bin:
            return found_bin
        npm = shutil.which("npm")
        if npm is None:
            raise CliUnavailable("npm is not on PATH; cannot install the Claude Code CLI")
        if not (prefix / "package.json").exists():
            (prefix / "package.json").write_text('{"private": true}\n')
        cmd = [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            # Since 2.1.198 the package asks for Node >= 22; the CLI is a native binary, so
            # an older Node installs it fine (npm only warns).
            "--engine-strict=false",
            "--prefix",
            str(prefix),
            f"{CLI_PACKAGE}@{version}",
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CliUnavailable(f"npm install failed: {exc}") from exc
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            raise CliUnavailable("npm install failed: " + " | ".join(tail))
        found_bin = _working((prefix,), version)
        if found_bin:
            return found_bin
    raise CliUnavailable(f"installed {CLI_PACKAGE}@{version} under {prefix}, but no binary runs")


# --------------------------------------------------------------------------- environment

RECORDER_SCRIPT = r"""#!/bin/sh
# Hook recorder (pmux-widget test harness): appends the payload Claude Code wrote on stdin
# as ONE line {"t": <receive ms epoch>, "ppid": <parent pid>, "payload": <payload>} to $1.
# Prints nothing, exits 0: it never changes what Claude does.
t=$(date +%s%3N)
p=$(cat)
[ -n "$p" ] || p=null
printf '{"t":%s,"ppid":%s,"pane":"%s","payload":%s}\n' "$t" "$PPID" "$TMUX_PANE" "$p" >> "$1"
exit 0
"""


def _base_env() -> dict[str, str]:
    """The minimal environment every CLI run starts from (no inherited ANTHROPIC_*/CLAUDE*)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm-256color",
    }


class ClaudeEnv:
    """A sealed, seeded environment for one or more Claude Code runs.

    Layout under ``root`` (a fresh temp dir unless given)::

        home/                 HOME
        home/.claude/         CLAUDE_CONFIG_DIR (.claude.json, settings.json, sessions/, projects/)
        home/project/         the working directory (trusted), with README.md and notes.txt
        hooks.jsonl           hook payloads, when add_recorder_hooks() was called

    ``.claude.json`` is seeded before the first start (onboarding done, API key approved, the
    project trusted) so the interactive CLI opens straight at its prompt and runs hooks.

    What a version needs (``version``, default :data:`NEWEST`): CLIs whose default permission
    mode is "auto" (:func:`auto_mode_default`) get, unless ``auto_mode`` is true, settings
    ``{"permissions": {"defaultMode": "default"}}`` ("manual mode": the classic permission
    dialogs) and ``"hasSeenAutoDefaultNudge": true`` in ``.claude.json`` (else a startup dialog
    "Make auto mode your default permission mode?" waits; ``startup_dialog=True`` keeps it).
    """

    def __init__(
        self,
        base_url: str,
        root: str | os.PathLike[str] | None = None,
        *,
        api_key: str | None = None,
        settings: Mapping[str, Any] | None = None,
        extra_env: Mapping[str, str] | None = None,
        seed_files: bool = True,
        version: str = NEWEST,
        auto_mode: bool = False,
        startup_dialog: bool = False,
    ) -> None:
        self.version = version
        self.auto_mode = auto_mode and auto_mode_default(version)
        self.startup_dialog = startup_dialog
        self._own_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="pmux-claude-")).resolve()
        self.home = self.root / "home"
        self.config_dir = self.home / ".claude"
        self.cwd = self.home / "project"
        for d in (self.home, self.config_dir, self.cwd):
            d.mkdir(parents=True, exist_ok=True)
        self.cwd = self.cwd.resolve()
        self.base_url = base_url
        self.api_key = api_key or "sk-ant-api03-" + uuid.uuid4().hex + "pmuxsimAA"
        self.extra_env: dict[str, str] = dict(extra_env or {})
        self.hooks_log: Path | None = None
        self._seed_state()
        if settings:
            self.merge_settings(settings)
        if seed_files:
            (self.cwd / "README.md").write_text("# Demo project\n\nHello from the README.\n")
            (self.cwd / "notes.txt").write_text("This is a draft note.\n")

    # ---- seeding

    @property
    def state_file(self) -> Path:
        """``<config>/.claude.json`` (the CLI's global state; inside CLAUDE_CONFIG_DIR)."""
        return self.config_dir / ".claude.json"

    @property
    def settings_file(self) -> Path:
        """``<config>/settings.json`` (user settings, where hooks go)."""
        return self.config_dir / "settings.json"

    @property
    def sessions_dir(self) -> Path:
        """``<config>/sessions``: one ``<pid>.json`` per running CLI."""
        return self.config_dir / "sessions"

    @property
    def project_dir(self) -> Path:
        """``<config>/projects/<encoded cwd>``: where this cwd's transcripts go."""
        return self.config_dir / "projects" / encode_project_dir(str(self.cwd))

    def trust(self, path: str | os.PathLike[str]) -> None:
        """Mark ``path`` (realpath) as a trusted project in ``.claude.json``."""
        state = json.loads(self.state_file.read_text()) if self.state_file.exists() else {}
        state.setdefault("projects", {})[os.path.realpath(path)] = {
            "hasTrustDialogAccepted": True,
            "hasCompletedProjectOnboarding": True,
            "allowedTools": [],
        }
        self.state_file.write_text(json.dumps(state, indent=2))

    def _seed_state(self) -> None:
        if not self.state_file.exists():
            state = {
                "hasCompletedOnboarding": True,
                "lastOnboardingVersion": self.version,
                "numStartups": 1,
                "customApiKeyResponses": {"approved": [self.api_key[-20:]], "rejected": []},
                "projects": {},
            }
            if auto_mode_default(self.version) and not self.startup_dialog:
                state["hasSeenAutoDefaultNudge"] = True
            self.state_file.write_text(json.dumps(state, indent=2))
        if auto_mode_default(self.version) and not self.auto_mode:
            self.merge_settings({"permissions": {"defaultMode": "default"}})
        self.trust(self.cwd)

    def merge_settings(self, settings: Mapping[str, Any]) -> None:
        """Deep-merge ``settings`` into ``settings.json`` (lists under ``hooks`` concatenate)."""
        current = json.loads(self.settings_file.read_text()) if self.settings_file.exists() else {}
        self.settings_file.write_text(json.dumps(_merge(current, settings), indent=2))

    def add_hook(self, events: Iterable[str], command: str, timeout: int = 5) -> None:
        """Register a command hook for every event in ``events`` (matcher: everything)."""
        hooks = {
            ev: [{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]
            for ev in events
        }
        self.merge_settings({"hooks": hooks})

    def add_recorder_hooks(self, events: Iterable[str] = ALL_HOOK_EVENTS) -> Path:
        """Log every payload of ``events`` to ``<root>/hooks.jsonl``; return that path."""
        script = self.root / "hook-recorder.sh"
        script.write_text(RECORDER_SCRIPT)
        script.chmod(0o755)
        self.hooks_log = self.root / "hooks.jsonl"
        self.hooks_log.touch()
        self.add_hook(
            events, f"/bin/sh {shlex.quote(str(script))} {shlex.quote(str(self.hooks_log))}"
        )
        return self.hooks_log

    def hooks(self) -> list[dict[str, Any]]:
        """Recorded hook lines so far (``{"t", "ppid", "pane", "payload"}``)."""
        return read_jsonl(self.hooks_log) if self.hooks_log else []

    def hook_events(self) -> list[str]:
        """Names of the recorded hook events, in order."""
        return [h["payload"].get("hook_event_name", "?") for h in self.hooks() if h["payload"]]

    # ---- run-time

    def env(self) -> dict[str, str]:
        """The complete environment for a CLI process (nothing inherited but PATH/locale)."""
        return {
            **_base_env(),
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.config_dir),
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": self.api_key,
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            **self.extra_env,
        }

    def pid_files(self) -> dict[int, dict[str, Any]]:
        """Parsed ``sessions/<pid>.json`` files, by pid (unparsable ones are skipped)."""
        out: dict[int, dict[str, Any]] = {}
        if not self.sessions_dir.is_dir():
            return out
        for f in self.sessions_dir.iterdir():
            if re.fullmatch(r"\d+\.json", f.name):
                with contextlib.suppress(OSError, ValueError):
                    out[int(f.stem)] = json.loads(f.read_text())
        return out

    def transcript_path(self, session_id: str) -> Path:
        """Where the main transcript of ``session_id`` lives (it is created lazily)."""
        return self.project_dir / f"{session_id}.jsonl"

    def run_print(
        self, cli: str | os.PathLike[str], prompt: str, *args: str, timeout: float = 120.0
    ) -> subprocess.CompletedProcess[str]:
        """Run ``claude -p <prompt>`` (print mode) in the project dir and wait for it."""
        return subprocess.run(
            [str(cli), "-p", prompt, *args],
            cwd=self.cwd,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def cleanup(self) -> None:
        """Remove the temp root if this env created it."""
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)


def _merge(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, Mapping):
        out = dict(a)
        for k, v in b.items():
            out[k] = _merge(a[k], v) if k in a else v
        return out
    if isinstance(a, list) and isinstance(b, list):
        return a + b
    return b


# --------------------------------------------------------------------------- tmux driver


class TmuxClaude:
    """Claude Code running interactively in a pane of a private tmux server.

    The pane runs ``exec env -i <ClaudeEnv.env()> TMUX=… TMUX_PANE=… claude <args>``, so the
    pane's process *is* the CLI (``pid``), nothing leaks in from the caller's environment, and
    hooks still see ``$TMUX_PANE``. Use as a context manager, or call :meth:`close`.
    """

    # The input box's footer: "? for shortcuts" (2.1.197, and 2.1.332 in manual mode) or
    # "⏵⏵ auto mode on (shift+tab to cycle)" (2.1.332 in auto mode).
    READY = re.compile(r"\? for shortcuts|for shortcuts|Try \"|auto mode on")
    DIALOG = re.compile(r"Do you want to (proceed|make this edit|create|allow)|❯ 1\. Yes")
    AUTO_CANT_CHECK = re.compile(r"Auto mode can't check actions in this session\s*$", re.M)
    #: an option line of a dialog: "❯ 1. Yes" / "  3. No" (numbered) or "❯ No" / "  Yes"
    #: (2.1.332's dialog in auto mode: unnumbered, "No" first and selected)
    OPTION = re.compile(
        r"^\s*(?P<cursor>❯)?\s*(?:(?P<num>\d+)\.\s+)?(?P<label>(?:Yes|No)\b.*?)\s*$"
    )

    def __init__(
        self,
        env: ClaudeEnv,
        cli: str | os.PathLike[str],
        args: Sequence[str] = (),
        *,
        socket_name: str | None = None,
        width: int = 160,
        height: int = 50,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.env = env
        self.cli = Path(cli)
        self.args = list(args)
        self.socket_name = socket_name or f"pmux-sim-{uuid.uuid4().hex[:10]}"
        self.width = width
        self.height = height
        self.cwd = Path(cwd) if cwd else env.cwd
        self.server: libtmux.Server | None = None
        self.pane: libtmux.Pane | None = None
        self._pid: int | None = None
        self.started_at: float | None = None

    # ---- lifecycle

    def command(self) -> str:
        """The shell command the pane runs."""
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.env().items())
        argv = " ".join(shlex.quote(a) for a in [str(self.cli), *self.args])
        return f'exec env -i {assigns} TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" {argv}'

    def start(self, wait_ready: bool = True, timeout: float = 60.0) -> TmuxClaude:
        """Start the tmux server and the CLI; by default wait until its prompt is shown."""
        tmux_env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.server = libtmux.Server(socket_name=self.socket_name)
        # Our own config only (never the user's ~/.tmux.conf); keep the pane after the CLI
        # exits so its last screen can still be read.
        conf = self.env.root / "tmux.conf"
        conf.write_text("set -g remain-on-exit on\nset -g history-limit 5000\n")
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket_name,
                "-f",
                str(conf),
                "new-session",
                "-d",
                "-s",
                "claude",
                "-x",
                str(self.width),
                "-y",
                str(self.height),
                "-c",
                str(self.cwd),
                self.command(),
            ],
            check=True,
            env=tmux_env,
        )
        self.started_at = time.time()
        self.pane = self.server.sessions[0].windows[0].panes[0]
        self._pid = self._find_cli_pid(int(self.pane.pane_pid or 0))
        if wait_ready:
            self.wait_for_screen(self.READY, timeout)
        return self

    def __enter__(self) -> TmuxClaude:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Kill the CLI (and its children) and the tmux server. Safe to call twice."""
        procs: list[psutil.Process] = []
        if self._pid:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(self._pid)
                procs = [proc, *proc.children(recursive=True)]
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()
        # Killing the server also lets it reap the CLI (its child), so waiting is short.
        subprocess.run(
            ["tmux", "-L", self.socket_name, "kill-server"], capture_output=True, check=False
        )
        if procs:
            psutil.wait_procs(procs, timeout=3)
        # tmux leaves the socket file behind; remove ours.
        sock_dir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        with contextlib.suppress(OSError):
            (sock_dir / self.socket_name).unlink()
        self._pid = None

    # ---- keys

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket_name, *args], capture_output=True, text=True, check=False
        )
        return proc.stdout

    def send_keys(self, *keys: str, literal: bool = False) -> None:
        """``tmux send-keys`` to the pane (``literal``: text, not key names)."""
        assert self.pane is not None, "not started"
        self._tmux("send-keys", "-t", self.pane.pane_id or "", *(["-l"] if literal else []), *keys)

    def type_text(self, text: str, timeout: float = 10.0) -> None:
        """Type ``text`` and wait until it is echoed (so a following Enter is not pasted)."""
        self.send_keys(text, literal=True)
        probe = text.strip()[-20:]
        if probe:
            self.wait_until(lambda: probe in self.screen(), timeout, what=f"echo of {probe!r}")

    def type_prompt(self, text: str, timeout: float = 10.0) -> None:
        """Type a prompt and press Enter."""
        self.type_text(text, timeout)
        self.send_keys("Enter")

    def command_line(self, command: str, timeout: float = 10.0) -> None:
        """Run a slash command (``/clear``): type it, wait for the echo, Enter."""
        self.type_text(command, timeout)
        self.send_keys("Enter")

    def wait_dialog(self, timeout: float = 30.0) -> str:
        """Wait until a permission dialog is on screen; return the screen."""
        return self.wait_for_screen(self.DIALOG, timeout)

    def dialog_options(self, screen: str | None = None) -> list[tuple[str, str | None, bool]]:
        """The options of the dialog on screen, top to bottom: ``(label, number or None,
        selected)``. Empty when no dialog is shown."""
        text = self.screen() if screen is None else screen
        # Options follow the dialog's question; earlier lines may quote "Yes"/"No" too.
        idx = max(text.rfind("Do you want to"), 0)
        out = []
        for line in text[idx:].splitlines()[1:]:
            m = self.OPTION.match(line)
            if m:
                out.append((m["label"], m["num"], bool(m["cursor"])))
        return out

    def choose(self, label: str, timeout: float = 30.0) -> str:
        """Wait for a permission dialog and choose the option whose label is ``label``
        (exactly, e.g. "Yes" rather than "Yes, and always allow …"); return the screen.

        Never by position: 2.1.197 lists "1. Yes" first, 2.1.332's dialog in auto mode lists
        "❯ No" first (a bare Enter denies). A numbered option is chosen by its digit; an
        unnumbered one by moving the cursor onto it (checked on screen) and Enter.
        """
        screen = self.wait_dialog(timeout)
        options = self.wait_until(
            lambda: self.dialog_options(),
            timeout,
            what="the dialog's options on screen",
        )
        labels = [o[0] for o in options]
        if label not in labels:
            raise ValueError(f"no option {label!r} in the dialog: {labels}")
        target = labels.index(label)
        if options[target][1] is not None:
            self.send_keys(options[target][1] or "")
            self.confirm(label, timeout)
            return screen
        # The dialog may be drawn before it takes keys, and on a loaded machine it was seen
        # back on its default option with Enter unanswered: move one step at a time, re-reading
        # the cursor, press Enter on the target, and start again while the dialog stays.
        deadline = time.monotonic() + timeout

        def cursor() -> int | None:
            return next((i for i, o in enumerate(self.dialog_options()) if o[2]), None)

        while True:
            while (at := cursor()) != target:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"could not move onto {label!r}\n{self.screen()}")
                if at is not None:
                    self.send_keys("Down" if target > at else "Up")
                with contextlib.suppress(TimeoutError):
                    wait_until(functools.partial(_moved, cursor, at), 3.0)
            self.send_keys("Enter")
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: not self.DIALOG.search(self.screen()), 5.0)
                return screen
            if time.monotonic() > deadline:
                raise TimeoutError(f"the dialog did not take {label!r}\n{self.screen()}")

    def confirm(self, label: str, timeout: float = 10.0) -> bool:
        """After a digit was pressed for option ``label``: wait for the dialog to go, pressing
        Enter if it stays with its cursor on ``label`` (2.1.332, on a loaded machine, was seen
        moving the cursor onto "4. No" without answering). True once the dialog is gone."""
        deadline = time.monotonic() + timeout
        while self.DIALOG.search(self.screen()):
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: not self.DIALOG.search(self.screen()), 2.0)
                return True
            if time.monotonic() > deadline:
                return False
            if any(o[0] == label and o[2] for o in self.dialog_options()):
                self.send_keys("Enter")
        return True

    def stay_in_auto_mode(self, timeout: float = 30.0) -> None:
        """Answer auto mode's "can't check actions in this session" dialog with Enter (stay
        in auto mode; the call becomes a permission dialog). The dialog is drawn before it
        takes keys, so Enter is pressed again until the dialog is gone."""
        self.wait_for_screen(self.AUTO_CANT_CHECK, timeout)
        deadline = time.monotonic() + timeout
        while self.AUTO_CANT_CHECK.search(self.screen()):
            if time.monotonic() > deadline:
                raise TimeoutError("auto mode's dialog did not take Enter\n" + self.screen())
            self.send_keys("Enter")
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: not self.AUTO_CANT_CHECK.search(self.screen()), 2.0)

    def approve(self, timeout: float = 30.0) -> None:
        """Wait for a permission dialog and choose "Yes" (by label, see :meth:`choose`)."""
        self.choose("Yes", timeout)

    def deny(self, timeout: float = 30.0) -> None:
        """Wait for a permission dialog and choose "No" (by label, see :meth:`choose`)."""
        self.choose("No", timeout)

    def escape(self) -> None:
        """Press Esc (interrupts a streaming answer or dismisses a dialog)."""
        self.send_keys("Escape")

    def clear(self) -> None:
        """``/clear``: new session id in the same process."""
        self.command_line("/clear")

    def compact(self) -> None:
        """``/compact``: summarise the conversation (the model gets a summary request)."""
        self.command_line("/compact")

    def exit(self) -> None:
        """``/exit``: the CLI ends (SessionEnd) and removes its PID file."""
        self.command_line("/exit")

    def kill9(self) -> None:
        """SIGKILL the CLI: no SessionEnd, the PID file stays behind."""
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)

    # ---- observation

    def screen(self) -> str:
        """The visible pane text (``capture-pane -p``)."""
        assert self.pane is not None, "not started"
        return self._tmux("capture-pane", "-p", "-t", self.pane.pane_id or "")

    def wait_for_screen(self, pattern: str | re.Pattern[str], timeout: float = 30.0) -> str:
        """Wait until the screen matches ``pattern`` (regex); return the screen."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern

        def check() -> str | None:
            s = self.screen()
            return s if rx.search(s) else None

        try:
            return self.wait_until(check, timeout, what=f"screen matching {rx.pattern!r}")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}\n--- screen ---\n{self.screen()}") from None

    def wait_until(
        self, predicate: Callable[[], T | None], timeout: float = 30.0, what: str = ""
    ) -> T:
        """:func:`wait_until` (poll with a deadline)."""
        return wait_until(predicate, timeout, what=what)

    @staticmethod
    def _find_cli_pid(pane_pid: int) -> int:
        """The pane's process if it is the CLI (it execs), else its first ``claude`` child."""
        try:
            proc = psutil.Process(pane_pid)
            if proc.name() == "claude":
                return pane_pid
            for child in proc.children(recursive=True):
                if child.name() == "claude":
                    return child.pid
        except psutil.Error:
            pass
        return pane_pid

    @property
    def pid(self) -> int:
        """The CLI's pid (the pane process: the pane execs into ``claude``)."""
        if not self._pid:
            raise RuntimeError("not running")
        return self._pid

    def alive(self) -> bool:
        """Whether the CLI process still runs."""
        try:
            return psutil.Process(self.pid).status() != psutil.STATUS_ZOMBIE
        except (psutil.Error, RuntimeError):
            return False

    def pid_file(self) -> Path:
        """``<config>/sessions/<pid>.json`` of this CLI (it may not exist yet or any more)."""
        return self.env.sessions_dir / f"{self.pid}.json"

    def pid_info(self) -> dict[str, Any] | None:
        """The parsed PID file, or None."""
        try:
            data = json.loads(self.pid_file().read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def wait_status(self, status: str, timeout: float = 30.0) -> dict[str, Any]:
        """Wait until the PID file's ``status`` equals ``status``; return the PID file."""

        def reached() -> dict[str, Any] | None:
            info = self.pid_info()
            return info if info is not None and info.get("status") == status else None

        return self.wait_until(
            reached,
            timeout,
            what=f"PID file status {status!r}",
        )

    def session_id(self) -> str | None:
        """The current session id, from the PID file."""
        info = self.pid_info()
        return info.get("sessionId") if info else None

    def transcript_path(self) -> Path | None:
        """The current session's transcript path (the file is created lazily)."""
        sid = self.session_id()
        return self.env.transcript_path(sid) if sid else None

    def transcript(self) -> list[dict[str, Any]]:
        """The current session's transcript records (complete lines only)."""
        path = self.transcript_path()
        return read_jsonl(path) if path else []

    def wait_user_record(self, text: str, timeout: float = 10.0) -> dict[str, Any]:
        """Wait until a ``user`` record whose content contains ``text`` is in the transcript
        (an interrupt marker, say); return that record."""
        return self.wait_until(
            lambda: next(
                (
                    r
                    for r in self.transcript()
                    if r.get("type") == "user" and text in str(r["message"].get("content"))
                ),
                None,
            ),
            timeout,
            what=f"a user record with {text!r} in the transcript",
        )


def _moved(cursor: Callable[[], int | None], start: int | None) -> bool:
    """The dialog's cursor is no longer where it was."""
    return cursor() != start
