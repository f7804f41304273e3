"""Golden fixtures recorded from the real Claude Code CLI (tests/fixtures/real/2.1.197/), replayed
through our parsers and the tracker: real shapes, not guessed ones.

Tokens are checked against what the scripted model declared it sent (requests.jsonl), and the
state the tracker reaches from the recorded hooks against what the run did.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmux_widget.agents.claude.transcript import scan_transcript
from pmux_widget.core import signals as s
from pmux_widget.core.model import State
from pmux_widget.core.tracker import reduce_all

REAL = Path(__file__).parent / "fixtures" / "real" / "2.1.197"
SCENARIOS = sorted(p.name for p in REAL.iterdir() if (p / "hooks.jsonl").exists())


def main_transcripts(scenario: str) -> list[Path]:
    return sorted(
        p for p in (REAL / scenario / "transcripts").rglob("*.jsonl") if "subagents" not in p.parts
    )


def hooks(scenario: str) -> list[dict]:
    lines = (REAL / scenario / "hooks.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def payload_of(entry: dict) -> dict:
    return entry.get("payload", entry)


def declared_tokens(scenario: str, session_requests: set[str]) -> dict[str, int]:
    """Usage the model declared for the responses that reached the main transcript."""
    totals = {"input": 0, "output": 0, "cache_read": 0, "cache_creation": 0}
    for line in (REAL / scenario / "requests.jsonl").read_text().splitlines():
        request = json.loads(line)
        if request.get("message_id") in session_requests and request.get("usage"):
            usage = request["usage"]
            totals["input"] += usage["input_tokens"]
            totals["output"] += usage["output_tokens"]
            totals["cache_read"] += usage["cache_read_input_tokens"]
            totals["cache_creation"] += usage["cache_creation_input_tokens"]
    return totals


def message_ids(transcript: Path) -> set[str]:
    ids = set()
    for line in transcript.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "assistant" and not record.get("isSidechain"):
            ids.add(record["message"]["id"])
    return ids


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_tokens_equal_the_declared_usage_after_dedup(scenario):
    for transcript in main_transcripts(scenario):
        facts = scan_transcript(transcript)
        expected = declared_tokens(scenario, message_ids(transcript))
        assert facts.tokens.to_json() == expected, transcript.name


@pytest.mark.parametrize(
    ("scenario", "ending"),
    [
        ("plain", "clean"),
        ("approve", "clean"),
        ("deny", "interrupt"),
        ("esc_stream", "interrupt"),
        ("esc_during_tool", "interrupt"),
        ("compact", "meta"),
        ("error_429", "open"),
    ],
)
def test_transcript_ending_of_real_runs(scenario, ending):
    [*_, last] = main_transcripts(scenario)
    assert scan_transcript(last).ending == ending


def test_api_error_record_is_an_error_not_an_answer():
    [transcript] = main_transcripts("error_429")
    facts = scan_transcript(transcript)
    assert facts.api_error and facts.last_assistant is None


@pytest.mark.parametrize(
    ("scenario", "final_state"),
    [
        ("plain", State.REVIEW),
        ("approve", State.REVIEW),
        ("subagent", State.REVIEW),
        ("parallel", State.REVIEW),
        ("error_429", State.REVIEW),
        ("print", State.IDLE),  # SessionEnd(other) after the Stop
        ("compact", State.REVIEW),  # /compact after a reviewed turn changes nothing
        ("deny", State.NEEDS_INPUT),  # hooks alone: "No" fires no hook (the PID file tells)
    ],
)
def test_recorded_hooks_through_the_tracker(scenario, final_state):
    signals = []
    for i, entry in enumerate(hooks(scenario)):
        parsed = s.parse_hook(payload_of(entry), at=1_000 + i)
        assert not isinstance(parsed, s.Invalid), parsed
        signals.append(parsed)
    step = reduce_all({}, signals, now=10_000)
    main = [x for x in step.sessions.values() if x.state is final_state]
    assert main, {k: v.state for k, v in step.sessions.items()}
    assert all(x.subagents == 0 for x in step.sessions.values())


def test_recorded_hooks_parse_for_every_scenario():
    for scenario in SCENARIOS:
        for entry in hooks(scenario):
            assert not isinstance(s.parse_hook(payload_of(entry), at=1), s.Invalid)


# ----------------------------------------------------------- every recorded version, every run
ALL_RUNS = sorted(p.parent for p in (REAL.parent).glob("*/*/hooks.jsonl"))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("run", ALL_RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_recorded_event_and_field_is_read_safely(run):
    """Each hook and PID file that Claude Code 2.1.197 and 2.1.332 wrote in a recorded run
    parses (unknown events and fields are ignored, never refused) and goes through the
    tracker without an error, in the order they came."""
    signals: list[s.Signal] = []
    for i, entry in enumerate(_lines(run / "hooks.jsonl")):
        parsed = s.parse_hook(payload_of(entry), at=1_000 + i)
        assert not isinstance(parsed, s.Invalid), (run.name, parsed)
        signals.append(parsed)
    pid_files = run / "pid-files.jsonl"
    if pid_files.exists():
        for i, data in enumerate(_lines(pid_files)):
            if data is None:  # the recorder's mark for "the PID file is gone"
                continue
            record = s.parse_pid_record(data)
            assert not isinstance(record, s.Invalid), (run.name, record)
            signals.append(s.PidFile(at=2_000 + i, record=record))
    step = reduce_all({}, signals, now=10_000)
    assert step.sessions or not signals


def test_both_versions_were_recorded():
    versions = {run.parent.name for run in ALL_RUNS}
    assert {"2.1.197", "2.1.332"} <= versions
    events = {
        payload_of(e).get("hook_event_name")
        for run in ALL_RUNS
        for e in _lines(run / "hooks.jsonl")
    }
    # the events the rules read, as the real CLIs sent them
    assert {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
            "StopFailure", "SubagentStart", "SubagentStop", "SessionEnd"} <= events  # fmt: skip
