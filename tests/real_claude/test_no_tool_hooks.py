"""The default install registers no hook per tool call (issue 28): on the real CLI, the row
is as right as with them.

Claude Code pays for every hook it runs, even an async no-op (P18), so ``pmux-widget install``
leaves PreToolUse, PostToolUse and PostToolUseFailure out. What they told the monitor comes
from elsewhere, and each test checks it on both pinned CLIs against a real hub:

* the current tool and its summary come from the transcript's ``tool_use`` record while an
  8 s command runs, and go when its result is written;
* no per-tool event reaches the hub or the spool, and the once-per-turn ones all do.

Dialogs answered in the terminal (the PID file's ``waiting`` → ``busy``, no PostToolUse) are
checked by ``test_e2e_states.py``, which runs with the default install too.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pmux_widget import hooks as pmux_hooks
from pmux_widget.core.model import State
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.runtime.assemble import make_hub

from ..helpers import count_hooks, wait_until
from .test_kill9 import hooked_env


@pytest.mark.all_versions
def test_the_current_tool_comes_from_the_transcript_with_no_hook_per_tool_call(
    claude_cli: Path, cli_version: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    env, home = hooked_env(scripted_model, tmp_path, cli_version)
    status = pmux_hooks.hooks_status(env.settings_file, home)
    assert status.ok and status.tool_hooks == (), status.message
    hub = make_hub(home=home.root, claude_home=env.config_dir).start()
    arrived = count_hooks(hub)
    done: list[object] = []
    run = threading.Thread(
        target=lambda: done.append(
            env.run_print(claude_cli, "run the long command", "--allowedTools", "Bash")
        ),
        daemon=True,
    )
    try:
        run.start()
        busy = wait_until(
            lambda: next(
                (s for s in hub.fleet.values() if s.current_tool == "Bash" and s.running), None
            ),
            60,
            what=lambda: f"the 8 s Bash as the current tool ({list(hub.fleet.values())})",
        )
        assert busy.state is State.BUSY, busy
        assert "sleep 8" in (busy.tool_summary or ""), busy.tool_summary
        assert arrived["UserPromptSubmit"] == 1
        run.join(120)
        assert done and getattr(done[0], "returncode", None) == 0, done
        assert "The long command finished." in getattr(done[0], "stdout", "")
        wait_until(  # no async hook left running at exit: 2.1.197 skips no SessionEnd
            lambda: arrived["SessionEnd"] == 1,
            30,
            what=lambda: f"the turn's hooks ({dict(arrived)})",
        )
        final = wait_until(
            lambda: (x := hub.fleet.get(busy.session_id)) is not None and not x.running and x,
            30,
            what="the session ended",
        )
        assert (final.state, final.current_tool, final.tool_summary) == (State.IDLE, None, None)
        assert not set(arrived) & set(pmux_hooks.TOOL_EVENTS), arrived
        assert arrived["Stop"] == 1 and arrived["SessionStart"] == 1, arrived
        assert not pmux_hooks.read_spool(home)
    finally:
        hub.stop()
        run.join(30)
