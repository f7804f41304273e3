"""Agent SDK runs offline, for ``notebooks/sdk_agents.ipynb``: the scripted model on loopback
and an environment for the CLI that ``claude-agent-sdk`` bundles, so that a notebook runs
agents from cells with no account and no network.

Under ``make demo`` (the demo's ``PMUX_DEMO_DIR``, ``CLAUDE_CONFIG_DIR`` and
``PMUX_WIDGET_HOME`` in the kernel's environment) the runs use the demo's config dir and hub
home, where our hooks are installed and the Jupyter server's hub (the side panel) looks:
their rows are in the panel with the demo's fleet. Elsewhere everything is sealed in a temp
dir of its own, our hooks installed there (your ``~/.claude`` is never touched).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pmux_widget.system.home import PmuxHome

from .claude_env import SDK_BUNDLED, ClaudeEnv
from .dirs import ENV_DIR
from .scripted_model import ScriptedModel

__all__ = ["SDK_CLI_VERSION", "OfflineSdk", "offline_sdk"]

#: The CLI the pinned claude-agent-sdk bundles (its runs are this version's).
SDK_CLI_VERSION = next(iter(SDK_BUNDLED))


@dataclass
class OfflineSdk:
    """The scripted model, the CLI's environment and the pmux-widget home its hooks reach."""

    model: ScriptedModel
    env: ClaudeEnv
    home: PmuxHome
    #: the runs are `make demo`'s (its homes), not a sealed temp dir's
    in_demo: bool

    @property
    def claude_dir(self) -> Path:
        return self.env.config_dir

    def stop(self) -> None:
        self.model.stop()


def offline_sdk() -> OfflineSdk:
    """Start the scripted model; the CLI's environment in the demo's homes under ``make demo``,
    else in a fresh temp dir (see the module doc)."""
    from pmux_widget import hooks

    demo = os.environ.get(ENV_DIR)
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    pmux = os.environ.get("PMUX_WIDGET_HOME")
    in_demo = bool(demo and config and pmux)
    model = ScriptedModel()
    model.start()
    try:
        if in_demo:
            assert demo is not None and config is not None and pmux is not None
            home = PmuxHome(Path(pmux)).ensure()
            env = ClaudeEnv(
                model.base_url, root=Path(demo) / "sdk", seed_files=True, version=SDK_CLI_VERSION
            )
            # the demo's config dir (with our hooks), not the env's own: seeded the same way
            env.config_dir = Path(config)
            env.extra_env["CLAUDE_CONFIG_DIR"] = config
            env._seed_state()
        else:
            root = Path(tempfile.mkdtemp(prefix="pmux-sdk-"))
            home = PmuxHome(root / "pmux").ensure()
            env = ClaudeEnv(model.base_url, root=root / "claude", version=SDK_CLI_VERSION)
            hooks.install(env.settings_file, home)  # what `pmux-widget install` does
        env.extra_env["PMUX_WIDGET_HOME"] = str(home.root)
    except BaseException:
        model.stop()
        raise
    return OfflineSdk(model, env, home, in_demo)
