"""A Codex rollout read as it grows (agents/codex/rollout.py), on a rollout recorded from the
real Codex 0.171.0 with no hooks (an approval answered y, then one declined with Esc; the
instructions cut), and the rows it makes without hooks (core/rules_rollout.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pmux_widget.agents.codex.rollout import RolloutFacts, RolloutTailer
from pmux_widget.core import signals as sig
from pmux_widget.core.model import Session, State
from pmux_widget.core.question import Question
from pmux_widget.core.tracker import reduce
from pmux_widget.core.tracking import Tracking

RECORDED = Path(__file__).parent / "fixtures" / "codex_rollouts" / "approved_then_declined.jsonl"
SID = "01a24eef-f70d-7321-a002-b8d4ee55a56b"


def records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text().splitlines()]


def facts_until(stop: int) -> RolloutFacts:
    facts = RolloutFacts()
    for record in records()[:stop]:
        facts = facts.fold(record)
    return facts


def index_of(kind: str, nth: int = 0) -> int:
    found = [
        i
        for i, r in enumerate(records())
        if r["payload"].get("type") == kind or (r["type"] == kind)
    ]
    return found[nth]


def test_an_approval_waits_until_its_call_has_output_then_the_turn_completes() -> None:
    asking = facts_until(index_of("function_call") + 1)
    assert (asking.thread_id, asking.cwd) == (SID, "/home/user/project")
    assert asking.turn == "running" and asking.last_prompt == "please SHELL now"
    assert (asking.tool_name, asking.tool_summary) == ("Bash", "$ touch approved.txt")
    assert asking.waits is not None and asking.waits.kind == "permission"
    answered = facts_until(index_of("function_call_output") + 1)
    assert answered.waits is None and answered.tool_name is None and answered.turn == "running"
    done = facts_until(index_of("task_complete") + 1)
    assert done.turn == "complete" and done.last_assistant
    assert done.last_assistant.startswith("Done. The tool said")
    assert done.tokens.output == 24 and done.tokens.input == 240 and done.context_tokens == 120
    assert done.model == "mock-model" and done.approval_policy == "on-request"


def test_a_declined_approval_aborts_the_turn() -> None:
    waiting = facts_until(index_of("function_call", 1) + 1)
    assert waiting.waits is not None and waiting.last_prompt == "again SHELL please"
    end = facts_until(len(records()))
    assert end.turn == "aborted" and end.pending == () and end.waits is None
    assert end.turn_at > waiting.turn_at


def test_what_waits_on_the_user_and_what_does_not() -> None:
    def with_call(name: str, args: dict[str, Any], policy: str = "on-request") -> RolloutFacts:
        facts = RolloutFacts(turn="running", approval_policy=policy)
        item = {"type": "function_call", "call_id": "c1", "name": name,
                "arguments": json.dumps(args)}  # fmt: skip
        return facts.fold({"type": "response_item", "payload": item})

    escalated = {"cmd": "touch f", "sandbox_permissions": "require_escalated"}
    assert with_call("exec_command", escalated).waits is not None
    assert with_call("exec_command", escalated, policy="never").waits is None
    assert with_call("exec_command", {"cmd": "ls"}).waits is None  # runs in the sandbox
    options = [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "x"}]
    asks = {"questions": [{"question": "Which color?", "header": "Color", "options": options}]}
    question = with_call("request_user_input", asks).waits
    assert question is not None and question.kind == "question"
    assert question.questions[0].labels == ("Red", "Blue")
    # bad lines and unknown records change nothing
    facts = RolloutFacts()
    assert facts.fold("x").fold({"type": "event_msg", "payload": []}) == facts


def test_the_tailer_reads_complete_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    lines = RECORDED.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]) + lines[3][:10])
    tailer = RolloutTailer(path)
    assert tailer.poll() and tailer.facts.turn == "running"
    assert not tailer.poll()  # nothing new
    path.write_bytes(b"".join(lines))
    assert tailer.poll() and tailer.facts.turn == "aborted"
    path.write_bytes(lines[0])  # replaced by a shorter file: read again from its start
    assert tailer.poll() and tailer.facts.turn is None and tailer.facts.thread_id == SID


def turn(kind: sig.RolloutState, at: int, pid: int | None = 42, **extra: Any) -> sig.RolloutTurn:
    return sig.RolloutTurn(at=at, session_id=SID, turn=kind, pid=pid, cwd="/w/proj", **extra)


def test_a_hookless_row_is_made_by_its_rollout_and_follows_its_turns() -> None:
    assert reduce({}, turn("running", 1_000, pid=None), 1_000).sessions == {}  # no TUI shows it
    step = reduce({}, turn("running", 1_000, last_prompt="fix  it", model="m"), 1_000)
    row = step.sessions[SID]
    assert (row.last_prompt, row.model) == ("fix it", "m")
    assert (row.agent, row.pid, row.running, row.state, row.source) == (
        "codex", 42, True, State.BUSY, "rollout:running"
    )  # fmt: skip
    assert row.project == "proj"
    asked = Question("permission")
    step = reduce(step.sessions, turn("waiting", 2_000, tool_name="Bash",
                                      tool_summary="$ touch f", question=asked), 2_000)  # fmt: skip
    row = step.sessions[SID]
    assert (row.state, row.tool_summary, row.question) == (State.NEEDS_INPUT, "$ touch f", asked)
    assert step.changes[0].notification is not None
    row = reduce(step.sessions, turn("complete", 3_000), 3_000).sessions[SID]
    assert row.state is State.REVIEW and row.question is None
    assert reduce({SID: row}, turn("running", 2_500), 3_000).sessions[SID] == row  # older
    row = reduce({SID: row}, turn("aborted", 4_000), 4_000).sessions[SID]
    assert (row.state, row.source) == (State.IDLE, "rollout:aborted")


def test_hooks_decide_a_hooked_row_but_after_a_restart_left_it_unknown() -> None:
    hooked = Session(session_id=SID, agent="codex", state=State.BUSY, pid=7,
                     tracking=Tracking(last_hook_at=5_000, decided_at=5_000))  # fmt: skip
    assert reduce({SID: hooked}, turn("complete", 6_000), 6_000).sessions[SID] == hooked
    unknown = hooked.replace(state=State.UNKNOWN)
    # the rollout's record is older than the hook that decided the turn: it still decides
    row = reduce({SID: unknown}, turn("waiting", 4_900), 9_000).sessions[SID]
    assert (row.state, row.pid) == (State.NEEDS_INPUT, 7)
    ended = hooked.replace(tracking=Tracking(ended=True))
    assert reduce({SID: ended}, turn("running", 9_000), 9_000).sessions[SID] == ended


def test_a_retired_hookless_row_comes_back_with_a_newer_turn_in_a_tui() -> None:
    """A /resume of the thread a TUI left: its next turn, placed in a TUI (the runtime gives
    a pid only where the screen shows it), brings the row back; nothing else does."""
    row = reduce({}, turn("complete", 1_000), 1_000).sessions[SID]
    # its TUI showed another thread (the TuiShows of /new), at 2 s
    other = sig.TuiShows(at=2_000, session_id="0199aaaa-0000-7000-8000-00000000beef", pid=42)
    newer = Session(session_id=other.session_id, agent="codex", state=State.BUSY, running=True)
    retired = reduce({SID: row, other.session_id: newer}, other, 2_000).sessions[SID]
    assert retired.ended and retired.source == "retired"
    back = reduce({SID: retired}, turn("running", 3_000, pid=43), 3_000).sessions[SID]
    assert (back.ended, back.running, back.pid, back.state) == (False, True, 43, State.BUSY)
    assert back.source == "rollout:running"
    for not_back in (
        turn("running", 3_000, pid=None),  # no TUI's screen shows it
        turn("running", 1_500, pid=43),  # a turn from before it was retired
    ):
        assert reduce({SID: retired}, not_back, 3_000).sessions[SID] == retired
    gone = row.replace(running=False, tracking=row.tracking.replace(ended=True))  # otherwise
    assert reduce({SID: gone}, turn("running", 3_000, pid=43), 3_000).sessions[SID] == gone
    hooked = retired.replace(tracking=retired.tracking.replace(last_hook_at=900))
    assert hooked.hooked  # its hooks bring it back, not its rollout
    assert reduce({SID: hooked}, turn("running", 3_000, pid=43), 3_000).sessions[SID] == hooked


FOR_GOOD = RECORDED.with_name("approved_for_good.jsonl")


def test_a_command_approved_for_good_runs_without_waiting_the_next_time() -> None:
    """Recorded: "don't ask again for commands that start with `touch approved.txt`" (p) on
    the first call, then the same command again in the same turn, run without asking."""
    recorded = [json.loads(line) for line in FOR_GOOD.read_text().splitlines()]
    calls = [i for i, r in enumerate(recorded) if r["payload"].get("type") == "function_call"]
    assert len(calls) == 2

    def facts(stop: int) -> RolloutFacts:
        folded = RolloutFacts()
        for record in recorded[: stop + 1]:
            folded = folded.fold(record)
        return folded

    first, second = facts(calls[0]), facts(calls[1])
    assert first.approved_prefixes == ()
    assert first.waits is not None  # the approval dialog
    assert second.approved_prefixes == (("touch", "approved.txt"),)
    assert second.call is not None and second.waits is None  # a tool at work, no dialog
    # a new thread of the same home starts with the rules in its first world_state
    rules = {"permissions": {"approved_command_prefixes": [["touch", "approved.txt"]]}}
    fresh = RolloutFacts().fold({"type": "world_state", "payload": {"full": True, "state": rules}})
    assert fresh.approved_for_good("touch approved.txt")
    assert fresh.approved_for_good("touch 'approved.txt' --verbose")
    assert not fresh.approved_for_good("touch other.txt")
    assert not fresh.approved_for_good("touch approved.txt && rm -rf build")  # may still ask
    assert not fresh.approved_for_good("touch approved.txt; curl x | sh")
    assert not fresh.approved_for_good("touch 'unclosed")
    assert not RolloutFacts().approved_for_good("touch approved.txt")
