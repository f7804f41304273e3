"""The hub's HTTP contract on a real Tornado server and socket: routes, checks, 4xx not 5xx."""

from __future__ import annotations

import json
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmux_widget._version import __version__
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.server import MAX_BODY_BYTES, host_is_loopback

from .helpers import get_sessions, post_hook, request, wait_until

PROMPT = {
    "session_id": "11111111-2222-3333-4444-555555555555",
    "hook_event_name": "UserPromptSubmit",
    "cwd": "/home/dev/projects/acme-api",
    "prompt": "fix the tests",
}


@pytest.fixture
def hub(homes):
    hub = Hub().start()
    yield hub
    hub.stop()


def test_hook_with_token_is_applied_and_answered_204(hub):
    assert post_hook(hub.port, hub.token, PROMPT) == 204
    [session] = get_sessions(hub.port, hub.token)["sessions"]
    assert session["state"] == "busy" and session["last_prompt"] == "fix the tests"


def test_health_needs_no_token(hub):
    status, body, _ = request(hub.port, "GET", "/api/health")
    assert status == 200
    assert json.loads(body) == {"ok": True, "version": __version__}


def test_sessions_json_has_contract_shape(hub):
    post_hook(hub.port, hub.token, PROMPT)
    data = get_sessions(hub.port, hub.token)
    assert set(data) == {"sessions", "counts"}
    assert data["counts"] == {
        "idle": 0,
        "busy": 1,
        "needs-input": 0,
        "review": 0,
        "unknown": 0,
        "attention": 0,
    }
    assert list(data["sessions"][0]) == [
        "session_id", "state", "running", "state_since", "cwd", "project", "workspace", "pid",
        "tmux", "terminal", "transcript_path", "model", "current_tool", "tool_summary",
        "last_assistant", "last_prompt", "tokens", "context_tokens", "compacting", "subagents",
        "error", "ports", "source", "host", "agent", "permission_mode", "background_tasks",
        "background", "question",
    ]  # fmt: skip
    assert data["sessions"][0]["host"]  # the machine's name (the fleet's hosts)


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), ({"X-Pmux-Token": "0" * 64}, 403), ({"X-Pmux-Token": ""}, 401)],
)
def test_hook_missing_or_wrong_token(hub, headers, status):
    code, body, _ = request(hub.port, "POST", "/api/hook", json.dumps(PROMPT).encode(), headers)
    assert code == status and b"token" in body.lower()
    assert get_sessions(hub.port, hub.token)["sessions"] == []


def test_sessions_needs_token(hub):
    assert request(hub.port, "GET", "/api/sessions")[0] == 401
    assert request(hub.port, "GET", "/api/sessions", headers={"X-Pmux-Token": "x"})[0] == 403


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", b"not valid JSON"),
        (b"[1, 2]", b"JSON object"),
        (b'"text"', b"JSON object"),
        (b"", b"not valid JSON"),
        (b'{"hook_event_name": "Stop"}', b"session_id: missing"),
        (b'{"session_id": 5, "hook_event_name": "Stop"}', b"session_id: must be a string"),
        (b'{"session_id": "x", "hook_event_name": "Stop", "cwd": 3}', b"cwd"),
        (b"\xff\xfe garbage", b"not valid JSON"),
    ],
)
def test_hook_bad_body_is_400_with_reason(hub, body, reason):
    code, text, _ = request(hub.port, "POST", "/api/hook", body, {"X-Pmux-Token": hub.token})
    assert code == 400 and reason in text


def test_hook_over_16_mb_is_413(hub):
    body = b"{" + b" " * MAX_BODY_BYTES + b"}"
    code, _, _ = request(hub.port, "POST", "/api/hook", body, {"X-Pmux-Token": hub.token})
    assert code == 413


def test_hook_just_under_the_limit_is_accepted(hub):
    payload = dict(PROMPT, prompt="x" * (MAX_BODY_BYTES - 1000))
    assert post_hook(hub.port, hub.token, payload) == 204


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_hook_wrong_method_is_405(hub, method):
    code, _, _ = request(hub.port, method, "/api/hook", b"{}", {"X-Pmux-Token": hub.token})
    assert code == 405


def test_no_state_changing_get_and_unknown_routes_404(hub):
    assert request(hub.port, "GET", "/api/nope")[0] == 404
    assert request(hub.port, "POST", "/api/health", b"{}")[0] == 405


def test_a_look_told_by_another_hub_ends_a_review_here_and_needs_the_token(hub):
    """``POST /api/sessions/<id>/seen`` (runtime.looks): a review ends as ``user:seen``; a
    look without the token, from a non-loopback Host or by GET changes nothing."""
    sid = PROMPT["session_id"]
    assert post_hook(hub.port, hub.token, PROMPT) == 204
    assert post_hook(hub.port, hub.token, {**PROMPT, "hook_event_name": "Stop"}) == 204
    route = f"/api/sessions/{sid}/seen"
    assert request(hub.port, "POST", route, b"{}")[0] == 401
    assert request(hub.port, "POST", route, b"{}", {"X-Pmux-Token": "nope"})[0] == 403
    assert request(hub.port, "GET", route, headers={"X-Pmux-Token": hub.token})[0] == 405
    evil = {"X-Pmux-Token": hub.token, "Host": "evil.example"}
    assert request(hub.port, "POST", route, b"{}", evil)[0] == 403
    assert get_sessions(hub.port, hub.token)["sessions"][0]["state"] == "review"
    assert request(hub.port, "POST", route, b"{}", {"X-Pmux-Token": hub.token})[0] == 204
    wait_until(lambda: get_sessions(hub.port, hub.token)["sessions"][0]["state"] == "idle", 10)
    assert get_sessions(hub.port, hub.token)["sessions"][0]["source"] == "user:seen"


@pytest.mark.parametrize("host", ["evil.example", "10.0.0.1:80", "127.0.0.2", "localhost.evil"])
def test_non_loopback_host_is_403(hub, host):
    headers = {"X-Pmux-Token": hub.token, "Host": host}
    code, _, _ = request(hub.port, "POST", "/api/hook", json.dumps(PROMPT).encode(), headers)
    assert code == 403
    assert request(hub.port, "GET", "/api/health", headers={"Host": host})[0] == 403


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST:1", "[::1]:80"])
def test_loopback_hosts_with_any_port(host):
    assert host_is_loopback(host)


def test_no_cors_headers(hub):
    _, _, headers = request(hub.port, "GET", "/api/health", headers={"Origin": "http://x.test"})
    assert not any(k.lower().startswith("access-control") for k in headers)


def test_server_binds_loopback_only(hub):
    with socket.create_connection(("127.0.0.1", hub.port), timeout=2):
        pass
    assert hub._server is not None
    addresses = {s.getsockname()[0] for s in hub._server._sockets.values()}
    assert addresses == {"127.0.0.1"}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "HEAD", "OPTIONS"]),
    path=st.sampled_from(["/api/hook", "/api/sessions", "/api/health", "/", "/api/hook/x"]),
    body=st.one_of(st.none(), st.binary(max_size=300), st.just(json.dumps(PROMPT).encode())),
    token=st.one_of(st.none(), st.text(alphabet="abc0123", max_size=70), st.just("GOOD")),
    host=st.sampled_from(["127.0.0.1", "localhost", "evil", None]),
    extra=st.dictionaries(
        st.sampled_from(["X-Pmux-Sent", "X-Pmux-Ppid", "X-Pmux-Pane", "Content-Type"]),
        st.text(alphabet="%0123456789abc-", max_size=20),
        max_size=4,
    ),
)
def test_fuzzed_requests_never_5xx_and_valid_hooks_still_work(
    fuzz_hub, method, path, body, token, host, extra
):
    headers = dict(extra)
    if token is not None:
        headers["X-Pmux-Token"] = fuzz_hub.token if token == "GOOD" else token
    if host is not None:
        headers["Host"] = host
    status, _, _ = request(fuzz_hub.port, method, path, body, headers)
    assert status < 500
    assert post_hook(fuzz_hub.port, fuzz_hub.token, PROMPT) == 204


@pytest.fixture(scope="module")
def fuzz_hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    hub = Hub(home=root / "pmux", claude_home=root / "claude").start()
    yield hub
    hub.stop()
