"""The HTTP surface under bad input, black box: every bad request is a 4xx, none is a 5xx, no
exception escapes a handler, and valid hooks still work after it (issue 11, item 13).

A bounded sample runs in ``make test``; ``make stress`` (``PMUX_STRESS=1``) runs thousands of
generated cases per test.
"""

from __future__ import annotations

import json
import logging
import os
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmux_widget.runtime.hub import Hub

from .helpers import get_sessions, post_hook, request

STRESS = os.environ.get("PMUX_STRESS") == "1"
EXAMPLES = 3000 if STRESS else 120

PROMPT = {
    "session_id": "fuzz-0000-0000",
    "hook_event_name": "UserPromptSubmit",
    "cwd": "/home/dev/projects/acme-api",
    "prompt": "fix the tests",
}
EVENTS = [
    "SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "Notification",
    "PostToolUse", "PostToolUseFailure", "Stop", "StopFailure", "PreCompact", "PostCompact",
    "SubagentStart", "SubagentStop", "SessionEnd", "DirectoryAdded", "Nope", "",
]  # fmt: skip


class _Escapes(logging.Handler):
    """Counts exceptions that escaped a handler (Tornado logs them as uncaught)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or "Uncaught exception" in record.getMessage():
            self.records.append(record)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("http-fuzz")
    hub = Hub(home=root / "pmux", claude_home=root / "claude").start()
    yield hub
    hub.stop()


@pytest.fixture
def escapes():
    handler = _Escapes()
    loggers = [logging.getLogger(n) for n in ("tornado.application", "tornado.general", "")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)


def _post(hub: Hub, body: bytes) -> int:
    return request(hub.port, "POST", "/api/hook", body, {"X-Pmux-Token": hub.token})[0]


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 30_000 + b"1" + b"}" * 30_000,
        json.dumps({**PROMPT, "tool_input": None}).encode()[:-1]
        + b', "x": '
        + b"[" * 50_000
        + b"]" * 50_000
        + b"}",
        b"[" * 100_000,  # deep and torn
    ],
    ids=["deep-array", "deep-object", "deep-field", "deep-torn"],
)
def test_item13_pathological_nesting_is_a_4xx(hub, escapes, body):
    assert 400 <= _post(hub, body) < 500
    assert not escapes.records, escapes.records
    assert post_hook(hub.port, hub.token, PROMPT) == 204


# One JSON value of any shape, hook-like or not.
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=25,
)
_hooks = st.fixed_dictionaries(
    {
        "session_id": st.one_of(st.text(max_size=40), _json),
        "hook_event_name": st.sampled_from(EVENTS),
    },
    optional={
        "cwd": _json,
        "prompt": _json,
        "tool_name": _json,
        "tool_input": _json,
        "source": _json,
        "reason": _json,
        "notification_type": _json,
        "transcript_path": _json,
        "error": _json,
        "agent_id": _json,
        "background_tasks": _json,
        "permission_mode": _json,
        "last_assistant_message": _json,
    },
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=st.one_of(_hooks, _json))
def test_item13_generated_hook_bodies_are_2xx_or_4xx(hub, escapes, payload):
    status = _post(hub, json.dumps(payload).encode())
    assert status == 204 or 400 <= status < 500, status
    assert not escapes.records, escapes.records


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    raw=st.one_of(
        st.binary(max_size=400),
        st.builds(
            lambda line, headers, body: line + b"\r\n" + headers + b"\r\n\r\n" + body,
            st.sampled_from(
                [
                    b"POST /api/hook HTTP/1.1",
                    b"POST /api/hook HTTP/9.9",
                    b"GET /api/sessions HTTP/1.0",
                    b"POST /api/sessions/x/actions HTTP/1.1",
                    b"BREW /api/hook HTTP/1.1",
                    b"POST  HTTP/1.1",
                    b"POST /%00%ff/../api/hook HTTP/1.1",
                ]
            ),
            st.lists(
                st.sampled_from(
                    [
                        b"Host: 127.0.0.1",
                        b"Host: evil",
                        b"Content-Length: 5",
                        b"Content-Length: -1",
                        b"Content-Length: 99999999999",
                        b"Transfer-Encoding: chunked",
                        b"X-Pmux-Token: x",
                        b"X-Pmux-Sent: nan",
                        b"X-Pmux-Ppid: -7",
                        b"Content-Type: application/json; charset=utf-9",
                        b": no-name",
                        b"X" * 5000 + b": y",
                    ]
                ),
                max_size=5,
            ).map(b"\r\n".join),
            st.binary(max_size=200),
        ),
    )
)
def test_item13_raw_malformed_requests_never_5xx(hub, escapes, raw):
    with socket.create_connection(("127.0.0.1", hub.port), timeout=5) as conn:
        conn.sendall(raw)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while chunk := conn.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    if answer.startswith(b"HTTP/"):
        status = int(answer.split(b" ", 2)[1])
        assert status < 500, answer[:200]
    assert not escapes.records, escapes.records


def test_valid_hooks_work_after_all_of_it(hub):
    assert post_hook(hub.port, hub.token, PROMPT) == 204
    assert any(
        s["session_id"] == PROMPT["session_id"]
        for s in get_sessions(hub.port, hub.token)["sessions"]
    )
