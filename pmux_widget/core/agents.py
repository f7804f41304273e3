"""The agent CLIs a session can run in, and what the tracker must know of each: facts as data,
so the state machine stays one for both (issue 36). Recorded behaviour of Codex:
``docs/codex-behaviour.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["AGENTS", "DEFAULT_AGENT", "FACTS", "Agent", "AgentFacts", "agent_of"]

Agent = Literal["claude", "codex"]
AGENTS: tuple[Agent, ...] = get_args(Agent)
#: what a session is until a hook names another agent (Claude's hooks name none)
DEFAULT_AGENT: Agent = "claude"


@dataclass(frozen=True)
class AgentFacts:
    """What differs between the agents, for the tracker and for starting one."""

    #: its name in what we say ("Codex has no background sessions")
    title: str = "Claude Code"
    #: the program that starts an interactive session, and the variable that replaces it (a
    #: path or a command line, split as a shell would: tests point it at a pinned CLI)
    program: str = "claude"
    program_env: str = "PMUX_WIDGET_CLAUDE"
    #: it runs sessions of its own daemon's, in no terminal (``claude --bg``)
    background_sessions: bool = True
    #: it takes ``--permission-mode`` on its command line (Codex takes its own from its config)
    permission_modes: bool = True
    #: a hook's ``$TMUX_PANE`` is the session's own pane (Codex's shared daemon runs every
    #: TUI's hooks with the pane of the TUI that started it)
    hook_pane_is_its_own: bool = True
    #: a PreToolUse of one of these tools shows a question and waits for the answer (Codex's
    #: Plan-mode ``request_user_input`` fires no PermissionRequest)
    question_tools: frozenset[str] = frozenset()
    #: hook events that end a turn with no answer (Esc, an approval declined): idle
    interrupt_events: frozenset[str] = frozenset()
    #: its transcript is Claude Code's JSONL (Codex's rollout is read by its own reader)
    claude_transcript: bool = True
    #: a prompt sent to it may hold line breaks (Codex takes the text as a bracketed paste;
    #: Claude Code's prompt box would submit at the first one)
    multi_line_prompts: bool = False


FACTS: dict[Agent, AgentFacts] = {
    "claude": AgentFacts(),
    "codex": AgentFacts(
        title="Codex",
        program="codex",
        program_env="PMUX_WIDGET_CODEX",
        background_sessions=False,
        permission_modes=False,
        hook_pane_is_its_own=False,
        question_tools=frozenset({"request_user_input"}),
        interrupt_events=frozenset({"Interrupt"}),
        claude_transcript=False,
        multi_line_prompts=True,
    ),
}


def agent_of(text: object) -> Agent | None:
    """``text`` if it names a known agent, else None."""
    for agent in AGENTS:
        if text == agent:
            return agent
    return None
