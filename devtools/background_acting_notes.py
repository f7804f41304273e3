"""A hand-observed section of docs/claude-code-behaviour.md: acting on Claude Code's background
sessions through ``claude attach``, ``claude stop`` and ``claude rm`` (issue 26, item 3).
``devtools.record`` does not record them; ``tests/real_claude/test_bg_actions.py`` and
``benchmarks/bench_bg_actions.py`` check what the actions rely on. Kept here so that the
generated document keeps it."""

from __future__ import annotations

__all__ = ["ACTING_ON_BACKGROUND"]

ACTING_ON_BACKGROUND: list[str] = [
    "## Background sessions: acting through `claude attach` (2.1.197 and 2.1.332)",
    "",
    "Observed by hand and in `tests/real_claude/test_bg_actions.py` / "
    "`benchmarks/bench_bg_actions.py`",
    "(sealed config dir, scripted model, `claude --bg --permission-mode default`), 2026-12-04. Not",
    "produced by the recorder: kept by hand.",
    "",
    "- **`claude attach <job>`** (a TUI client of the daemon) draws the session's own "
    "screen in the",
    "  attaching terminal; keys go to the session. A named session's prompt box carries "
    "the name on",
    "  its upper rule on 2.1.332 (`──── bgA ─`; below a dialog, the same labelled rule closes the",
    "  screen); 2.1.197 draws no name. The permission dialog is the CLI's usual one "
    "(2.1.197: `❯ 1.",
    "  Yes … 3. No`; 2.1.332 manual mode: `❯ 1. Yes … 4. No`), answered by label as in tmux.",
    "- **Detach: Ctrl+Z** on both versions: the attach client exits at once and the session runs",
    "  on (same worker pid, same status). `←` goes to the agent view instead (a TUI that stays).",
    "  Killing the client's terminal (SIGHUP) also leaves the session running.",
    "- **Two clients of one job at once** (`tests/real_claude/test_bg_attach_tmux.py`, 2026-12-05,",
    "  both versions): a `claude attach <job>` in a 200×50 tmux window of the user's, and a second",
    "  one started in another window of the same server, both draw the waiting permission dialog;",
    "  the second does not push the first off. Killing that tmux server (both clients get SIGHUP)",
    "  leaves the worker `waiting` on its dialog, same pid.",
    "- Attach start on this 2-core VM under load 20: the first paint comes 0.8-2.1 s (2.1.332) and",
    "  3.5-5.6 s (2.1.197) after the spawn; the client's own CPU before the dialog shows is",
    "  ~250 ms (2.1.332) and ~620 ms (2.1.197), so on an idle machine an attach alone costs about",
    "  that much before any key.",
    '- A job stuck at "starting…" (below) attaches to `Attaching…` forever: an action then'
    " finds no",
    "  screen to check and is refused, nothing typed.",
    "- **2.1.197, first `--bg` of a fresh daemon, loaded machine:** the job can stay "
    "`starting…` for",
    "  good (`daemon.log`: `claimed-spare <job>` logged before that spare listened; no worker, no",
    "  PID file). A second `--bg` then works. `claude rm <job>` removes the stuck one.",
    "- **`claude stop <job>`**: `stopped <job>`, exit 0; the worker exits and its PID file goes;",
    "  `claude agents --json --all` lists it `stopped`. Unknown job: exit 1, `No session matching",
    "  '<job>'…`.",
    "- **`claude rm <job>`**: `removed <job>`, exit 0, also on a running (blocked) "
    "session, which it",
    "  ends. **2.1.197 refuses to remove a stopped job**, every time: exit 1, `couldn't confirm",
    "  <job> was stopped — the background service may be restarting. Try again in a moment.`",
    "  (retried for 10 s, daemon up or not). 2.1.332 removes it. (2026-12-05, load 3-6: 2.1.197",
    "  removed a stopped job at once in 3 runs of `test_bg_actions.py` of 3: not every time.)",
    "- `claude stop|rm|attach` of a job need only `CLAUDE_CONFIG_DIR` (the daemon's sockets under",
    "  `/tmp/cc-daemon-<uid>/<hash>/` are found from it); the worker's own binary",
    "  (`/proc/<pid>/exe`) is the client of the same version.",
    "",
    "### Two attach clients at once: a held (warm) attach (2.1.197 and 2.1.332)",
    "",
    "Observed by hand (a `claude --bg` session waiting on its permission dialog, two `claude",
    "attach <job>` clients in two tmux servers) and in `tests/real_claude/test_warm_attach.py`,",
    "2026-12-05. `runtime/warm_attach.py` relies on it.",
    "",
    "- **Two clients coexist**: both draw the session's screen with the dialog; keys from either",
    "  reach the session (Enter in ours with a user's 120x40 attach open answered it in 0.1 s);",
    "  one client's Ctrl+Z leaves the other attached and drawing (its Esc then answered). The",
    "  agent view (`claude agents`) draws the same row with ours held or not (`✻ exp  approve",
    "  Bash: …`, no attached mark). Neither changes the session's state: the PID",
    "  file stays `waiting` / `permission prompt`, `claude agents --json` stays `blocked`, and no",
    "  hook fires for an attach or a detach (the `Notification(permission_prompt)` ~6 s after",
    "  the dialog comes with or without any client).",
    "- **Size: the last client to attach sets the session's PTY size**, and a detach hands it back",
    "  to the client left. A 120x40 client attached after ours (200x50) makes ours draw at 120",
    "  columns (still parsed: the dialog is read as usual); ours attached after a 120x40 one makes",
    "  the session draw at 200 columns, and **on 2.1.332 the narrower client's screen is garbled**",
    "  (the dialog no longer readable there until it redraws); 2.1.197 redrew the narrow one",
    "  readable. So a warm attach is never started while another `claude attach <job>` runs.",
    "- **Cost of a held client**: 110-145 MB RSS; idle while the dialog waits, 0.02-0.1 s CPU per",
    "  5 s (2.1.332 / 2.1.197). Its start costs what any attach does (above): 0.3-1.2 s to draw",
    "  here, under load 3-7. Hence: held only while a dialog waits, at most 4 machine-wide.",
    "- A held client keeps drawing after the dialog is answered (the tool's output, the prompt",
    "  box); Ctrl+Z still detaches it at once (0.06 s). So the attach an action went through is",
    "  kept 10 s more (a prompt after a denial, an Esc of the turn it started: keys only too).",
    "- 2.1.197: an Esc ~0.1 s after the first line of a streamed answer showed (`claude logs`)",
    "  stopped the turn and put its prompt back in the box (`stream slowly (6)`): the next send",
    '  was refused ("holds unsent text"), nothing typed. Seen once in 8, with a warm attach.',
    "- Not checked: whether the agent view's own peek of a session resizes it as an attach does.",
    "",
]
