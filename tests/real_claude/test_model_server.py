"""Unit tests of the scripted Messages API server, over real HTTP (fast; no Claude CLI).

The server stands in for the Anthropic API when the real CLI runs in tests and the demo, so its
wire format (SSE framing, usage, request ids, errors) and its choice of scripted answer must be
right; these tests pin both down.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pmux_widget.demo.scenario_plans import load_scenarios
from pmux_widget.demo.scripted_model import ScriptedModel

SYSTEM = [
    {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197;"},
    {"type": "text", "text": "You are Claude Code.\n - Primary working directory: /work/proj\n"},
]
TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def user(*blocks: Any) -> dict[str, Any]:
    """A user message from text strings and block dicts."""
    content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    return {"role": "user", "content": content}


def tool_result(text: str = "ok", is_error: bool = False) -> dict[str, Any]:
    """A tool_result block."""
    return {"type": "tool_result", "tool_use_id": "toolu_x", "content": text, "is_error": is_error}


ASSISTANT = {"role": "assistant", "content": [{"type": "text", "text": "…"}]}


def body(*messages: dict[str, Any], stream: bool = True, tools: Any = TOOLS, **kw: Any) -> dict:
    """A request body like the CLI's."""
    return {
        "model": "claude-test",
        "messages": list(messages),
        "system": SYSTEM,
        "tools": tools,
        "stream": stream,
        "max_tokens": 1000,
        **kw,
    }


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    """One scripted model for the module, on an ephemeral port."""
    extra = {
        "name": "zz_fast_slow",
        "keywords": ["drip feed"],
        "turns": [{"content": [{"type": "text", "text": "abcdef"}], "chunks": 6, "delay": 0.05}],
    }
    m = ScriptedModel(load_scenarios([extra]))
    m.start()
    yield m
    m.stop()


def post(
    model: ScriptedModel,
    payload: Any,
    path: str = "/v1/messages?beta=true",
) -> tuple[int, dict[str, str], bytes]:
    """POST JSON; return (status, lower-cased headers, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=20)
    conn.request("POST", path, json.dumps(payload), {"content-type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    headers = {k.lower(): v for k, v in resp.getheaders()}
    conn.close()
    return resp.status, headers, data


def sse(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Parse an SSE body into (event, data) pairs, checking the framing strictly."""
    text = data.decode()
    assert text.endswith("\n\n")
    events = []
    for frame in text.split("\n\n")[:-1]:
        lines = frame.split("\n")
        assert len(lines) == 2, frame
        assert lines[0].startswith("event: ") and lines[1].startswith("data: ")
        name, payload = lines[0][7:], json.loads(lines[1][6:])
        assert payload["type"] == name
        events.append((name, payload))
    return events


def blocks_of(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Reassemble content blocks from stream events (as an SDK would)."""
    blocks: list[dict[str, Any]] = []
    for name, ev in events:
        if name == "content_block_start":
            assert ev["index"] == len(blocks)
            blocks.append({**ev["content_block"], "_json": ""})
        elif name == "content_block_delta":
            b, d = blocks[ev["index"]], ev["delta"]
            if d["type"] == "text_delta":
                b["text"] += d["text"]
            else:
                assert d["type"] == "input_json_delta"
                b["_json"] += d["partial_json"]
    for b in blocks:
        if b["type"] == "tool_use":
            b["input"] = json.loads(b["_json"])
        del b["_json"]
    return blocks


def test_plain_answer_sse_framing_and_usage(model: ScriptedModel) -> None:
    status, headers, data = post(
        model, body(user("<system-reminder>ctx</system-reminder>", "please say hi"))
    )
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    events = sse(data)
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names[1:-2] == [
        "content_block_start",
        *["content_block_delta"] * (len(names) - 5),
        "content_block_stop",
    ]
    start = events[0][1]["message"]
    assert start["id"].startswith("msg_") and start["model"] == "claude-test"
    plain = next(s for s in load_scenarios() if s["name"] == "plain")
    declared = plain["turns"][0]["usage"]
    for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        assert start["usage"][k] == declared[k]
    assert start["usage"]["output_tokens"] <= 1
    delta = events[-2][1]
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert delta["usage"]["output_tokens"] == declared["output_tokens"]
    assert blocks_of(events) == [{"type": "text", "text": plain["turns"][0]["content"][0]["text"]}]
    rec = model.requests[-1]
    assert rec.scenario == "plain" and rec.completed and rec.usage == {**declared}
    assert rec.request_id == headers["request-id"] and rec.message_id == start["id"]


def test_request_ids_are_unique(model: ScriptedModel) -> None:
    ids = {post(model, body(user("say hi")))[1]["request-id"] for _ in range(5)}
    assert len(ids) == 5 and all(i.startswith("req_") for i in ids)


def test_tool_use_streams_input_json_and_fills_cwd(model: ScriptedModel) -> None:
    _, _, data = post(model, body(user("please run the command")))
    events = sse(data)
    blocks = blocks_of(events)
    assert [b["type"] for b in blocks] == ["text", "tool_use"]
    tool = blocks[1]
    assert tool["name"] == "Bash" and tool["id"].startswith("toolu_")
    assert tool["input"]["command"].startswith("touch sim-")
    pieces = [e for n, e in events if n == "content_block_delta" and e["index"] == 1]
    assert len(pieces) > 2  # the JSON arrives in several input_json_delta pieces
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    _, _, data = post(model, body(user("read the readme")))
    assert blocks_of(sse(data))[0]["input"] == {"file_path": "/work/proj/README.md"}
    # 2.1.332 states the working directory in a message whose role is "system".
    env_msg = {
        "role": "system",
        "content": [
            {
                "type": "text",
                "text": "# Environment\n"
                " - Primary working directory: /work/other\n - Is a git repository: false",
            }
        ],
    }
    req = body(env_msg, user("read the readme"), system=[])
    _, _, data = post(model, req)
    assert blocks_of(sse(data))[0]["input"] == {"file_path": "/work/other/README.md"}


def test_step_follows_tool_rounds(model: ScriptedModel) -> None:
    convo = [user("edit the notes"), ASSISTANT]
    _, _, d0 = post(model, body(*convo[:1]))
    assert blocks_of(sse(d0))[0]["name"] == "Read"
    _, _, d1 = post(model, body(*convo, user(tool_result())))
    assert [b.get("name") for b in blocks_of(sse(d1))] == [None, "Edit"]
    _, _, d2 = post(model, body(*convo, user(tool_result()), ASSISTANT, user(tool_result())))
    assert blocks_of(sse(d2)) == [{"type": "text", "text": "Edited notes.txt."}]
    assert [r.plan.step for r in model.requests[-3:]] == [0, 1, 2]
    # More rounds than scripted: a polite default text, never an endless tool loop.
    _, _, d3 = post(model, body(*convo, *[user(tool_result()), ASSISTANT] * 3, user(tool_result())))
    assert model.requests[-1].kind == "default" and blocks_of(sse(d3))[0]["type"] == "text"


def test_typed_text_wins_over_rejected_tool_result(model: ScriptedModel) -> None:
    rejected = tool_result("The user doesn't want to proceed with this tool use.", True)
    post(model, body(user("please run the command"), ASSISTANT, user(rejected, "say hi")))
    assert model.requests[-1].scenario == "plain" and model.requests[-1].plan.step == 0


def test_prompt_after_an_api_error_is_the_last_block(model: ScriptedModel) -> None:
    """A failed turn leaves no assistant message: the CLI merges the next prompt into the failed
    prompt's user message, so the newest prompt is its last text block (seen in the real demo:
    every prompt after "please fail with 429" kept failing)."""
    reminder = "<system-reminder>context</system-reminder>"
    post(model, body(user("please fail with 429", "say hi", reminder)))
    assert model.requests[-1].scenario == "plain"
    post(model, body(user("say hi", "please fail with 429")))
    assert model.requests[-1].scenario == "error_429"


def test_parallel_tool_uses(model: ScriptedModel) -> None:
    _, _, data = post(model, body(user("read both in parallel")))
    blocks = blocks_of(sse(data))
    assert [b.get("name") for b in blocks] == [None, "Read", "Read"]
    assert blocks[1]["id"] != blocks[2]["id"]


def test_subagent_request_answered_by_its_own_scenario(model: ScriptedModel) -> None:
    _, _, data = post(model, body(user("use a subagent")))
    agent = blocks_of(sse(data))[0]
    assert agent["name"] == "Agent"
    post(model, body(user(agent["input"]["prompt"])))
    assert model.requests[-1].scenario == "subagent_task"


def test_unknown_prompt_side_requests_and_titles(model: ScriptedModel) -> None:
    _, _, data = post(model, body(user("what is the weather")))
    assert model.requests[-1].kind == "default" and blocks_of(sse(data))[0]["type"] == "text"
    _, _, data = post(model, body(user("say hi"), tools=None))
    assert model.requests[-1].kind == "side"
    fmt = {
        "format": {
            "type": "json_schema",
            "schema": {
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            },
        }
    }
    _, _, data = post(model, body(user("<session>say hi</session>"), tools=None, output_config=fmt))
    assert json.loads(blocks_of(sse(data))[0]["text"]) == {"title": model.side_text}


def test_compact_summary_request(model: ScriptedModel) -> None:
    ask = (
        "CRITICAL: Respond with TEXT ONLY.\nYour task is to create a detailed summary of the "
        "conversation so far"
    )
    _, _, data = post(model, body(user("say hi"), ASSISTANT, user("say hi again", ask)))
    assert model.requests[-1].kind == "compact"
    assert "<summary>" in blocks_of(sse(data))[0]["text"]


@pytest.mark.parametrize(
    ("prompt", "status", "etype", "should_retry"),
    [
        ("fail with 429", 429, "rate_limit_error", "false"),
        ("fail with 529", 529, "overloaded_error", "false"),
        ("fail with 500", 500, "api_error", "false"),
        ("fail after retries with 500", 500, "api_error", None),
    ],
)
def test_errors(
    model: ScriptedModel, prompt: str, status: int, etype: str, should_retry: str | None
) -> None:
    for _ in range(2):  # the same answer on every retry
        code, headers, data = post(model, body(user(prompt)))
        assert code == status
        err = json.loads(data)
        assert err["type"] == "error" and err["error"]["type"] == etype
        assert headers["request-id"].startswith("req_")
        assert headers.get("x-should-retry") == should_retry
        assert model.requests[-1].status == status


def test_non_streaming_count_tokens_and_404(model: ScriptedModel) -> None:
    code, headers, data = post(model, body(user("say hi"), stream=False))
    msg = json.loads(data)
    assert code == 200 and msg["type"] == "message" and msg["stop_reason"] == "end_turn"
    assert msg["usage"]["output_tokens"] == 21 and headers["request-id"].startswith("req_")
    code, _, data = post(model, body(user("say hi")), "/v1/messages/count_tokens?beta=true")
    assert code == 200 and json.loads(data)["input_tokens"] > 0
    code, _, data = post(model, {}, "/v1/other")
    assert code == 404 and json.loads(data)["error"]["type"] == "not_found_error"


def test_slow_stream_is_paced_and_disconnect_is_recorded(model: ScriptedModel) -> None:
    t0 = time.monotonic()
    _, _, data = post(model, body(user("drip feed")))
    assert time.monotonic() - t0 >= 0.25  # six deltas, 50 ms apart
    deltas = [e for n, e in sse(data) if n == "content_block_delta"]
    assert [d["delta"]["text"] for d in deltas] == list("abcdef")
    # A client that hangs up mid-stream (Esc in the CLI) leaves completed=False.
    slow = next(s for s in load_scenarios() if s["name"] == "slow")
    assert slow["turns"][0]["delay"] >= 1 and slow["turns"][0]["chunks"] >= 25
    sock = socket.create_connection(("127.0.0.1", model.port))
    payload = json.dumps(body(user("stream slowly"))).encode()
    sock.sendall(
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload
    )
    assert b"message_start" in sock.recv(65536)
    rec = model.requests[-1]
    sock.close()
    deadline = time.monotonic() + 5
    while rec.finished_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rec.finished_at is not None and rec.completed is False


def test_total_usage_sums_completed_scenario_turns() -> None:
    with ScriptedModel() as m:
        post(m, body(user("say hi")))
        post(m, body(user("read the readme")))
        post(m, body(user("x"), tools=None))  # side request: not counted
        total = m.total_usage()
    assert total == {
        "input_tokens": 11 + 14,
        "cache_creation_input_tokens": 101 + 104,
        "cache_read_input_tokens": 1001 + 1004,
        "output_tokens": 21 + 24,
    }


def test_packaged_scenarios_are_well_formed() -> None:
    scenarios = load_scenarios()
    names = [s["name"] for s in scenarios]
    assert len(names) == len(set(names))
    keywords = [k.lower() for s in scenarios for k in s["keywords"]]
    for k in keywords:  # no keyword hides inside another scenario's keyword
        assert [o for o in keywords if k in o] == [k], k
    for s in scenarios:
        assert s["turns"] and s.get("description")
        for turn in s["turns"]:
            assert ("error" in turn) != ("content" in turn)


def test_module_runs_in_the_foreground() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pmux_widget.demo.scripted_model", "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert f"127.0.0.1:{port}" in (proc.stdout.readline() if proc.stdout else "")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/v1/messages", json.dumps(body(user("say hi"), stream=False)))
        assert json.loads(conn.getresponse().read())["content"][0]["text"].startswith("Hi!")
    finally:
        proc.terminate()
        proc.wait(10)
