"""Agent SDK runs seen right without our handler (issue 35 parts 2 and 3): the SDK with its
bundled CLI 2.1.337, the scripted model, our hooks and a hub in this process.

* A tool the CLI refuses by itself (no ``can_use_tool``: agent-sdk.md 3a) is no wait: the row
  leaves needs-input while the turn goes on, long before its Stop.
* A finished run's tokens, model and answer are the transcript's, read to its end.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pmux_widget.agents.claude.transcript import scan_transcript
from pmux_widget.core.model import State
from pmux_widget.runtime.assemble import make_hub

from ..helpers import wait_until
from .sdk_runs import SdkRun, sdk_options
from .tracking import ChangeLog

#: After the refusal the model talks on for ~4 s: the false needs-input of 3a lasted that long.
REFUSED_THEN_TALK = {
    "name": "sdk_refused_then_talk",
    "keywords": ["touch it then talk"],
    "turns": [
        {
            "content": [
                {"type": "text", "text": "I'll create the file."},
                {"type": "tool_use", "name": "Bash", "input": {"command": "touch made.txt"}},
            ],
            "usage": {"input_tokens": 12, "output_tokens": 22},
        },
        {
            "content": [{"type": "text", "text": "I was not allowed to. " * 20}],
            "chunks": 20,
            "delay": 0.2,
            "usage": {"input_tokens": 13, "output_tokens": 57},
        },
    ],
}


@pytest.fixture
def hub(sdk_env):
    env, pmux_home = sdk_env
    hub = make_hub(home=pmux_home.root, claude_home=env.config_dir).start()
    yield hub
    hub.stop()
    assert hub.errors == 0


def test_a_tool_the_cli_refused_by_itself_leaves_needs_input_while_the_turn_goes_on(
    sdk_env, hub, scripted_model
):
    env, _ = sdk_env
    scripted_model.scenarios.insert(0, REFUSED_THEN_TALK)
    log = ChangeLog(hub)
    run = SdkRun("please touch it then talk", sdk_options(env)).start()
    sid = wait_until(lambda: run.session_id, 60, what="the SDK's init message")
    asked = wait_until(
        lambda: log.first(sid, 0, lambda s: s.state is State.NEEDS_INPUT),
        30,
        what="the PermissionRequest hook's needs-input",
    )
    # busy again, said by the transcript's refusal, while the model still streams
    went_on = wait_until(
        lambda: log.first(sid, asked.t, lambda s: s.state is State.BUSY),
        10,
        what="needs-input to end",
    )
    assert went_on.after.source == "transcript:tool-result"
    assert not run.done.is_set(), "the turn was over before the row left needs-input"
    print(f"needs-input lasted {1000 * (went_on.t - asked.t):.0f} ms (3a: the whole turn)")
    run.wait(60)
    assert run.error is None
    assert [d["tool_name"] for d in run.result.permission_denials] == ["Bash"]
    wait_until(lambda: hub.fleet[sid].ended, 15, what="the row to end")
    # no needs-input came back after the refusal (the 12 s of 3a)
    later = [s.after.state for s in log.of(sid, went_on.t)]
    assert State.NEEDS_INPUT not in later
    assert hub.snapshot_json()["counts"]["attention"] == 0


def test_a_short_runs_tokens_model_and_answer_are_the_transcripts_totals(sdk_env, hub):
    env, _ = sdk_env
    for attempt in range(3):  # 1 run in 3 showed 0 tokens before the final read (agent-sdk.md)
        run = SdkRun("say hi", sdk_options(env)).start().wait(90)
        assert run.error is None and run.result is not None
        sid = run.session_id
        wait_until(lambda sid=sid: hub.fleet[sid].ended, 15, what="the row to end")
        path = Path(hub.fleet[sid].transcript_path or env.transcript_path(sid))
        facts = scan_transcript(path)
        # the final read lands shortly after the end: the row converges, never stays short
        wait_until(
            lambda sid=sid, facts=facts: hub.fleet[sid].tokens == facts.tokens,
            5,
            what=f"run {attempt}: the row's tokens to be the transcript's {facts.tokens}",
        )
        row = hub.fleet[sid]
        assert row.tokens.output > 0
        assert row.model == facts.model and row.model
        assert row.last_assistant == facts.last_assistant
        assert row.last_assistant and "scripted model" in row.last_assistant
        usage = run.usage()
        assert row.tokens.input == usage.get("input_tokens"), (row.tokens, usage)
        assert row.tokens.output == usage.get("output_tokens"), (row.tokens, usage)
        time.sleep(0)  # (each run is its own session)
