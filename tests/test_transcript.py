"""Transcript tailer: hand-computed expectations on our fixtures, live appends, bad files.

The fixtures under ``tests/fixtures/transcripts`` are made up (a weather-station project).
Every expected number below is worked out by hand from the rules (main thread only; tokens
grouped per (message.id, requestId), input/cache once per group, output = max over the group;
context = input + cache_creation + cache_read of the last counted assistant line), with the
arithmetic in a comment. Nothing here is copied from the implementation's output.
"""

from __future__ import annotations

import calendar
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmux_widget.agents.claude.transcript import (
    MAX_LINE,
    TranscriptFacts,
    TranscriptTailer,
    is_interrupt_marker,
    parse_timestamp,
    scan_transcript,
    scan_transcript_stats,
    subagent_summary,
)
from pmux_widget.core.model import Tokens
from pmux_widget.core.signals import TranscriptUpdate

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
CWD = "/home/maya/code/weather-station"
MODEL = "claude-opus-4-1-20250805"


def ms(iso: str) -> int:
    """ms epoch of ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (independent of the module's parser)."""
    seconds = calendar.timegm(time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1000 + int(iso[20:23])


def tokens(inp: int, out: int, cache_read: int, cache_creation: int) -> Tokens:
    return Tokens(input=inp, output=out, cache_read=cache_read, cache_creation=cache_creation)


def lines_of(name: str) -> list[bytes]:
    return (FIXTURES / name).read_bytes().splitlines(keepends=True)


def write(path: Path, data: bytes, mode: str = "wb") -> None:
    with open(path, mode) as fh:
        fh.write(data)


# ------------------------------------------------------------------ fixture expectations


def test_simple() -> None:
    facts, stats = scan_transcript_stats(FIXTURES / "simple.jsonl")
    # A: 2 lines, same id/requestId: input 6, cache_creation 1500, cache_read 9000 once;
    #    output max(5, 64) = 64.  B: 1 line, 3 / 250 / 10500, output 38.
    # input 6 + 3 = 9; output 64 + 38 = 102; cache_read 9000 + 10500 = 19500;
    # cache_creation 1500 + 250 = 1750.
    assert facts.tokens == tokens(9, 102, 19500, 1750)
    assert facts.context_tokens == 3 + 250 + 10500  # B, the last assistant line: 10753
    assert facts.model == MODEL
    assert facts.last_assistant == (
        "The drift comes from `baro.py` resetting its offset at 00:00 local time; "
        "it should use UTC."
    )
    assert facts.last_prompt == "Why does the barometer reading drift after midnight?"
    assert facts.current_tool is None  # the Grep has its tool_result
    assert facts.tool_summary is None
    assert facts.api_error is None
    assert facts.ending == "clean"  # B: end_turn with text, nothing pending
    # the newest record is the system turn_duration line (metadata lines have no timestamp)
    assert facts.last_record_at == ms("2026-07-02T08:00:05.600Z")
    assert facts.cwd == CWD
    assert facts.compactions == 0
    # 8 lines: snapshot, prompt, ai-title, A1, A2, result, B, system — all records
    assert (stats.records, stats.unparseable, stats.blank) == (8, 0, 0)


def test_interrupted() -> None:
    tailer = TranscriptTailer(FIXTURES / "interrupted.jsonl")
    result = tailer.poll()
    facts = result.facts
    # C (1 line): 4 / 800 / 7000, out 2.  D (3 lines): 5 / 300 / 7800, out max(11, 11, 97) = 97.
    # E (1 line): 2 / 450 / 8100, out 40.
    # input 4 + 5 + 2 = 11; output 2 + 97 + 40 = 139; cache_read 7000 + 7800 + 8100 = 22900;
    # cache_creation 800 + 300 + 450 = 1550.
    assert facts.tokens == tokens(11, 139, 22900, 1550)
    assert facts.context_tokens == 2 + 450 + 8100  # E: 8552
    # E is a tool_use only; the last text block is D's
    assert facts.last_assistant == "I'll edit the retry limit."
    assert facts.last_prompt == "Never mind. Bump the retry limit in ci/config.yml to 5."
    assert facts.current_tool is None  # Bash was answered (and the markers clear it anyway)
    assert facts.ending == "interrupt"
    # markers: the standalone streaming one and the standalone tool-use marker, in file
    # order; the Bash tool_result that quotes the marker text is not one (issue 11 item 4)
    assert result.interrupts == [
        ms("2026-07-02T09:10:02.250Z"),
        ms("2026-07-02T09:10:31.005Z"),
    ]
    assert facts.last_record_at == ms("2026-07-02T09:10:31.005Z")


def test_interrupted_before_the_interrupt(tmp_path: Path) -> None:
    """The first 9 lines end with the Bash tool_use: it is the current tool."""
    path = tmp_path / "t.jsonl"
    write(path, b"".join(lines_of("interrupted.jsonl")[:9]))
    result = TranscriptTailer(path).poll()
    assert result.facts.current_tool == "Bash"
    assert result.facts.tool_summary == "$ make ci-check"  # first line of the command
    assert result.facts.ending == "open"
    assert result.interrupts == [ms("2026-07-02T09:10:02.250Z")]


def test_split_message() -> None:
    facts = scan_transcript(FIXTURES / "split_message.jsonl")
    # F: 4 lines (thinking, text, Read, Grep), 9 / 2100 / 12000 each, outputs 14, 14, 233, 233
    #    → out 233.  G: 2 byte-identical lines, 3 / 1200 / 14100, out 176.
    # input 9 + 3 = 12; output 233 + 176 = 409; cache_read 12000 + 14100 = 26100;
    # cache_creation 2100 + 1200 = 3300.  (Summing every line would give input 42.)
    assert facts.tokens == tokens(12, 409, 26100, 3300)
    assert facts.context_tokens == 3 + 1200 + 14100  # 15303
    assert facts.last_assistant == (
        "Calibration happens once, in `hygro.apply_offset()`; the API only formats the value."
    )
    assert facts.current_tool is None
    assert facts.ending == "clean"


@pytest.mark.parametrize(
    ("count", "tool", "summary"),
    [
        (5, "Grep", 'Grep "calibrat"'),  # Read and Grep pending: the newest, Grep
        (6, "Read", f"Read {CWD}/drivers/hygro.py"),  # Grep answered first: Read still waits
        (7, None, None),
    ],
)
def test_split_message_pending_tools(
    tmp_path: Path, count: int, tool: str | None, summary: str | None
) -> None:
    path = tmp_path / "t.jsonl"
    write(path, b"".join(lines_of("split_message.jsonl")[:count]))
    facts = scan_transcript(path)
    assert (facts.current_tool, facts.tool_summary) == (tool, summary)


def test_compacted() -> None:
    facts = scan_transcript(FIXTURES / "compacted.jsonl")
    # H: 4 / 3000 / 90000, out 300.  I: 2 / 700 / 93000, out 120.
    # J (2 lines): 5 / 4200 / 3500, out max(3, 150) = 150.  K: 3 / 300 / 7900, out 25.
    # input 4 + 2 + 5 + 3 = 14; output 300 + 120 + 150 + 25 = 595;
    # cache_read 90000 + 93000 + 3500 + 7900 = 194400; cache_creation 3000 + 700 + 4200 + 300
    # = 8200.
    assert facts.tokens == tokens(14, 595, 194400, 8200)
    assert facts.compactions == 1
    assert facts.context_tokens == 3 + 300 + 7900  # 8203, far below I's 700 + 93000 + 2
    assert facts.last_assistant == 'The y-axis now reads "Wind speed (km/h)".'
    # the compact summary is not a prompt; the prompt after it is the last one
    assert facts.last_prompt == "Also label the axis in km/h."
    assert facts.ending == "clean"


def test_sidechain_legacy_inline() -> None:
    facts = scan_transcript(FIXTURES / "sidechain.jsonl")
    # main thread: L (2 lines) 3 / 900 / 6000, out max(6, 71) = 71; sidechain lines skipped
    assert facts.tokens == tokens(3, 71, 6000, 900)
    assert facts.context_tokens == 3 + 900 + 6000  # 6903
    assert facts.last_assistant == "I'll ask a sub-agent to search the whole tree."
    assert facts.last_prompt == "Find all callers of the deprecated `read_raw()`."
    assert facts.current_tool == "Task"  # the sub-agent's Grep is answered and not ours
    assert facts.tool_summary == "Task Find read_raw callers"
    assert facts.ending == "open"
    # the newest record is the sub-agent's last one: the session is active
    assert facts.last_record_at == ms("2026-07-02T12:00:06.000Z")


def test_sidechain_all_records() -> None:
    facts = scan_transcript(FIXTURES / "sidechain.jsonl", main_thread_only=False)
    # + M: 10 / 3000 / 0, out 44; + N: 7 / 200 / 3000, out 90
    # input 3 + 10 + 7 = 20; output 71 + 44 + 90 = 205; cache_read 6000 + 0 + 3000 = 9000;
    # cache_creation 900 + 3000 + 200 = 4100
    assert facts.tokens == tokens(20, 205, 9000, 4100)


def test_subagents_layout() -> None:
    main = FIXTURES / "subagents_layout" / "8c0e2a4b-6d8f-4a0c-9e2b-4d6f8a0c2e4f.jsonl"
    facts = scan_transcript(main)
    # S (2 lines): 2 / 500 / 5000, out max(3, 80) = 80
    assert facts.tokens == tokens(2, 80, 5000, 500)
    assert facts.current_tool == "Agent"
    assert facts.tool_summary == "Agent Audit drivers"
    summary = subagent_summary(main)
    # agent X: P (2 lines) 8 / 2500 / 0, out max(4, 52) = 52; Q 6 / 150 / 2500, out 61
    # agent Y (workflows/wf_7c1e): R 5 / 1000 / 0, out 30; journal.jsonl is not an agent
    # input 8 + 6 + 5 = 19; output 52 + 61 + 30 = 143; cache_read 0 + 2500 + 0 = 2500;
    # cache_creation 2500 + 150 + 1000 = 3650
    assert summary.count == 2
    assert summary.tokens == tokens(19, 143, 2500, 3650)


def test_subagent_summary_without_subagents(tmp_path: Path) -> None:
    summary = subagent_summary(tmp_path / "nope.jsonl")
    assert (summary.count, summary.tokens) == (0, Tokens())


def test_api_error_then_cleared(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "api_error.jsonl", path)
    tailer = TranscriptTailer(path)
    facts = tailer.poll().facts
    assert facts.api_error == "API Error: 529 Overloaded. Please try again later."
    assert facts.last_assistant is None  # the error text is not an answer
    assert facts.model is None  # <synthetic> is not a model
    assert facts.tokens == Tokens() and facts.context_tokens == 0
    assert facts.ending == "open"  # API-error lines are ignored: the prompt is the last record
    # a later prompt clears it
    prompt = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": "try again"},
        "uuid": "90000000-0000-4900-8000-000000009003",
        "timestamp": "2026-07-02T14:01:00.000Z",
    }
    write(path, (json.dumps(prompt) + "\n").encode(), "ab")
    facts = tailer.poll().facts
    assert facts.api_error is None
    assert facts.last_prompt == "try again"


def test_api_error_cleared_by_a_normal_answer(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    answer = assistant_record(7, "msg_after_error", "req_after_error", [text_block("Done.")])
    write(path, (FIXTURES / "api_error.jsonl").read_bytes() + encode(answer))
    facts = scan_transcript(path)
    assert facts.api_error is None
    assert facts.last_assistant == "Done."
    assert facts.ending == "clean"


def test_malformed_live_and_batch() -> None:
    path = FIXTURES / "malformed.jsonl"
    tailer = TranscriptTailer(path)
    facts = tailer.poll().facts
    # counted: T (Edit) 3 / 600 / 11000, out 88; U (text) 2 / 150 / 11600, out 31.
    # The `{"type":"assistant",…,,}` line looks like usage but is not JSON; the torn last line
    # (no newline yet) is not read.
    # input 3 + 2 = 5; output 88 + 31 = 119; cache_read 11000 + 11600 = 22600;
    # cache_creation 600 + 150 = 750
    assert facts.tokens == tokens(5, 119, 22600, 750)
    assert facts.context_tokens == 2 + 150 + 11600  # 11752
    assert facts.last_assistant == "Renamed in models.py and the two migrations."
    assert facts.current_tool is None
    assert facts.ending == "clean"
    # lines: prompt, T, "", {"oops…, result, torn system, "  \t ", binary, bad usage, U,
    # then the unterminated line (pending in a live tail)
    stats = tailer.stats
    assert (stats.records, stats.unparseable, stats.blank) == (4, 4, 2)
    batch_facts, batch = scan_transcript_stats(path)
    assert batch_facts == facts
    assert (batch.records, batch.unparseable, batch.blank) == (4, 5, 2)


def test_malformed_torn_line_completes(tmp_path: Path) -> None:
    """The unterminated last line is parsed once the rest of it and its newline arrive."""
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "malformed.jsonl", path)
    tailer = TranscriptTailer(path)
    tailer.poll()
    # the torn line is V: text "Also updated the fixtures.", 4 / 100 / 11800, out 9
    torn = lines_of("malformed.jsonl")[-1]
    rest_of_v = (
        b'e fixtures."}],"stop_reason":"end_turn","stop_sequence":null,"usage":'
        b'{"input_tokens":4,"cache_creation_input_tokens":100,"cache_read_input_tokens":11800,'
        b'"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":0},'
        b'"output_tokens":9,"service_tier":"standard"}},"requestId":"req_011CMalVVVtornV",'
        b'"type":"assistant","uuid":"70000000-0000-4700-8000-000000007006",'
        b'"timestamp":"2026-07-02T15:00:04.500Z"}\n'
    )
    assert torn.endswith(b"Also updated th")
    write(path, rest_of_v, "ab")
    facts = tailer.poll().facts
    assert facts.tokens == tokens(5 + 4, 119 + 9, 22600 + 11800, 750 + 100)
    assert facts.last_assistant == "Also updated the fixtures."
    assert tailer.stats.unparseable == 4  # unchanged: the torn line was never an error


def test_to_update() -> None:
    facts = scan_transcript(FIXTURES / "sidechain.jsonl")
    update = facts.to_update("sid-1", "/t.jsonl", live=False)
    assert isinstance(update, TranscriptUpdate)
    assert update.at == facts.last_record_at
    assert (update.session_id, update.transcript_path, update.live) == ("sid-1", "/t.jsonl", False)
    assert (update.current_tool, update.tool_summary) == ("Task", "Task Find read_raw callers")
    assert update.tokens == facts.tokens and update.ending == "open" and update.cwd == CWD


# ----------------------------------------------------------------------- small helpers


def test_parse_timestamp() -> None:
    assert parse_timestamp("2026-07-02T08:00:05.600Z") == ms("2026-07-02T08:00:05.600Z")
    assert parse_timestamp("2026-07-02T08:00:05.600+00:00") == ms("2026-07-02T08:00:05.600Z")
    assert parse_timestamp("2026-07-02T10:00:05.600+02:00") == ms("2026-07-02T08:00:05.600Z")
    assert parse_timestamp("2026-07-02T08:00:05.600") == ms("2026-07-02T08:00:05.600Z")
    for bad in (None, "", "yesterday", 12, "2026-13-45T99:00:00Z"):
        assert parse_timestamp(bad) is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("[Request interrupted by user]", True),
        ([{"type": "text", "text": "[Request interrupted by user for tool use]"}], True),
        ([{"type": "text", "text": "[Request interrupted by user] please"}], False),
        (
            [
                {"type": "text", "text": "[Request interrupted by user]"},
                {"type": "text", "text": "and more"},
            ],
            False,
        ),
        (
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": "Exit code 1\n[Request interrupted by user for tool use]",
                }
            ],
            False,
        ),
        (
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": [
                        {"type": "text", "text": "[Request interrupted by user for tool use]"}
                    ],
                }
            ],
            False,
        ),
        (
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": "[Request interrupted by user]",
                }
            ],
            False,
        ),
        ("Why was the [Request interrupted by user] marker written?", False),
    ],
)
def test_is_interrupt_marker(content: object, expected: bool) -> None:
    record = {"type": "user", "message": {"role": "user", "content": content}}
    assert is_interrupt_marker(record) is expected
    assert is_interrupt_marker({**record, "isSidechain": True}) is False
    assert is_interrupt_marker({**record, "type": "assistant"}) is False


# ------------------------------------------------------------------- record builders

SID = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"


def stamp(i: int) -> str:
    seconds, millis = divmod(1_783_000_000_000 + i * 137, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def encode(record: dict[str, object]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def text_block(text: str) -> dict[str, object]:
    return {"type": "text", "text": text}


def user_record(i: int, content: object, **extra: object) -> dict[str, object]:
    record: dict[str, object] = {
        "parentUuid": None,
        "isSidechain": False,
        "promptId": "00000000-0000-4000-8000-000000000000",
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": f"u-{i}",
        "timestamp": stamp(i),
    }
    record.update(extra)
    record.update({"cwd": CWD, "sessionId": SID, "version": "2.1.197"})
    return record


def assistant_record(
    i: int,
    mid: str | None,
    rid: str | None,
    content: list[dict[str, object]],
    *,
    stop: str | None = "end_turn",
    usage: tuple[int, int, int, int] = (1, 2, 3, 4),
    layout: str = "id-first",
    side: bool = False,
    model: str = MODEL,
    api_error: bool = False,
) -> dict[str, object]:
    """An assistant line in one of the CLI's layouts (``usage``: in, cache_creation,
    cache_read, out)."""
    inp, cc, cr, out = usage
    if layout == "model-first":
        message: dict[str, object] = {"model": model, "id": mid}
        message.update({"type": "message", "role": "assistant"})
        message.update({"content": content, "stop_reason": stop, "stop_sequence": None})
        message["usage"] = {
            "input_tokens": inp,
            "cache_creation_input_tokens": cc,
            "cache_read_input_tokens": cr,
            "cache_creation": {"ephemeral_5m_input_tokens": cc, "ephemeral_1h_input_tokens": 0},
            "output_tokens": out,
            "service_tier": "standard",
        }
    else:
        message = {"id": mid, "type": "message", "role": "assistant", "model": model}
        message.update({"content": content, "stop_reason": stop, "stop_sequence": None})
        message["usage"] = {
            "input_tokens": inp,
            "cache_creation_input_tokens": cc,
            "cache_read_input_tokens": cr,
            "output_tokens": out,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": cc},
            "inference_geo": "",
            "iterations": [],
            "speed": "standard",
        }
        message["stop_details"] = None
    if mid is None:
        del message["id"]
    record: dict[str, object] = {"parentUuid": f"u-{i - 1}", "isSidechain": side}
    if side:
        record["agentId"] = "a0123456789abcdef"
    record["message"] = message
    if rid is not None:
        record["requestId"] = rid
    record.update({"type": "assistant", "uuid": f"a-{i}", "timestamp": stamp(i)})
    if api_error:
        record.update({"isApiErrorMessage": True, "error": "rate_limit"})
    record.update({"cwd": CWD, "sessionId": SID, "version": "2.1.197"})
    return record


TEXTS = st.text(
    alphabet=st.sampled_from(list('abc xyz\u00e9\u00fc\u65e5\u672c\U0001f600\u2192"\\\t')),
    min_size=0,
    max_size=24,
)


@st.composite
def transcripts(draw: st.DrawFn) -> bytes:
    """A fixture-like transcript: turns of prompts, split responses, tool calls and results,
    markers, API errors, sidechain and metadata lines, junk; UTF-8 text of 1–4 bytes/char."""
    out: list[bytes] = []
    pending: list[str] = []
    n = 0
    for _ in range(draw(st.integers(1, 7))):
        n += 1
        kind = draw(
            st.sampled_from(
                [
                    "prompt",
                    "response",
                    "response",
                    "results",
                    "marker",
                    "api_error",
                    "meta",
                    "side",
                    "junk",
                    "compact",
                    "wrapper",
                ]
            )
        )
        if kind == "prompt":
            out.append(encode(user_record(n, draw(TEXTS) + "?")))
            pending = []
        elif kind in ("response", "side"):
            mid, rid = f"msg_{n}", f"req_{n}"
            inp, cc, cr = (draw(st.integers(0, 50)) for _ in range(3))
            layout = draw(st.sampled_from(["id-first", "model-first"]))
            lines = draw(st.integers(1, 4))
            outs = sorted(draw(st.lists(st.integers(0, 900), min_size=lines, max_size=lines)))
            for j, out_tokens in enumerate(outs):
                n += 1
                block_kind = draw(st.sampled_from(["text", "tool", "thinking"]))
                if block_kind == "text":
                    block = text_block(draw(TEXTS))
                elif block_kind == "tool":
                    tid = f"toolu_{n}"
                    pending.append(tid)
                    block = {
                        "type": "tool_use",
                        "id": tid,
                        "name": draw(st.sampled_from(["Bash", "Read", "Grep", "mcp__x__y"])),
                        "input": {"command": draw(TEXTS), "file_path": "/f", "pattern": "p"},
                    }
                else:
                    block = {"type": "thinking", "thinking": draw(TEXTS), "signature": "c2ln"}
                stop = draw(st.sampled_from([None, "end_turn", "tool_use"])) if j else None
                out.append(
                    encode(
                        assistant_record(
                            n,
                            mid,
                            rid,
                            [block],
                            stop=stop,
                            usage=(inp, cc, cr, out_tokens),
                            layout=layout,
                            side=kind == "side",
                        )
                    )
                )
        elif kind == "results" and pending:
            for tid in draw(st.permutations(pending)):
                n += 1
                out.append(
                    encode(
                        user_record(
                            n, [{"tool_use_id": tid, "type": "tool_result", "content": draw(TEXTS)}]
                        )
                    )
                )
            pending = []
        elif kind == "marker":
            marker = draw(
                st.sampled_from(
                    ["[Request interrupted by user]", "[Request interrupted by user for tool use]"]
                )
            )
            out.append(encode(user_record(n, [text_block(marker)])))
        elif kind == "api_error":
            out.append(
                encode(
                    assistant_record(
                        n,
                        f"e{n}",
                        None,
                        [text_block("API Error: x")],
                        model="<synthetic>",
                        api_error=True,
                    )
                )
            )
        elif kind == "meta":
            out.append(encode({"type": "ai-title", "aiTitle": draw(TEXTS), "sessionId": SID}))
        elif kind == "junk":
            junk = [b"\n", b"  \n", b"{oops\n", b"\xff\xfe\x00\n", b'{"parentUuid":"x"}\n',
                    b'{"parentUuid":null}\n', b'{"type":"u"}\n', b"{}\n"]  # fmt: skip
            real = [line.rstrip(b"\n") for line in out if line.strip()]
            if real:  # a real line cut short but still looking like {…}
                line = draw(st.sampled_from(real))
                junk.append(line[: draw(st.integers(1, len(line)))] + b"}\n")
            out.append(draw(st.sampled_from(junk)))
        elif kind == "compact":
            out.append(
                encode(
                    {
                        "parentUuid": None,
                        "isSidechain": False,
                        "type": "system",
                        "subtype": "compact_boundary",
                        "timestamp": stamp(n),
                    }
                )
            )
        else:
            out.append(encode(user_record(n, "<command-name>/model</command-name>")))
    return b"".join(out)


# --------------------------------------------------------------------------- live tails


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=transcripts(), cuts=st.lists(st.integers(0, 1 << 16), max_size=8), st_data=st.data())
def test_live_append_equals_batch(
    tmp_path: Path, data: bytes, cuts: list[int], st_data: st.DataObject
) -> None:
    """Appending in random pieces (inside lines, inside UTF-8 characters), polling between
    pieces, ends with the facts of one batch scan; each marker is reported once."""
    name = st_data.draw(st.sampled_from(["", "simple.jsonl", "interrupted.jsonl"]))
    if name:
        data = (FIXTURES / name).read_bytes() + data
    # a small max_line makes some lines "oversized": skipped the same way live and cold
    max_line = st_data.draw(st.sampled_from([MAX_LINE, MAX_LINE, 400, 900]))
    path = tmp_path / f"live-{os.urandom(4).hex()}.jsonl"
    points = sorted({c % (len(data) + 1) for c in cuts} | {len(data)})
    write(path, b"")
    tailer = TranscriptTailer(path, max_line=max_line)
    seen: list[int] = []
    done = 0
    for point in points:
        write(path, data[done:point], "ab")
        done = point
        seen.extend(tailer.poll().interrupts)
    result = tailer.poll()
    seen.extend(result.interrupts)
    batch = TranscriptTailer(path, max_line=max_line)
    cold = batch.poll()
    assert result.facts == cold.facts
    if max_line == MAX_LINE:
        assert cold.facts == scan_transcript(path)
    assert seen == cold.interrupts
    assert tailer.stats.bytes_read == len(data)
    counters = ("records", "unparseable", "blank", "oversized")
    assert [getattr(tailer.stats, c) for c in counters] == [
        getattr(batch.stats, c) for c in counters
    ]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 3),  # response number: repeats make split responses
            st.tuples(*(st.integers(0, 10**6) for _ in range(4))),
            st.sampled_from(["id-first", "model-first"]),
            st.booleans(),  # sidechain
            st.sampled_from(["req", None]),
        ),
        max_size=12,
    )
)
def test_fast_path_equals_json(tmp_path: Path, rows: list) -> None:
    """Lines in the CLI's layouts (fast path) count exactly like the same records written
    with sorted keys (json fallback), and like a brute-force dedup."""
    fast, slow = [], []
    groups: dict[tuple[str, str], list[int]] = {}
    order: list[tuple[str, str]] = []
    last_context = 0
    model = None
    for i, (resp, usage, layout, side, rid) in enumerate(rows):
        mid, req = f"msg_{resp}", (f"req_{resp}" if rid else None)
        record = assistant_record(
            i, mid, req, [text_block("t")], usage=usage, layout=layout, side=side
        )
        fast.append(encode(record))
        slow.append((json.dumps(record, sort_keys=True) + "\n").encode())
        if not side:
            key = (mid, req or "")
            if key not in groups:
                order.append(key)
            groups.setdefault(key, []).append(i)
            last_context = usage[0] + usage[1] + usage[2]
            model = MODEL
    (tmp_path / "fast.jsonl").write_bytes(b"".join(fast))
    (tmp_path / "slow.jsonl").write_bytes(b"".join(slow))
    a, b = scan_transcript(tmp_path / "fast.jsonl"), scan_transcript(tmp_path / "slow.jsonl")
    assert (a.tokens, a.context_tokens, a.model) == (b.tokens, b.context_tokens, b.model)
    # brute force: every group counted once, output = max over its lines
    expected = [0, 0, 0, 0]
    for key in order:
        members = [rows[i][1] for i in groups[key]]
        inp, cc, cr, _ = members[0]
        expected[0] += inp
        expected[1] += max(m[3] for m in members)
        expected[2] += cr
        expected[3] += cc
    assert a.tokens == tokens(*expected)
    assert (a.context_tokens, a.model) == (last_context, model)


def test_record_without_message_id_is_its_own_group(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    one = assistant_record(1, None, None, [text_block("a")], usage=(1, 10, 100, 5))
    two = assistant_record(2, None, None, [text_block("b")], usage=(1, 10, 100, 5))
    write(path, encode(one) + encode(two))
    # two groups keyed by uuid: 1 + 1, 5 + 5, 100 + 100, 10 + 10
    assert scan_transcript(path).tokens == tokens(2, 10, 200, 20)


# --------------------------------------------------------------------------- bad files


def test_missing_file_then_created(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    tailer = TranscriptTailer(path)
    result = tailer.poll()
    assert (result.changed, result.facts, result.bytes_read) == (False, TranscriptFacts(), 0)
    assert tailer.stats.missing == 1
    shutil.copy(FIXTURES / "simple.jsonl", path)
    assert tailer.poll().facts == scan_transcript(FIXTURES / "simple.jsonl")


def test_truncation_rescans(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "compacted.jsonl", path)
    tailer = TranscriptTailer(path)
    tailer.poll()
    inode = path.stat().st_ino
    with open(path, "r+b") as fh:  # same inode, shorter: the first 4 lines
        fh.truncate(len(b"".join(lines_of("compacted.jsonl")[:4])))
    assert path.stat().st_ino == inode
    facts = tailer.poll().facts
    assert tailer.stats.rescans == 1
    # H + I only: 4 + 2, 300 + 120, 90000 + 93000, 3000 + 700
    assert facts.tokens == tokens(6, 420, 183000, 3700)
    assert facts.compactions == 0
    assert facts == scan_transcript(path)


def test_replacement_rescans(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "compacted.jsonl", path)
    tailer = TranscriptTailer(path)
    tailer.poll()
    other = tmp_path / "other.jsonl"
    shutil.copy(FIXTURES / "interrupted.jsonl", other)
    os.replace(other, path)  # new inode, and longer than before
    result = tailer.poll()
    assert tailer.stats.rescans == 1
    assert result.facts == scan_transcript(FIXTURES / "interrupted.jsonl")
    assert len(result.interrupts) == 2  # the new file's markers are new


def test_deleted_and_recreated(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "split_message.jsonl", path)
    tailer = TranscriptTailer(path)
    before = tailer.poll().facts
    path.unlink()
    result = tailer.poll()
    assert (result.changed, result.facts) == (False, before)  # keeps what it knew
    assert tailer.stats.missing == 1
    shutil.copy(FIXTURES / "simple.jsonl", path)  # may even get the old inode back
    assert tailer.poll().facts == scan_transcript(FIXTURES / "simple.jsonl")
    assert tailer.stats.rescans == 1


def test_directory_at_the_path(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.mkdir()
    tailer = TranscriptTailer(path)
    assert tailer.poll().facts == TranscriptFacts()
    assert tailer.stats.read_errors == 1 and tailer.stats.last_error
    path.rmdir()
    shutil.copy(FIXTURES / "simple.jsonl", path)
    assert tailer.poll().facts == scan_transcript(FIXTURES / "simple.jsonl")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root reads files whatever their mode; test_directory_at_the_path covers unreadable",
)
def test_permission_denied(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "simple.jsonl", path)
    path.chmod(0)
    tailer = TranscriptTailer(path)
    try:
        assert tailer.poll().facts == TranscriptFacts()
        assert tailer.stats.read_errors == 1
    finally:
        path.chmod(0o600)
    assert tailer.poll().facts == scan_transcript(FIXTURES / "simple.jsonl")


def huge_user_line(size: int) -> bytes:
    record = user_record(50, [{"tool_use_id": "toolu_huge", "type": "tool_result", "content": ""}])
    head, tail = encode(record).split(b'"content":""', 1)
    return head + b'"content":"' + b"x" * size + b'"' + tail


def test_twenty_megabyte_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    before = lines_of("simple.jsonl")
    after = encode(
        assistant_record(60, "msg_after", "req_after", [text_block("after")], usage=(1, 2, 3, 4))
    )
    huge = huge_user_line(20 << 20)
    write(path, b"".join(before))
    tailer = TranscriptTailer(path)
    tailer.poll()
    # the huge line arrives in three pieces, then the next line
    for piece in (huge[: 7 << 20], huge[7 << 20 : 15 << 20], huge[15 << 20 :]):
        write(path, piece, "ab")
        tailer.poll()
        assert tailer._partial_len <= MAX_LINE  # never buffered whole
    write(path, after, "ab")
    facts = tailer.poll().facts
    assert tailer.stats.oversized == 1
    # simple's totals (9, 102, 19500, 1750) + the last line (1, 4, 3, 2)
    assert facts.tokens == tokens(10, 106, 19503, 1752)
    assert facts.last_assistant == "after"
    # a cold scan of the same file skips the line the same way
    cold_facts, cold_stats = scan_transcript_stats(path)
    assert cold_facts == facts and cold_stats.oversized == 1


def test_binary_junk(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = lines_of("simple.jsonl")
    junk = [os.urandom(300).replace(b"\n", b"") + b"\n" for _ in range(5)]
    mixed = [good[0], junk[0], *good[1:4], junk[1], junk[2], *good[4:], junk[3], junk[4]]
    write(path, b"".join(mixed))
    facts, stats = scan_transcript_stats(path)
    assert facts == scan_transcript(FIXTURES / "simple.jsonl")
    assert stats.records == 8
    assert stats.unparseable + stats.blank == 5


# ---------------------------------------------------------------------------- cursors


@pytest.mark.parametrize("cut_inside_line", [False, True])
def test_cursor_round_trip(tmp_path: Path, cut_inside_line: bool) -> None:
    data = b"".join(
        (FIXTURES / n).read_bytes()
        for n in ("simple.jsonl", "interrupted.jsonl", "split_message.jsonl")
    )
    cut = len(b"".join(lines_of("simple.jsonl"))) + (500 if cut_inside_line else 0)
    path, ref_path = tmp_path / "t.jsonl", tmp_path / "ref.jsonl"
    write(path, data[:cut])
    write(ref_path, data[:cut])
    first = TranscriptTailer(path)
    first.poll()
    reference = TranscriptTailer(ref_path)  # one tailer that never stops
    reference.poll()
    cursor = json.loads(json.dumps(first.to_cursor()))
    resumed = TranscriptTailer.from_cursor(path, cursor)
    assert resumed.facts == first.facts
    write(path, data[cut:], "ab")
    write(ref_path, data[cut:], "ab")
    result = resumed.poll()
    expected = reference.poll()
    assert result.facts == expected.facts == scan_transcript(path)
    assert result.interrupts == expected.interrupts
    assert result.bytes_read == len(data) - cut  # nothing read twice


def test_cursor_of_a_replaced_file_rescans(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "compacted.jsonl", path)
    tailer = TranscriptTailer(path)
    tailer.poll()
    cursor = tailer.to_cursor()
    other = tmp_path / "other.jsonl"
    shutil.copy(FIXTURES / "split_message.jsonl", other)
    os.replace(other, path)
    resumed = TranscriptTailer.from_cursor(path, cursor)
    assert resumed.poll().facts == scan_transcript(path)
    assert resumed.stats.rescans == 1


@pytest.mark.parametrize(
    "cursor",
    [None, "x", {}, {"version": 99}, {"version": 1, "offset": "a"}, {"version": 1, "offset": 5}],
)
def test_unusable_cursor_starts_over(tmp_path: Path, cursor: object) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "simple.jsonl", path)
    tailer = TranscriptTailer.from_cursor(path, cursor)
    assert tailer.poll().facts == scan_transcript(path)


def test_append_reads_only_the_new_bytes(tmp_path: Path) -> None:
    """P6's shape: after a cold scan, one appended line costs exactly its own bytes."""
    path = tmp_path / "t.jsonl"
    body = b"".join((FIXTURES / "interrupted.jsonl").read_bytes() for _ in range(200))
    write(path, body)
    tailer = TranscriptTailer(path)
    tailer.poll()
    line = encode(assistant_record(9000, "msg_new", "req_new", [text_block("y" * 1500)]))
    write(path, line, "ab")
    result = tailer.poll()
    assert result.bytes_read == len(line)
    assert result.changed and result.facts.last_assistant == "y" * 199 + "…"
    assert result.facts == scan_transcript(path)
    assert tailer.poll().bytes_read == 0  # nothing new: nothing read


def test_first_turn_written_before_its_prompt_keeps_the_pending_tool():
    """Recorded with the real CLI 2.1.197 (about 1 run in 4): the first turn's assistant
    text and tool_use lines (16:20:26.344/.349) are written BEFORE the user prompt record
    (16:20:26.124). The prompt must not clear the tool it came before in time."""
    path = FIXTURES / "out_of_order_first_turn.jsonl"
    facts = scan_transcript(path)
    assert (facts.current_tool, facts.tool_summary) == ("Bash", "$ touch sim-2.txt")
    assert facts.last_prompt == "please run the command"
    assert facts.ending == "open"
    assert facts.last_assistant == "I'll create the marker file."
    # the newest record time, not the last line's (the late prompt is older)
    assert facts.last_record_at == 1795969226349
    assert TranscriptTailer(path).poll().facts == facts


def test_first_turn_out_of_order_appended_line_by_line(tmp_path):
    source = (FIXTURES / "out_of_order_first_turn.jsonl").read_bytes()
    target = tmp_path / "t.jsonl"
    tailer = TranscriptTailer(target)
    with target.open("ab") as handle:
        for line in source.splitlines(keepends=True):
            handle.write(line)
            handle.flush()
            tailer.poll()
    assert tailer.facts == scan_transcript(FIXTURES / "out_of_order_first_turn.jsonl")
    assert tailer.facts.current_tool == "Bash"


def test_a_task_notification_wake_up_is_no_user_prompt(tmp_path):
    """2.1.332 submits a <task-notification> prompt itself when a background agent ends: the
    turn it starts is real, but last_prompt keeps the user's."""
    path = tmp_path / "t.jsonl"
    wake = "<task-notification>\n<task-id>a1</task-id>\n<summary>Agent done</summary>\n"
    records = [
        user_record(1, "start a background agent please"),
        assistant_record(2, "m1", "r1", [text_block("Researching.")]),
        user_record(3, wake + "</task-notification>"),
        assistant_record(4, "m2", "r2", [text_block("All 20 notes read.")]),
    ]
    write(path, b"".join(encode(r) for r in records))
    facts = scan_transcript(path)
    assert facts.last_prompt == "start a background agent please"
    assert facts.last_assistant == "All 20 notes read."
    assert facts.ending == "clean"


def _record(kind: str, at: str, content: object, **extra: object) -> bytes:
    message: dict[str, object] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{at[-7:-1]}", model=MODEL, stop_reason=extra.pop("stop", None))
    record = {
        "type": kind,
        "isSidechain": False,
        "timestamp": at,
        "cwd": CWD,
        "message": message,
        **extra,
    }
    return json.dumps(record).encode() + b"\n"


def test_item4_quoted_interrupt_marker_is_not_an_interrupt(tmp_path: Path) -> None:
    """Issue 11 item 4: a tool's output that quotes the marker (a grep of a transcript, a
    Read of a file) is no Esc; the real CLI's Esc recordings still give exactly one marker."""
    marker = "[Request interrupted by user for tool use]"
    path = tmp_path / "t.jsonl"
    grep = {"type": "tool_use", "id": "toolu_g", "name": "Grep", "input": {"pattern": "interr"}}
    write(
        path,
        _record("user", "2026-07-02T10:00:00.000Z", "Where do we detect Esc?")
        + _record("assistant", "2026-07-02T10:00:01.000Z", [grep], stop="tool_use")
        + _record(
            "user",
            "2026-07-02T10:00:02.000Z",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_g",
                    "content": f'old.jsonl:11:{{"content":[{{"text":"{marker}"}}]}}',
                }
            ],
        )
        + _record(
            "user",
            "2026-07-02T10:00:03.000Z",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_r",
                    "content": [{"type": "text", "text": f"1\tMARKER = {marker!r}\n2\t{marker}"}],
                }
            ],
        ),
    )
    result = TranscriptTailer(path).poll()
    assert result.interrupts == []
    assert result.facts.ending != "interrupt"
    # the standalone marker after them still counts
    write(
        path, _record("user", "2026-07-02T10:00:04.000Z", [{"type": "text", "text": marker}]), "ab"
    )
    assert TranscriptTailer(path).poll().interrupts == [ms("2026-07-02T10:00:04.000Z")]
    # real 2.1.197 recordings: Esc on a dialog and Esc while a tool runs write the rejected
    # tool_result and then the standalone marker, which is the one interrupt
    real = Path(__file__).parent / "fixtures" / "real" / "2.1.197"
    for name in ("esc_dialog", "esc_during_tool"):
        (transcript,) = (real / name / "transcripts").glob("*.jsonl")
        scanned = TranscriptTailer(transcript).poll()
        assert len(scanned.interrupts) == 1, name
