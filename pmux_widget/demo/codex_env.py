"""Harness for the real Codex CLI, part one: the pinned version, installing it, and a sealed
environment to run it in (issue 36).

* :func:`ensure_codex` installs ``@openai/codex`` at :data:`CODEX_VERSION` once into
  ``<cache>/<version>/`` with npm (``$PMUX_CODEX_CACHE``, else ``.cache/codex`` of a source
  checkout, else ``~/.cache/pmux-widget/codex``) and returns the native binary (run directly:
  the npm package's ``bin/codex.js`` only starts it).
* :class:`CodexEnv` is a temporary ``HOME`` + ``CODEX_HOME`` + project folder whose
  ``config.toml`` points Codex at the scripted Responses API
  (:mod:`pmux_widget.demo.scripted_responses`), trusts the project (no trust screen) and asks
  for approvals (``on-request``); :meth:`CodexEnv.add_recorder_hooks` logs every hook payload
  to a JSONL file, with the hooks trusted as Codex itself would record it.

Nothing here touches the real ``~/.codex``: every path lives under the env's temp root.
:mod:`.codex_cli` runs the TUI in tmux and ends what it started.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pmux_widget.agents.codex import CodexHome, hook_key, trust_hash
from pmux_widget.agents.codex.app_server import hooks_list

from .claude_env import (
    CliUnavailable,
    HookRecorder,
    _base_env,
    npm_install,
    pinned_cache,
    version_output,
)

__all__ = [
    "CODEX_EVENTS",
    "CODEX_PACKAGE",
    "CODEX_VERSION",
    "CodexEnv",
    "codex_version",
    "default_codex_cache",
    "ensure_codex",
]

CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.171.0"
"""The pinned Codex CLI the real-Codex suite runs against (``../shared/reference/codex.md``)."""

CODEX_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "Interrupt",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
)
"""The hook events Codex 0.171.0 accepts (the recorder subscribes to all of them)."""


def default_codex_cache() -> Path:
    """``$PMUX_CODEX_CACHE``; else ``<checkout>/.cache/codex`` from a source checkout; else
    ``~/.cache/pmux-widget/codex``."""
    return pinned_cache("PMUX_CODEX_CACHE", "codex")


def codex_version(binary: str | os.PathLike[str], timeout: float = 60.0) -> str | None:
    """The version ``binary --version`` prints (``codex-cli 0.171.0`` → ``0.171.0``), run in a
    throw-away home (even ``--version`` creates ``~/.codex`` otherwise)."""
    out = version_output(binary, "CODEX_HOME", "pmux-codex-version-", timeout)
    m = re.search(r"(\d+\.\d+\.\d+)", out) if out is not None else None
    return m.group(1) if m else None


def _native(prefix: Path) -> list[Path]:
    machine = os.uname().machine
    arch = "x86_64" if machine in ("x86_64", "amd64") else "aarch64"
    plat = "x64" if arch == "x86_64" else "arm64"
    nm = prefix / "node_modules" / "@openai"
    return [
        nm / f"codex-linux-{plat}" / "vendor" / f"{arch}-unknown-linux-musl" / "bin" / "codex",
        nm / "codex" / "vendor" / f"{arch}-unknown-linux-musl" / "codex" / "codex",
    ]


def ensure_codex(
    version: str = CODEX_VERSION,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout: float = 900.0,
) -> Path:
    """A working native ``codex`` binary of ``version``, installed with npm when needed.

    ``$PMUX_CODEX_CLI`` (a path to a binary) wins when it prints ``version``. A file lock
    makes concurrent callers install once. Raises :class:`CliUnavailable` with the reason.
    """
    override = os.environ.get("PMUX_CODEX_CLI")
    if override:
        found = codex_version(override)
        if found != version:
            raise CliUnavailable(
                f"PMUX_CODEX_CLI={override}: --version gave {found!r}, expected {version}"
            )
        return Path(override)
    prefix = (Path(cache_dir).expanduser() if cache_dir else default_codex_cache()) / version
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for attempt in range(2):
            for candidate in _native(prefix):
                if candidate.is_file() and codex_version(candidate) == version:
                    return candidate
            if attempt == 0:
                npm_install(prefix, f"{CODEX_PACKAGE}@{version}", "the Codex CLI", timeout)
    raise CliUnavailable(f"installed {CODEX_PACKAGE}@{version} under {prefix}, but no binary runs")


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (JSON's escapes are TOML's for these characters)."""
    return json.dumps(text)


class CodexEnv(HookRecorder):
    """A sealed environment for Codex runs against the scripted Responses API.

    Layout under ``root`` (a fresh temp dir unless given)::

        home/             HOME
        home/.codex/      CODEX_HOME (config.toml, hooks.json, sessions/, the daemon's files)
        home/project/     the working directory (trusted in config.toml), with README.md
        hooks.jsonl       hook payloads, when add_recorder_hooks() was called
    """

    def __init__(
        self,
        base_url: str,
        root: str | os.PathLike[str] | None = None,
        *,
        extra_env: Mapping[str, str] | None = None,
        notify: Iterable[str] | None = None,
    ) -> None:
        self._own_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="pmux-codex-")).resolve()
        self.home = self.root / "home"
        self.codex_home = CodexHome(self.home / ".codex")
        self.cwd = self.home / "project"
        for d in (self.home, self.codex_home.root, self.cwd):
            d.mkdir(parents=True, exist_ok=True)
        self.base_url = base_url
        self.extra_env = dict(extra_env or {})
        self.hooks_log: Path | None = None
        (self.cwd / "README.md").write_text("# Demo project\n\nHello from the README.\n")
        lines = [
            'model = "mock-model"',
            'model_provider = "mock"',
            'approval_policy = "on-request"',
            'sandbox_mode = "read-only"',
        ]
        if notify is not None:
            lines.append("notify = [" + ", ".join(_toml_string(a) for a in notify) + "]")
        lines += [
            "",
            "[model_providers.mock]",
            'name = "Mock"',
            f"base_url = {_toml_string(base_url)}",
            'wire_api = "responses"',
            'env_key = "MOCK_API_KEY"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
            f"[projects.{_toml_string(str(self.cwd))}]",
            'trust_level = "trusted"',
        ]
        self.config_file.write_text("\n".join(lines) + "\n")

    @property
    def config_file(self) -> Path:
        return self.codex_home.config_file

    @property
    def hooks_file(self) -> Path:
        return self.codex_home.hooks_file

    def env(self) -> dict[str, str]:
        """The complete environment for a Codex process (nothing inherited but PATH/locale)."""
        return {
            **_base_env(),
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home.root),
            "MOCK_API_KEY": "sk-mock",
            **self.extra_env,
        }

    # ---- hooks

    def hooks_doc(self) -> dict[str, Any]:
        """``hooks.json`` as a document (``{"hooks": {}}`` when there is none)."""
        try:
            data = json.loads(self.hooks_file.read_text())
        except FileNotFoundError:
            return {"hooks": {}}
        return data if isinstance(data, dict) else {"hooks": {}}

    def add_hook(
        self, events: Iterable[str], command: str, timeout: int = 5, matcher: str | None = None
    ) -> None:
        """Append a command hook group for every event in ``events`` to ``hooks.json`` and
        trust it in ``config.toml`` (its key and hash as Codex computes them)."""
        doc = self.hooks_doc()
        hooks = doc.setdefault("hooks", {})
        trusted = []
        for event in events:
            hook = {"type": "command", "command": command, "timeout": timeout}
            group: dict[str, Any] = {"hooks": [hook]}
            if matcher is not None:
                group["matcher"] = matcher
            groups = hooks.setdefault(event, [])
            key = hook_key(str(self.hooks_file), event, len(groups), 0)
            groups.append(group)
            trusted.append((key, trust_hash(event, hook, matcher)))
        self.hooks_file.write_text(json.dumps(doc, indent=2) + "\n")
        with self.config_file.open("a") as f:
            for key, digest in trusted:
                f.write(
                    f"\n[hooks.state.{_toml_string(key)}]\ntrusted_hash = {json.dumps(digest)}\n"
                )

    def add_recorder_hooks(self, events: Iterable[str] = CODEX_EVENTS) -> Path:
        """Log every payload of ``events`` to ``<root>/hooks.jsonl`` (with the hook's receive
        time, parent pid and ``$TMUX_PANE``); return that path."""
        return self._record_hooks(events)

    def listed_hooks(self, codex: str | os.PathLike[str]) -> list[dict[str, Any]]:
        """What the real binary's ``app-server`` says of the hooks (``hooks/list``)."""
        return hooks_list(codex, self.codex_home.root, self.cwd, env=self.env())

    # ---- files Codex writes

    def rollouts(self) -> list[Path]:
        """``sessions/**/rollout-*.jsonl``, oldest first."""
        return sorted(self.codex_home.sessions_dir.rglob("rollout-*.jsonl"))

    def daemon_info(self) -> dict[str, Any] | None:
        """``app-server-daemon/daemon.pid`` parsed, or None."""
        try:
            data = json.loads(self.codex_home.daemon_pid_file.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def cleanup(self) -> None:
        """Remove the temp root if this env created it (end the processes first)."""
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)
