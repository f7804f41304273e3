"""Our own home directory (``$PMUX_WIDGET_HOME``, else ``~/.pmux_widget``) and what it holds.

```
hooks/status-hook.sh   the hook script Claude Code runs
hooks/hooks.json       hooks for ``claude --settings`` (install --settings-file)
token                  shared secret of the hook script and the hubs (0600)
runtime/<hub-id>.json  one file per live hub: {"pid", "port", ...} (0600)
spool/                 hooks fired while no hub ran, replayed by the next hub
state.db               the SQLite store
```
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from .files import atomic_write

__all__ = ["PmuxHome"]

ENV_VAR = "PMUX_WIDGET_HOME"


@dataclass(frozen=True)
class PmuxHome:
    """Paths under pmux-widget's home. Nothing is created until :meth:`ensure`."""

    root: Path

    @classmethod
    def resolve(cls, home: str | os.PathLike[str] | None = None) -> PmuxHome:
        """``home`` if given, else ``$PMUX_WIDGET_HOME``, else ``~/.pmux_widget``."""
        if home is None:
            home = os.environ.get(ENV_VAR) or Path.home() / ".pmux_widget"
        return cls(Path(home).expanduser().absolute())

    @property
    def hooks_dir(self) -> Path:
        return self.root / "hooks"

    @property
    def hook_script(self) -> Path:
        return self.hooks_dir / "status-hook.sh"

    @property
    def hooks_json(self) -> Path:
        return self.hooks_dir / "hooks.json"

    @property
    def token_file(self) -> Path:
        return self.root / "token"

    @property
    def runtime_dir(self) -> Path:
        return self.root / "runtime"

    @property
    def spool_dir(self) -> Path:
        return self.root / "spool"

    @property
    def decisions_dir(self) -> Path:
        """``decisions/<session id>.json``: which hub holds an Agent SDK run's waiting call
        (runtime.decisions publishes them; the notifier reads them: someone can answer)."""
        return self.root / "decisions"

    @property
    def db_path(self) -> Path:
        return self.root / "state.db"

    def ensure(self) -> PmuxHome:
        """Create the directories (0700) if missing."""
        for directory in (self.root, self.hooks_dir, self.runtime_dir, self.spool_dir):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        return self

    def token(self) -> str:
        """The shared token (32 random bytes, hex), created with mode 0600 on first use."""
        path = self.token_file
        try:
            value = path.read_text().strip()
            if value:
                return value
        except FileNotFoundError:
            pass
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        value = secrets.token_hex(32)
        # Create-only: if another process made the token first, keep theirs.
        if not atomic_write(path, (value + "\n").encode(), 0o600, exclusive=True):
            value = path.read_text().strip()
        return value
