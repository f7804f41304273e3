"""A tool call's PreToolUse and PostToolUse paired by ``tool_use_id`` (issue 28: they are
async hooks, whose scripts race). The same events on the real CLI: test_hook_async.py."""

from __future__ import annotations

import pytest

from pmux_widget.core import signals as s
from pmux_widget.core.model import State
from pmux_widget.core.tool_pairs import KEEP

from .test_tracker import Run, busy_run


def test_parse_reads_tool_use_id_leniently():
    base = {"session_id": "x", "cwd": "/p", "tool_name": "Read"}
    pre = s.parse_hook({**base, "hook_event_name": "PreToolUse", "tool_use_id": "toolu_1"}, at=1)
    post = s.parse_hook({**base, "hook_event_name": "PostToolUse", "tool_use_id": "toolu_1"}, at=2)
    fail = s.parse_hook(
        {**base, "hook_event_name": "PostToolUseFailure", "tool_use_id": "toolu_2"}, at=3
    )
    odd = s.parse_hook({**base, "hook_event_name": "PreToolUse", "tool_use_id": 7}, at=4)
    assert isinstance(pre, s.PreToolUse) and pre.tool_use_id == "toolu_1"
    assert isinstance(post, s.PostToolUse) and post.tool_use_id == "toolu_1"
    assert isinstance(fail, s.PostToolUseFailure) and fail.tool_use_id == "toolu_2"
    assert isinstance(odd, s.PreToolUse) and odd.tool_use_id is None  # never refused for it


@pytest.mark.parametrize("post", ["PostToolUse", "PostToolUseFailure"])
def test_pretooluse_after_its_posttooluse_brings_no_tool_back(post):
    run = busy_run()
    run.hook(post, at=100_010, tool_name="Read", tool_use_id="toolu_a")
    # its PreToolUse arrives later, even stamped later (the scripts raced)
    run.hook(
        "PreToolUse",
        at=100_011,
        tool_name="Read",
        tool_input={"file_path": "/p/a"},
        tool_use_id="toolu_a",
    )
    assert run.state is State.BUSY
    assert run.session.current_tool is None and run.session.tool_summary is None
    # the next call's PreToolUse still shows its tool
    run.hook("PreToolUse", at=100_020, tool_name="Bash", tool_input={}, tool_use_id="toolu_b")
    assert run.session.current_tool == "Bash"


def test_overtaken_pretooluse_does_not_wake_an_idle_session():
    run = Run()
    run.hook("SessionStart", at=99_000, source="startup")
    run.hook("PostToolUse", at=99_500, tool_name="Read", tool_use_id="toolu_a")
    run.hook("PreToolUse", at=99_600, tool_name="Read", tool_input={}, tool_use_id="toolu_a")
    assert run.state is State.IDLE and run.session.current_tool is None


def test_pretooluse_before_its_posttooluse_shows_the_tool_then_clears_it():
    run = busy_run()
    run.hook("PreToolUse", at=100_010, tool_name="Read", tool_input={}, tool_use_id="toolu_a")
    assert run.session.current_tool == "Read"
    run.hook("PostToolUse", at=100_020, tool_name="Read", tool_use_id="toolu_a")
    assert run.session.current_tool is None


def test_without_tool_use_id_order_is_by_sent_time_as_before():
    run = busy_run()
    run.hook("PostToolUse", at=100_010, tool_name="Read")
    run.hook("PreToolUse", at=100_011, tool_name="Read", tool_input={})
    assert run.session.current_tool == "Read"


def test_finished_tool_ids_are_bounded():
    run = busy_run()
    for i in range(KEEP + 5):
        run.hook("PostToolUse", at=100_000 + i, tool_name="Read", tool_use_id=f"toolu_{i}")
    done = run.session.tracking.tools_done
    assert len(done) == KEEP and done[-1] == f"toolu_{KEEP + 4}" and "toolu_0" not in done
    again = run.session.tracking.from_record(run.session.tracking.to_record())
    assert again.tools_done == done
