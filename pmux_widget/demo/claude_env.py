"""Harness for the real Claude Code CLI, part one: the pinned versions, installing them, and a
sealed environment to run them in.

Why: pmux-widget watches Claude Code's hooks, PID files and transcripts. Guessing their shapes
and order is how monitors go wrong, so tests and the demo run the *real* CLI
(``@anthropic-ai/claude-code``, pinned to the versions of :data:`CLI_VERSIONS`) against the
scripted model (:mod:`pmux_widget.demo.scripted_model`); :mod:`.claude_cli` drives it in tmux.

* :func:`ensure_cli` installs a pinned version once into its own folder of a cache (versions
  side by side) with npm and returns the binary.
* :class:`ClaudeEnv` is a temporary ``HOME`` + ``CLAUDE_CONFIG_DIR`` + project folder, seeded
  so the CLI starts without onboarding, API-key or folder-trust dialogs, optionally with hooks
  (e.g. :meth:`ClaudeEnv.add_recorder_hooks`, which logs every hook payload to a JSONL file).
* :func:`wait_until` and :func:`read_jsonl`: polling with deadlines, and torn-line-safe reads.

Nothing here touches the real ``~/.claude``: every path lives under the env's temp root.

Over the house's ~500 lines on purpose: :class:`ClaudeEnv` (190 of them) is one sealed
environment, whose settings, hooks and seeded dialogs must agree; the rest is what it needs
(the pinned versions, installing them).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pmux_widget.agents.claude.paths import encode_project_dir  # the CLI's rule, one copy

__all__ = [
    "ALL_HOOK_EVENTS",
    "CLI_PACKAGE",
    "CLI_VERSION",
    "CLI_VERSIONS",
    "NEWEST",
    "OLDEST",
    "SDK_BUNDLED",
    "ClaudeEnv",
    "CliUnavailable",
    "HookRecorder",
    "auto_mode_default",
    "default_cache_dir",
    "encode_project_dir",
    "ensure_cli",
    "npm_error",
    "npm_install",
    "pinned_cache",
    "read_jsonl",
    "version_key",
    "version_output",
    "wait_until",
]

CLI_PACKAGE = "@anthropic-ai/claude-code"
CLI_VERSIONS: tuple[str, ...] = ("2.1.197", "2.1.332", "2.1.337")
"""The pinned CLI versions the real-CLI suite runs against, oldest first: the oldest release
we support, the newest npm served at the last upgrade (``python -m devtools.upgrade_cli``),
and the one the pinned Agent SDK bundles (:data:`SDK_BUNDLED`), newer than npm serves here."""
SDK_PACKAGE = "claude-agent-sdk"
SDK_BUNDLED: dict[str, str] = {"2.1.337": "0.2.190"}
"""CLI versions that come from the Agent SDK's wheel (``claude_agent_sdk/_bundled/claude``),
not from npm: CLI version → the SDK release that bundles it (pyproject's test extra pins it)."""
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
    return pinned_cache("PMUX_CLAUDE_CACHE", "claude-code")


def pinned_cache(env_var: str, name: str) -> Path:
    """``$env_var`` if set; else ``<checkout>/.cache/<name>`` from a source checkout (a
    ``pyproject.toml`` next to the package); else ``~/.cache/pmux-widget/<name>``."""
    env = os.environ.get(env_var)
    if env:
        return Path(env).expanduser()
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        return checkout / ".cache" / name
    return Path.home() / ".cache" / "pmux-widget" / name


def cli_version(binary: str | os.PathLike[str], timeout: float = 60.0) -> str | None:
    """The version ``binary --version`` prints (e.g. ``2.1.197``), or None if it fails."""
    out = version_output(binary, "CLAUDE_CONFIG_DIR", "pmux-claude-version-", timeout)
    m = re.match(r"\s*(\d+\.\d+\.\d+)", out) if out is not None else None
    return m.group(1) if m else None


def version_output(
    binary: str | os.PathLike[str], home_var: str, prefix: str, timeout: float
) -> str | None:
    """What ``binary --version`` prints, None when it fails; run in a throw-away home that is
    also ``$home_var`` (its config dir): even ``--version`` may write one otherwise."""
    try:
        with tempfile.TemporaryDirectory(prefix=prefix) as home:
            proc = subprocess.run(
                [os.fspath(binary), "--version"],
                capture_output=True,
                text=True,
                timeout=timeout,
                env={**_base_env(), "HOME": home, home_var: home},
                check=False,
            )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


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


def npm_error(output: str, keep: int = 6) -> str:
    """npm's words for why it failed, on one line: its code, message and log, without the
    stack trace and the error object's fields (the last lines alone were ``requiredBy: '.'``
    and ``}``)."""
    said = []
    for raw in output.splitlines():
        line = raw.removeprefix("npm error").removeprefix("npm ERR!")
        if not line.strip() or line.startswith("  ") or line.strip().startswith(("at ", "{", "}")):
            continue
        if re.match(r"\s*(syscall|errno) ", line):
            continue
        said.append(line.strip())
    return " | ".join(said[:keep] + said[keep:][-1:]) or output.strip()[-500:]


def npm_install(prefix: Path, spec: str, what: str, timeout: float = 900.0) -> None:
    """``npm install <spec>`` into its own prefix (a ``package.json`` is made when missing).

    Raises :class:`CliUnavailable` with npm's words when npm is missing or fails.
    """
    npm = shutil.which("npm")
    if npm is None:
        raise CliUnavailable(f"npm is not on PATH; cannot install {what}")
    if not (prefix / "package.json").exists():
        (prefix / "package.json").write_text('{"private": true}\n')
    cmd = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--no-save",
        # Since 2.1.198 the Claude Code package asks for Node >= 22; the CLIs are native
        # binaries, so an older Node installs them fine (npm only warns).
        "--engine-strict=false",
        "--prefix",
        str(prefix),
        spec,
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CliUnavailable(f"npm install failed: {exc}") from exc
    if proc.returncode != 0:
        raise CliUnavailable("npm install failed: " + npm_error(proc.stderr or proc.stdout))


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
    if version in SDK_BUNDLED:
        return _ensure_bundled(version, prefix, timeout)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found_bin = _working((prefix, root), version)
        if found_bin:
            return found_bin
        npm_install(prefix, f"{CLI_PACKAGE}@{version}", "the Claude Code CLI", timeout)
        found_bin = _working((prefix,), version)
        if found_bin:
            return found_bin
    raise CliUnavailable(f"installed {CLI_PACKAGE}@{version} under {prefix}, but no binary runs")


def _bundled_in(site: Path) -> Path:
    return site / "claude_agent_sdk" / "_bundled" / "claude"


def _ensure_bundled(version: str, prefix: Path, timeout: float) -> Path:
    """The CLI the Agent SDK's wheel bundles: the SDK installed in this interpreter when it is
    that release, else the wheel unpacked (``pip install --target``, no dependencies) into
    ``prefix/sdk``; the wheel's binary is the whole CLI (a native program)."""
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec("claude_agent_sdk")  # the test extra pins it
        if spec is not None and spec.origin:
            here = _bundled_in(Path(spec.origin).parent.parent)
            _make_bundled_executable(here)
            if here.is_file() and cli_version(here) == version:
                return here
    target = prefix / "sdk"
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        binary = _bundled_in(target)
        _make_bundled_executable(binary)
        if binary.is_file() and cli_version(binary) == version:
            return binary
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--upgrade",
            "--target",
            str(target),
            f"{SDK_PACKAGE}=={SDK_BUNDLED[version]}",
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CliUnavailable(f"pip install failed: {exc}") from exc
        if proc.returncode != 0:
            said = (proc.stderr or proc.stdout).strip().splitlines()
            raise CliUnavailable("pip install failed: " + " | ".join(said[-3:]))
        _make_bundled_executable(binary)
        if binary.is_file() and cli_version(binary) == version:
            return binary
    raise CliUnavailable(
        f"installed {SDK_PACKAGE}=={SDK_BUNDLED[version]} under {target}, "
        f"but its bundled CLI is not {version}"
    )


def _make_bundled_executable(binary: Path) -> None:
    with contextlib.suppress(OSError):
        if binary.is_file() and not os.access(binary, os.X_OK):
            binary.chmod(binary.stat().st_mode | 0o111)


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


class HookRecorder:
    """The hook recorder of a sealed environment (Claude's or Codex's): each registers
    :data:`RECORDER_SCRIPT` with its own ``add_hook``, and reads the same ``hooks.jsonl``."""

    root: Path
    hooks_log: Path | None

    def add_hook(self, events: Iterable[str], command: str, timeout: int = 5) -> None:
        raise NotImplementedError

    def _record_hooks(self, events: Iterable[str]) -> Path:
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


class ClaudeEnv(HookRecorder):
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
        return self._record_hooks(events)

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
