"""The seam between the house and the agent CLIs: one :class:`AgentSeam` per agent, looked up
by a session's ``agent`` (``seam_of(session.agent)``) wherever code would otherwise ask
``if agent == "codex"``.

An agent's seam says where its files are (its home), how its processes are recognised (a pid
that is the agent's own, not a helper, a daemon or a reused pid) and how its screen reads
(its dialogs, a running turn, its prompt box), and carries what the tracker knows of it
(``core.agents.AgentFacts``: pure data, so the one state machine serves both). The layers
above keep their part per agent in tables keyed the same way: how its hooks install
(``hooks/install.py``, ``hooks/codex_install.py``) and which keys answer it
(``runtime/actions.py``, ``runtime/codex_actions.py``).

``claude/`` and ``codex/`` never import each other; this module is the one place that knows
both.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from pmux_widget.agents.claude import screen as claude_screen
from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.agents.codex import screen as codex_screen
from pmux_widget.agents.codex.paths import CodexHome
from pmux_widget.agents.codex.tui import is_tui_pid
from pmux_widget.core.agents import FACTS, Agent, AgentFacts
from pmux_widget.system import processes

__all__ = ["SEAMS", "AgentHome", "AgentSeam", "ChoiceView", "DialogView", "ScreenView", "seam_of"]


class AgentHome(Protocol):
    """Where an agent keeps its files (``ClaudeHome``, ``CodexHome``)."""

    @property
    def root(self) -> Path: ...

    @property
    def installed(self) -> bool: ...


class ChoiceView(Protocol):
    """One choice of a dialog, as every agent's screen reader gives it."""

    @property
    def index(self) -> int: ...

    @property
    def label(self) -> str: ...

    @property
    def selected(self) -> bool: ...


class DialogView(Protocol):
    """A dialog on an agent's screen: what it asks, its choices by label, its fingerprint."""

    @property
    def kind(self) -> str: ...

    @property
    def question(self) -> str: ...

    @property
    def choices(self) -> Sequence[ChoiceView]: ...

    @property
    def fingerprint(self) -> str: ...


class ScreenView(Protocol):
    """What an agent's screen shows: a dialog, a running turn, its prompt box's text (None
    when no prompt box shows)."""

    @property
    def dialog(self) -> DialogView | None: ...

    @property
    def busy(self) -> bool: ...

    @property
    def prompt_text(self) -> str | None: ...


@dataclass(frozen=True)
class AgentSeam:
    """One agent CLI, as the rest of the house sees it."""

    agent: Agent
    #: what the tracker and the launcher know of it (pure data)
    facts: AgentFacts
    #: its home: the given path, else its variable, else its default (nothing is created)
    home: Callable[[str | os.PathLike[str] | None], AgentHome]
    #: ``pid`` is the agent's own process (the one a session's liveness follows)
    is_own_process: Callable[[int], bool]
    #: what a capture of its terminal shows (pure: text in, facts out)
    parse_screen: Callable[[str], ScreenView]


def _is_claude(pid: int) -> bool:
    return processes.claude_ancestor(pid) == pid


SEAMS: Mapping[Agent, AgentSeam] = MappingProxyType(
    {
        "claude": AgentSeam(
            agent="claude",
            facts=FACTS["claude"],
            home=ClaudeHome.resolve,
            is_own_process=_is_claude,
            parse_screen=claude_screen.parse_screen,
        ),
        "codex": AgentSeam(
            agent="codex",
            facts=FACTS["codex"],
            home=CodexHome.resolve,
            is_own_process=is_tui_pid,  # the TUI that shows it, never the shared daemon
            parse_screen=codex_screen.parse_screen,
        ),
    }
)


def seam_of(agent: Agent) -> AgentSeam:
    """The seam of ``agent``."""
    return SEAMS[agent]
