"""A hand-observed section of docs/claude-code-behaviour.md: Claude Code's own background
sessions (``claude --bg``, ``/background``, ``/fork``, the agent view). ``devtools.record``
does not record them yet (they need a daemon, an agent view and several sessions at once); the
real-CLI tests in ``tests/real_claude/test_background_sessions.py`` check what the rules rely
on. Kept here so that the generated document keeps it."""

from __future__ import annotations

__all__ = ["BACKGROUND_SESSIONS"]

BACKGROUND_SESSIONS: list[str] = [
    "## Background sessions (observed by hand, 2026-12-04)",
    "",
    "Run by hand on both pins against the scripted model (`pmux_widget.demo.claude_bg`), in "
    "addition to `shared/reference/claude-code-facts.md` §7b. What differs from it, or was "
    "not recorded there:",
    "",
    "| Observed | 2.1.197 | 2.1.332 | Rule we follow |",
    "|---|---|---|---|",
    "| `/background` (or `←`) of an interactive session in a tmux pane | the interactive "
    "process exits (`SessionEnd` `prompt_input_exit`, the pane dies when Claude was its "
    "command); the daemon runs a worker `--session-id <new> --fork-session`; its first hook is "
    "`SessionStart(resume)` under the OLD session id, its PID file (`kind: bg`) names the new "
    "one | the interactive process exits the same way; the worker is a claimed spare and its "
    "`SessionStart(fork)` names the NEW id; the PID file says `busy` and the turn goes on | the "
    "old row ends (its process is gone, its pane forgotten), the worker's PID file makes the "
    "background row (same pid: the old id's revival by the resume hook is retired) |",
    "| `/fork` when idle | (not recorded: the run did not end in time) | the interactive session "
    "stays (same id, same pane); a new background session `SessionStart(fork)`, PID file "
    '`kind: bg`, `idle` ("session waiting for a prompt"); the daemon is a CHILD of the '
    "interactive CLI in the pane | a new background row; the pane's session keeps its row |",
    "| process names | worker, pty host and daemon all run as `claude.exe` (no title) | "
    "workers from spares `claude`, `/fork` and `/background` workers `claude.exe` | a Claude "
    "process is `claude` or `claude.exe`; the walk from a hook's parent stops at the worker |",
    "| the daemon's parent | `claude agents` started it: its parent is the VIEW while the view "
    "lives (so a walk up from a worker reached the view's pid) | `claude --bg` started it "
    "(reparented to init) | a worker descends from the daemon: never in a pane, whatever "
    "pane its ancestors are in |",
    "| a spare with a job folder | the daemon's first worker: `bg spawned <job> (spare)` in "
    '`daemon.log`, `jobs/<job>/` exists, roster `dispatch.source: "spare"`, a '
    "`SessionStart(startup)` hook; not in `claude agents --json` | spares have no job folder, "
    "PID file `spare: true` (sometimes) and a `SessionStart(startup)` hook | a `bg` PID file "
    "whose job has no folder, or that the roster says is a spare, is a spare: never a row, "
    "its own hooks dropped |",
    "| kill -9 of a busy worker (`keep_busy`: a slow stream) | respawned ~13 s later "
    "(`--resume <transcript>`), PID file `busy` at first, then `idle`; `claude agents --json` "
    "`status: idle, state: working` | respawned ~13 s later, `SessionStart(resume)` then at "
    "once `Stop` (the interrupted stream is not re-requested); PID file without `status`, "
    "then `idle` | not running at the kill; the row follows the new pid and says what its PID "
    "file says (busy while `busy`) |",
    "| the respawned worker's first PID file (kill -9, by hand 2026-12-05) | names a FRESH "
    "session id (`kind: bg`, the job's `jobId` and `name`, no `status`) for ~0.4 s, then the "
    "job's session (as the resume loads); its hooks, transcript, `jobs/<job>/state.json` "
    "(`sessionId`, `resumeSessionId`) and `claude agents --json` all name the job's session; "
    "once the respawn re-ran the prompt instead (`SessionStart(startup)` + "
    "`UserPromptSubmit` under the job's session) | names the job's session from the first "
    "write | a `bg` PID file without a status naming another session than its job's row is "
    "never a row and retires nothing (a rescan read it before, and applied it after, the "
    "job's later records on a loaded machine: a stray row, the job's row retired); a rescan "
    "never applies a record older than the one the watcher applied |",
    "| `claude stop <job>` | `SessionEnd(other)`; the job stays (`state: stopped`), "
    "its folder too | same | not running, still a row |",
    "| `claude rm <job>` | no hook; `jobs/<job>/` removed; the job leaves `claude agents` | same "
    "| ended (the poller and the snapshot look for the job's folder) |",
    "| the agent view's notifications | none fired | `Notification(agent_needs_input)` per "
    "blocked session under the VIEW's id (no PID file), with the view's `TMUX_PANE` | never "
    "a row, never a change |",
    "| a bare `sleep 110` in Bash | runs | refused (`PostToolBatch` with no `PreToolUse`) | "
    "the `keep_busy` scenario streams slowly instead |",
    "| a job dispatched while the daemon's first spare still boots (load ~20 on 2 cores) | "
    "hung: no hook, no status, ever | not seen | the harness waits for a spare first |",
    "",
]
