"""Where ``make demo`` keeps everything: the demo dir (``--dir``, else ``$PMUX_DEMO_DIR``, else
``<checkout>/.demo``) and the folders in it, and the notebook it opens.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

__all__ = ["CHECKOUT", "ENV_DIR", "NOTEBOOK", "SDK_NOTEBOOK", "DemoDirs", "default_demo_dir"]

ENV_DIR = "PMUX_DEMO_DIR"
CHECKOUT = Path(__file__).resolve().parents[2]
NOTEBOOK = CHECKOUT / "notebooks" / "demo.ipynb"
#: Agents run from cells with the Agent SDK, answered from the panel (beside demo.ipynb)
SDK_NOTEBOOK = CHECKOUT / "notebooks" / "sdk_agents.ipynb"


def default_demo_dir() -> Path:
    """``$PMUX_DEMO_DIR``, else ``<checkout>/.demo`` (source checkout), else a cache dir."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env).expanduser().absolute()
    if (CHECKOUT / "pyproject.toml").is_file():
        return CHECKOUT / ".demo"
    return Path.home() / ".cache" / "pmux-widget" / "demo"


class DemoDirs:
    """The paths under the demo dir (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()
        self.claude = self.root / "claude"
        #: the demo's CODEX_HOME (its simulated Codex session's hooks, trust and rollouts)
        self.codex = self.root / "codex"
        self.pmux = self.root / "pmux"
        self.projects = self.root / "projects"
        self.jupyter = self.root / "jupyter"
        self.notebooks = self.root / "notebooks"

    def env(self) -> dict[str, str]:
        """What every process of the demo gets: the demo's Claude, Codex and pmux-widget
        homes."""
        return {
            "CLAUDE_CONFIG_DIR": str(self.claude),
            "CODEX_HOME": str(self.codex),
            "PMUX_WIDGET_HOME": str(self.pmux),
            ENV_DIR: str(self.root),
        }

    def prepare(self) -> bool:
        """Create the dirs, reset old session state, install the hooks. True if reset."""
        from pmux_widget import hooks
        from pmux_widget.agents.codex import CodexHome
        from pmux_widget.system.home import PmuxHome

        home = PmuxHome(self.pmux)
        in_use = bool(self.pmux.is_dir() and hooks.live_hubs(home))
        if not in_use:  # a hub of yours is reading it right now (--no-lab): keep it
            for name in ("state.db", "state.db-wal", "state.db-shm"):
                with contextlib.suppress(FileNotFoundError):
                    (self.pmux / name).unlink()
            for sub in (self.pmux / "spool", self.pmux / "runtime"):
                shutil.rmtree(sub, ignore_errors=True)
            stale = ("projects", "sessions")
            for sub in (*(self.claude / n for n in stale), self.codex / "sessions"):
                shutil.rmtree(sub, ignore_errors=True)
        for directory in (
            self.claude / "projects",
            self.codex,
            self.projects,
            self.jupyter,
            self.notebooks,
        ):
            directory.mkdir(parents=True, exist_ok=True)
        hooks.install(self.claude / "settings.json", home.ensure())
        # Codex's trust keys hold its home's real path (CodexHome.resolve, as Codex does)
        hooks.install_codex(CodexHome.resolve(self.codex), home)
        return not in_use


# ============================================================================ JupyterLab
