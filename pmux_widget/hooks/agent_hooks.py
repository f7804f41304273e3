"""How our hooks go into each agent and come out again, behind one interface: the hooks' part
of the agent seam (``agents/seam.py`` holds the rest; this part writes files with hooks/'
tools, so it lives here). ``pmux-widget install`` and ``uninstall`` go through every agent
alike.

Claude Code's entries go into its ``settings.json`` (``install.py``); Codex's into its
``hooks.json`` with their trust in ``config.toml`` (``codex_install.py``). Both raise
:class:`~.settings_json.SettingsError` for a file they will not touch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from pmux_widget.agents.codex import CodexHome
from pmux_widget.core.agents import Agent
from pmux_widget.system.home import PmuxHome

from .codex_install import install_codex, uninstall_codex
from .install import install, uninstall

__all__ = ["AGENT_HOOKS", "AgentHooks"]


@dataclass(frozen=True)
class AgentHooks:
    """Our hooks in one agent."""

    agent: Agent
    #: a missing home is skipped with a note (the agent is optional here) rather than refused
    optional: bool
    #: (the agent's home, our home, create a missing home, the per-tool hooks too) → what
    #: was done, for humans
    install: Callable[[Path, PmuxHome, bool, bool], str]
    #: (the agent's home, our home) → what was done, for humans
    uninstall: Callable[[Path, PmuxHome], str]


def _install_claude(root: Path, home: PmuxHome, create: bool, tool_hooks: bool) -> str:
    return install(
        root / "settings.json", home, create_config_dir=create, tool_hooks=tool_hooks
    ).message


def _uninstall_claude(root: Path, home: PmuxHome) -> str:
    return uninstall(root / "settings.json", home).message


def _install_codex(root: Path, home: PmuxHome, create: bool, _tool_hooks: bool) -> str:
    # Codex's events are fixed (agents/codex/hooks_config.py): no per-tool option there.
    return install_codex(CodexHome.resolve(root), home, create=create).message


def _uninstall_codex(root: Path, home: PmuxHome) -> str:
    return uninstall_codex(CodexHome.resolve(root), home).message


AGENT_HOOKS: Mapping[Agent, AgentHooks] = MappingProxyType(
    {
        "claude": AgentHooks("claude", False, _install_claude, _uninstall_claude),
        "codex": AgentHooks("codex", True, _install_codex, _uninstall_codex),
    }
)
