"""The hook rules: what each Claude Code hook (SessionStart … SessionEnd) does to a session.

Hooks are the richest signal: they decide the state of every session that sends them, and a
hook older than the state's decision may only move order-free counters (sub-agents).
"""

from __future__ import annotations

import dataclasses

from . import signals as sig
from . import tool_pairs
from .agents import FACTS
from .model import Session, State, Tracking, clip, source_text
from .question import QUESTION_TOOL, question_of
from .rules_background import from_agent_view, keeps_its_status, stop
from .summaries import summarize_tool
from .transitions import (
    StepEdits,
    because,
    compaction_over,
    end,
    finished,
    interactive_of,
    move,
    named,
    project_of,
    retire_others,
    track,
)

_NEEDS_INPUT_NOTIFICATIONS = frozenset(
    # agent_needs_input (2.1.332): auto mode's "can't check actions" dialog, which fires no
    # PermissionRequest (recorded: tests/fixtures/real/2.1.332/auto_blocked)
    {"permission_prompt", "worker_permission_prompt", "agent_needs_input"}
)
#: A prompt the CLI submits itself when a background task ends (2.1.332), not the user's.
_TASK_NOTIFICATION = "<task-notification>"
_SWITCH_SOURCES = frozenset({"startup", "resume", "clear"})
_KEEP_ID_END_REASONS = frozenset({"clear", "resume"})


def on_hook(step: StepEdits, signal: sig.HookSignal) -> None:
    at = signal.at
    session = step.get(signal.session_id)
    if from_agent_view(session, signal) or (session is not None and session.tracking.spare):
        return  # an agent view's notification, or a spare worker's hook: never a row
    if session is None:
        session = Session(
            session_id=signal.session_id,
            state=State.IDLE,
            state_since=at,
            source=source_text("hook", signal.event_name),
            tracking=Tracking(first_seen=step.now, cause="hook"),
        )
    t = session.tracking
    # older than what decided the state, or a PreToolUse whose tool call is already over
    stale = at < t.decided_at or tool_pairs.overtaken(t, signal)
    if stale and _ends_the_turn_the_pid_file_closed(session, signal):
        signal = dataclasses.replace(signal, at=t.decided_at)  # the turn's end, known now
        at, stale = signal.at, False
    t = t.replace(last_hook_at=max(t.last_hook_at, at), active_at=max(t.active_at, at))
    t = tool_pairs.remember(t, signal)
    s = session
    if not stale and not isinstance(signal, sig.SessionEnd):
        s = s.replace(running=True)  # a hook is proof of life
        t = t.replace(ended=False, gone_checks=0)
    agent = signal.agent or session.agent
    # a background worker's TMUX_PANE is its daemon's; so is every Codex hook's (its shared
    # app-server daemon runs every TUI's hooks with the pane of the TUI that started it)
    if signal.pane and session.background is None and FACTS[agent].hook_pane_is_its_own:
        t = t.replace(pane=signal.pane)
    if signal.entrypoint and t.interactive is None:  # a PID file's entrypoint and kind win
        t = t.replace(interactive=interactive_of(signal.entrypoint), entrypoint=signal.entrypoint)
    s = track(s, t)
    if signal.cwd:
        s = s.replace(cwd=signal.cwd)
    if signal.transcript_path:
        s = s.replace(transcript_path=signal.transcript_path)
    s = named(s, signal.project or project_of(signal.cwd))
    if signal.pid is not None:
        s = s.replace(pid=signal.pid)
    if signal.permission_mode and not stale:
        s = s.replace(permission_mode=signal.permission_mode)
    if agent != s.agent:
        s = s.replace(agent=agent)

    # A hook that happened before what we already know may only move order-free counters,
    # or say what the open dialog asks.
    if not stale:
        s = _apply_hook(step, s, signal)
    elif _words_of_the_open_dialog(s, signal):
        assert isinstance(signal, sig.PermissionRequest)
        s = _asking(s, signal)
    else:
        s = _apply_counters(s, signal)
    step.put(s)
    step.notify(s, signal.live)


def _ends_the_turn_the_pid_file_closed(s: Session | None, signal: sig.HookSignal) -> bool:
    """A Stop that happened during the turn the PID file's ``idle`` just closed, arriving
    after it. The PID file read that idle as a dismissed dialog, or a turn with no answer;
    but no Stop follows an Esc or a "No", so this turn ran to its end. Without per-tool
    hooks (issue 28) nothing else says a dialog was approved when the CLI's short ``busy``
    went unseen."""
    if s is None or not isinstance(signal, sig.Stop) or signal.from_subagent:
        return False  # StopFailure is a Stop too
    t = s.tracking
    return (
        s.state is State.IDLE
        and t.cause == "pid:idle"
        and 0 < t.turn_started_at <= signal.at
        and t.asked_at <= signal.at
    )


#: The tool whose call runs a sub-agent (both pinned CLIs).
AGENT_TOOL = "Agent"


def _agent_call(s: Session, signal: sig.SubagentStart | sig.SubagentStop) -> Session:
    """While its sub-agents run, the parent's current tool is the call that started them.
    Without PreToolUse (issue 28) only the transcript's record of that call says so, and a
    short sub-agent can be over before that record is read: SubagentStart says it first."""
    at = signal.at
    if at < s.tracking.tool_at:
        return s
    if isinstance(signal, sig.SubagentStart) and s.state is State.BUSY and not s.current_tool:
        summary = f"{signal.agent_type} agent" if signal.agent_type else None
        return s.replace(
            current_tool=AGENT_TOOL,
            tool_summary=summary,
            tracking=s.tracking.replace(tool_at=at),
        )
    if isinstance(signal, sig.SubagentStop) and not s.subagents and s.current_tool == AGENT_TOOL:
        return s.replace(
            current_tool=None, tool_summary=None, tracking=s.tracking.replace(tool_at=at)
        )
    return s


def _words_of_the_open_dialog(s: Session, signal: sig.HookSignal) -> bool:
    """A PermissionRequest that arrives after the PID file's ``waiting`` (or a Notification)
    made the row needs-input, though sent before: the CLI fires it before it draws the
    dialog, and under load its POST lands after the PID file was read. It is the words of
    that very dialog when it was sent in the turn (or after the approval) that led to it:
    without it the row would say "AskUserQuestion", never the question (ci, 2.1.337)."""
    return (
        isinstance(signal, sig.PermissionRequest)
        and not signal.from_subagent
        and s.state is State.NEEDS_INPUT
        and signal.at >= s.tracking.turn_started_at
    )


def _asking(s: Session, signal: sig.PermissionRequest) -> Session:
    """What a PermissionRequest says the dialog asks: the tool, its summary, the question."""
    return s.replace(
        current_tool=signal.tool_name or None,
        tool_summary=summarize_tool(signal.tool_name, signal.tool_input),
        question=question_of(signal.tool_name, signal.tool_input),
        tracking=s.tracking.replace(tool_at=max(s.tracking.tool_at, signal.at)),
    )


def _apply_counters(s: Session, signal: sig.HookSignal) -> Session:
    # Counted by agent id: compaction fires a SubagentStop that no SubagentStart matched.
    agent = signal.agent_id
    running = s.tracking.subagent_ids
    if isinstance(signal, sig.SubagentStart) and agent and agent not in running:
        ids = (*running, agent)
    elif isinstance(signal, sig.SubagentStop) and agent in running:
        ids = tuple(a for a in running if a != agent)
    else:
        return s
    return s.replace(subagents=len(ids), tracking=s.tracking.replace(subagent_ids=ids))


def _apply_hook(step: StepEdits, s: Session, signal: sig.HookSignal) -> Session:
    at = signal.at
    event = signal.event_name
    sub = signal.from_subagent
    facts = FACTS[s.agent]

    if isinstance(signal, sig.SessionStart):
        if signal.model:
            s = s.replace(model=signal.model)
        if signal.source == "compact":  # fired once the compaction is done
            return compaction_over(s)
        if signal.source not in _SWITCH_SOURCES:  # mid-turn: nothing moves
            return s
        if not sub:
            # a background worker's pane is whatever its daemon inherited: not its own
            own_pane = signal.pane if s.background is None else None
            pane = own_pane if signal.source in ("clear", "resume") else None
            retire_others(step, s.session_id, signal.pid or s.pid, pane, at)
        s = s.replace(
            compacting=False,
            subagents=0,
            current_tool=None,
            tool_summary=None,
            error=None,
            background_tasks=(),
            tracking=s.tracking.replace(subagent_ids=()),
        )
        if keeps_its_status(step.get(s.session_id), signal):
            return s  # a respawned worker at work: its PID file said so first
        return move(s, State.IDLE, "hook", at, event)

    if isinstance(signal, sig.UserPromptSubmit) and _woken_by_task(signal.prompt):
        # The CLI woke itself for a finished background task: busy again, but it is not the
        # user's prompt (last_prompt keeps theirs) and no one is notified of a wake-up.
        s = s.replace(
            current_tool=None,
            tool_summary=_task_summary(signal.prompt or ""),
            tracking=s.tracking.replace(tool_at=at),
        )
        return move(s, State.BUSY, "hook", at, event)

    if isinstance(signal, sig.UserPromptSubmit):
        s = s.replace(
            last_prompt=clip(signal.prompt) or s.last_prompt,
            error=None,
            current_tool=None,
            tool_summary=None,
            tracking=s.tracking.replace(error_detail=None, tool_at=at, prompt_at=at),
        )
        return move(s, State.BUSY, "hook", at, event)

    if isinstance(signal, sig.PreToolUse):
        if not sub:
            s = s.replace(
                current_tool=signal.tool_name or None,
                tool_summary=summarize_tool(signal.tool_name, signal.tool_input),
                tracking=s.tracking.replace(tool_at=at),
            )
        if signal.tool_name in facts.question_tools and not sub:
            # Codex's request_user_input takes AskUserQuestion's form (questions, each with
            # its question, header and labelled options): the row says what it asks
            s = s.replace(question=question_of(QUESTION_TOOL, signal.tool_input))
            return move(s, State.NEEDS_INPUT, "hook", at, event)  # its PostToolUse: busy
        if s.state in (State.IDLE, State.UNKNOWN):
            return move(s, State.BUSY, "hook", at, event)
        return s

    if isinstance(signal, sig.PermissionRequest):
        return move(_asking(s, signal), State.NEEDS_INPUT, "hook", at, event)

    if isinstance(signal, sig.Notification):
        # Old CLIs sent no type: then any Notification meant a dialog. A CLI whose PID file
        # reports statuses types every notification, and says "waiting" itself for a dialog:
        # an untyped one from it is not a dialog.
        untyped_dialog = signal.notification_type is None and s.tracking.pid_status is None
        if untyped_dialog or signal.notification_type in _NEEDS_INPUT_NOTIFICATIONS:
            if s.state is not State.NEEDS_INPUT and signal.message:
                s = track(s, s.tracking.replace(waiting_for=clip(signal.message)))
            return move(s, State.NEEDS_INPUT, "hook", at, event)
        return s

    if isinstance(signal, sig.PostToolUse):  # also PostToolUseFailure
        if not sub:
            s = s.replace(
                current_tool=None, tool_summary=None, tracking=s.tracking.replace(tool_at=at)
            )
        if s.state is State.NEEDS_INPUT:
            return move(s, State.BUSY, "hook", at, event)
        return s

    if isinstance(signal, sig.StopFailure):
        if sub:
            return s
        s = compaction_over(s)  # a turn's end is past any compaction in it
        s = s.replace(
            error=signal.error or "unknown",
            current_tool=None,
            tool_summary=None,
            subagents=0,
            tracking=s.tracking.replace(
                # the "answer" of a failed turn is the error text: shown as the error
                error_detail=clip(signal.error_details or signal.last_assistant_message),
                tool_at=at,
                subagent_ids=(),
            ),
        )
        return move(s, finished(s.tracking), "hook", at, event)

    if isinstance(signal, sig.Stop):
        if sub:  # a sub-agent's end never ends the parent's turn
            return s
        s = compaction_over(s)  # a turn's end is past any compaction in it
        running = tuple(task for task in signal.background_tasks if task.status == "running")
        t = s.tracking.replace(tool_at=at)
        answer = clip(signal.last_assistant_message)
        if answer:
            s = s.replace(last_assistant=answer)
            t = t.replace(assistant_at=at)
        s = s.replace(current_tool=None, tool_summary=None, background_tasks=running)
        if any(not task.is_shell for task in running):
            # Background agents still work (2.1.332: the PID file stays busy and the CLI says
            # "Waiting for N background agents"): the session does not wait for you yet.
            s = move(track(s, t), State.BUSY, "hook", at, event)
            return because(s, "wait:background-agent", None)
        s = s.replace(subagents=0, tracking=t.replace(subagent_ids=()))
        return move(s, finished(t), "hook", at, event)

    if isinstance(signal, sig.PreCompact):
        return s.replace(compacting=True, tracking=s.tracking.replace(compacting_since=at))

    if isinstance(signal, sig.PostCompact):
        return compaction_over(s)

    if isinstance(signal, sig.SubagentStart | sig.SubagentStop):
        return _agent_call(_apply_counters(s, signal), signal)

    if isinstance(signal, sig.SessionEnd):
        if signal.reason in _KEEP_ID_END_REASONS:  # the id is about to change: nothing moves
            return s
        if s.background is not None:  # claude stop: listed (stopped) until claude rm
            return stop(s, "background:stopped", at, event)
        s = end(s, "hook", at, event)
        return move(s, State.IDLE, "hook", at, event)

    if isinstance(signal, sig.OtherHook) and signal.name in facts.interrupt_events and not sub:
        # Esc, or an approval declined: the turn is over with no answer (no Stop follows)
        s = s.replace(current_tool=None, tool_summary=None, tracking=s.tracking.replace(tool_at=at))
        return move(s, State.IDLE, "hook", at, event)

    return s  # OtherHook: proof of life only


def _woken_by_task(prompt: str | None) -> bool:
    return bool(prompt) and (prompt or "").lstrip().startswith(_TASK_NOTIFICATION)


def _task_summary(prompt: str) -> str:
    """What a ``<task-notification>`` wake-up says: "background agent finished: <summary>"."""
    start, end = prompt.find("<summary>"), prompt.find("</summary>")
    summary = prompt[start + len("<summary>") : end].strip() if 0 <= start < end else ""
    text = f"background agent finished: {summary}" if summary else "background agent finished"
    return clip(text) or ""
