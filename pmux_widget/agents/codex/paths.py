"""Where Codex keeps its files: ``$CODEX_HOME``, else ``~/.codex``. Nothing is created."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ENV_VAR", "CodexHome"]

ENV_VAR = "CODEX_HOME"


@dataclass(frozen=True)
class CodexHome:
    """Codex's home directory and the paths under it."""

    root: Path

    @classmethod
    def resolve(cls, path: str | os.PathLike[str] | None = None) -> CodexHome:
        """``path`` if given, else ``$CODEX_HOME``, else ``~/.codex``; made absolute, and its
        symlinks resolved when it exists (Codex canonicalizes its home: the keys of hooks'
        trust hold that path)."""
        if path is None:
            path = os.environ.get(ENV_VAR) or Path.home() / ".codex"
        root = Path(path).expanduser().absolute()
        if root.is_dir():
            root = root.resolve()
        return cls(root)

    @property
    def hooks_file(self) -> Path:
        """``hooks.json``: the user's hooks, Claude-style (``{"hooks": {Event: [groups]}}``)."""
        return self.root / "hooks.json"

    @property
    def config_file(self) -> Path:
        """``config.toml``: settings, and the trust of each hook (``[hooks.state."<key>"]``)."""
        return self.root / "config.toml"

    @property
    def sessions_dir(self) -> Path:
        """``sessions/YYYY/MM/DD/rollout-<ts>-<thread id>.jsonl``: the rollouts."""
        return self.root / "sessions"

    @property
    def daemon_pid_file(self) -> Path:
        """``app-server-daemon/daemon.pid``: the shared app-server daemon (JSON with its pid)."""
        return self.root / "app-server-daemon" / "daemon.pid"

    @property
    def installed(self) -> bool:
        """The home exists (Codex creates it on its first run)."""
        return self.root.is_dir()
