"""Actions on real Claude Code sessions in tmux: approve, deny, interrupt, send, and refusals.

Each action goes through ``runtime.actions.act`` against a real Hub that watches the real CLI
(hooks installed): the keys reach the CLI's tmux pane only after the checks; a refused action
leaves the pane's screen exactly as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from pmux_widget.agents.claude.screen import parse_screen
from pmux_widget.core.model import State
from pmux_widget.notebook.waiting import Ask
from pmux_widget.runtime.actions import ActionError, act

from ..helpers import request, wait_until
from .tracking import Tracked

#: Keys and screens differ by version (2.1.332's dialog may want Enter after the digit):
#: every action test runs on every pinned CLI.
pytestmark = pytest.mark.all_versions


def _state(tr: Tracked, sid: str, *states: State, timeout: float = 45.0) -> None:
    wait_until(
        lambda: tr.hub.fleet[sid].state in states,
        timeout,
        what=lambda: (
            f"{sid[:8]} in {states}; it is {tr.hub.fleet[sid].state} ({tr.hub.fleet[sid].source})"
        ),
    )


def _markers(tr: Tracked) -> list[str]:
    return sorted(p.name for p in tr.env.cwd.glob("sim-*.txt"))


def typed_view(screen: str) -> tuple[object, ...]:
    """What a typed key would change: the dialog, its selection, the prompt box (2.1.332
    animates its logo and a status dot, so the whole screen is no witness)."""
    parsed = parse_screen(screen)
    dialog = parsed.dialog
    selected = dialog.selected.label if dialog and dialog.selected else None
    return (dialog.fingerprint if dialog else None, selected, parsed.prompt_text)


def _refused_types_nothing(tr: Tracked, sid: str, action: str, **kw: str) -> str:
    before = typed_view(tr.tc.screen())
    with pytest.raises(ActionError) as refused:
        act(tr.hub, sid, action, **kw)
    # Nothing typed: the screen is unchanged a moment later (the CLI would echo a key at once).
    time.sleep(0.3)
    assert typed_view(tr.tc.screen()) == before
    return refused.value.reason


def _session(tr: Tracked) -> str:
    sid = tr.tc.session_id()
    assert sid is not None
    return sid


def _at_dialog(tr: Tracked) -> str:
    """Prompt for a command that needs permission; return the session id once the hub says
    needs-input and the dialog is on screen."""
    sid = _session(tr)
    tr.tc.type_prompt("run the command")
    _state(tr, sid, State.NEEDS_INPUT)
    tr.tc.wait_dialog()
    return sid


def test_approve_runs_the_tool_and_ends_in_review(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _at_dialog(tr)
    result = act(tr.hub, sid, "approve", record=tr.hub.record_action)
    assert result.keys in (("Enter",), ("Down", "Enter"))  # "Yes" selected, or auto mode's
    _state(tr, sid, State.REVIEW)
    assert len(_markers(tr)) == 1, "the approved command ran"
    # the history says the approval moved it on
    sources = [tr_.source for tr_ in tr.hub.history(sid)]
    assert "action:approve" in sources, sources


def test_deny_runs_nothing_and_is_not_review(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _at_dialog(tr)
    act(tr.hub, sid, "deny")
    _state(tr, sid, State.IDLE)
    tr.tc.wait_for_screen("Interrupted")
    assert _markers(tr) == []
    assert tr.hub.fleet[sid].state is State.IDLE


def test_a_stale_dialog_is_refused(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _at_dialog(tr)
    reason = _refused_types_nothing(tr, sid, "approve", dialog="0123456789ab")
    assert "dialog changed" in reason
    act(tr.hub, sid, "deny")
    _state(tr, sid, State.IDLE)


def test_interrupt_mid_stream_ends_idle(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _session(tr)
    tr.tc.type_prompt("stream slowly")
    _state(tr, sid, State.BUSY)
    tr.tc.wait_for_screen("line 2 of the slow answer")
    act(tr.hub, sid, "interrupt")
    _state(tr, sid, State.IDLE)
    tr.tc.wait_for_screen("Interrupted")


def test_send_runs_a_turn_to_review(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _session(tr)
    result = act(tr.hub, sid, "send", text="say hi")
    assert result.queued is False
    _state(tr, sid, State.REVIEW)
    assert tr.hub.fleet[sid].last_prompt == "say hi"


def test_refusals_type_nothing(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _session(tr)
    _state(tr, sid, State.IDLE)
    assert "no permission prompt" in _refused_types_nothing(tr, sid, "approve")
    assert "no permission prompt" in _refused_types_nothing(tr, sid, "deny")
    assert "nothing runs" in _refused_types_nothing(tr, sid, "interrupt")
    assert "line break" in _refused_types_nothing(tr, sid, "send", text="two\nlines")
    tr.tc.type_text("draft prompt")
    assert "unsent text" in _refused_types_nothing(tr, sid, "send", text="say hi")
    with pytest.raises(ActionError) as unknown:
        act(tr.hub, "no-such-session", "send", text="hi")
    assert unknown.value.unknown


def test_a_shell_left_in_the_pane_after_exit_gets_nothing(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _session(tr)
    tr.tc.exit()
    wait_until(lambda: not tr.hub.fleet[sid].running, 30, what="the session to end")
    wait_until(lambda: not tr.tc.alive(), 30, what="the CLI to exit")
    # The pane lives on with a shell (as when claude ran from an interactive shell).
    tr.tc._tmux("respawn-pane", "-k", "-t", tr.tc.pane.pane_id or "", "sh")  # type: ignore[union-attr]
    # Keys typed before sh prints its first prompt are echoed by the tty at once, and the
    # prompt then lands on the output's line ("# shell-ready-42"): wait for what only the
    # shell's evaluation writes, wherever it stands on its line.
    tr.tc.send_keys("echo shell-ready-$((40+2))", "Enter")
    tr.tc.wait_for_screen("shell-ready-42", timeout=10)
    for action, kw in (("send", {"text": "say hi"}), ("interrupt", {}), ("approve", {})):
        assert _refused_types_nothing(tr, sid, action, **kw)


def test_ask_returns_the_answer_and_says_when_it_waits(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _session(tr)
    answer = Ask(tr.hub, sid, "say hi", timeout=60).result()
    assert answer.state is State.REVIEW
    assert answer == "Hi! I am the scripted model. Nothing to do here."
    waiting = Ask(tr.hub, sid, "run the command", timeout=60).result()
    assert waiting.waiting and "touch" in waiting, waiting
    act(tr.hub, sid, "approve", record=tr.hub.record_action)
    done = Ask(tr.hub, sid, None, timeout=60).result()
    assert done.state is State.REVIEW
    assert done == "Done: the marker file exists now."


def test_cli_and_http_deliver_to_the_real_cli(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _session(tr)
    env = dict(os.environ, PMUX_WIDGET_HOME=str(tr.hub.home.root))
    sent = subprocess.run(
        [sys.executable, "-m", "pmux_widget", "send", sid[:8], "stream slowly"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert sent.returncode == 0, sent.stderr
    _state(tr, sid, State.BUSY)
    tr.tc.wait_for_screen("line 1 of the slow answer")
    status, body, _ = request(
        tr.hub.port,
        "POST",
        f"/api/sessions/{sid}/actions",
        json.dumps({"action": "interrupt"}).encode(),
        {"X-Pmux-Token": tr.hub.token},
    )
    assert status == 202, body
    _state(tr, sid, State.IDLE)
    assert tr.hub.fleet[sid].source == "action:interrupt"
