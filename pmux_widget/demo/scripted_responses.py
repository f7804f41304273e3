"""A scripted OpenAI Responses API server that the real Codex CLI can talk to.

Why: as for Claude Code (:mod:`.scripted_model`), the monitor is tested against the *real*
Codex CLI, which needs a model. This server stands in for the provider on 127.0.0.1 (an
ephemeral port): Codex's ``config.toml`` names it as a ``wire_api = "responses"`` provider
(:class:`~pmux_widget.demo.codex_env.CodexEnv` writes that).

What Codex calls (recorded from 0.171.0): ``GET /v1/models`` (any JSON list will do), then
``POST /v1/responses`` with ``"stream": true``; the answer is a server-sent event stream,
``event: <type>`` / ``data: <json>`` per event. The shapes are Codex's own test fixtures'
(``response.created`` → ``response.output_item.added`` → ``response.output_text.delta``… →
``response.output_item.done`` → ``response.completed`` with the usage).

What it answers, by a keyword in the last user message (the scripts tests need):

* ``SHELL``: an ``exec_command`` with ``sandbox_permissions: "require_escalated"``, which
  makes Codex (approval policy ``on-request``) ask for approval;
* ``ASK``: a ``request_user_input`` question (Codex shows it in Plan mode only);
* ``SLOW``: text streamed at one word every :attr:`ScriptedResponses.slow_interval` seconds;
* ``LONG``: :data:`LONG_TEXT`, a list longer than a 40-line pane (the prompt scrolls off);
* ``TOOLS<n>``: ``n`` successive ``exec_command`` calls that need no approval (``true``);
* anything else: :data:`HELLO`.

After a tool's result (the last input item is a ``function_call_output``) it answers with
text that quotes the output's start, or with the next call of a ``TOOLS<n>`` turn.
Every request is kept in :attr:`ScriptedResponses.requests` (path, parsed body, time).

Run standalone: ``python -m pmux_widget.demo.scripted_responses --port 18080``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HELLO", "LONG_TEXT", "SLOW_TEXT", "ResponsesRequest", "ScriptedResponses", "main"]

HELLO = "Hello from the mock model."
SLOW_TEXT = "This answer arrives slowly, one word at a time, until it ends."
LONG_TEXT = "\n".join(f"- line {i} of a long answer" for i in range(1, 61))
MODEL_NAME = "mock-model"
QUESTION: dict[str, Any] = {
    "header": "Color",
    "id": "color",
    "question": "Which color should the banner be?",
    "options": [
        {"label": "Red (Recommended)", "description": "Warm and loud."},
        {"label": "Blue", "description": "Calm."},
    ],
}
"""The question an ``ASK`` turn asks (``request_user_input``'s ``questions`` item)."""

_TOOLS = re.compile(r"\bTOOLS(\d+)\b")


@dataclass
class ResponsesRequest:
    """One request as the server saw it."""

    method: str
    path: str
    body: Any
    t: float = field(default_factory=time.time)

    def last_input(self) -> dict[str, Any]:
        """The last item of ``input`` ({} when there is none)."""
        items = self.body.get("input") if isinstance(self.body, dict) else None
        return items[-1] if isinstance(items, list) and items else {}

    def user_text(self) -> str:
        """The text of the last user message of ``input`` ("" when there is none)."""
        items = self.body.get("input") if isinstance(self.body, dict) else None
        for item in reversed(items if isinstance(items, list) else []):
            if isinstance(item, dict) and item.get("role") == "user":
                content = item.get("content")
                if isinstance(content, str):
                    return content
                return "".join(c.get("text", "") for c in content or [] if isinstance(c, dict))
        return ""

    def tool_names(self) -> list[str]:
        """The names of the tools Codex offered."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("name", "") for t in tools or [] if isinstance(t, dict)]

    def calls_so_far(self) -> int:
        """How many ``function_call_output`` items the input holds since its last user
        message (the tool calls of this turn so far)."""
        items = self.body.get("input") if isinstance(self.body, dict) else None
        count = 0
        for item in reversed(items if isinstance(items, list) else []):
            if isinstance(item, dict) and item.get("role") == "user":
                break
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                count += 1
        return count


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n".encode()


class ScriptedResponses:
    """The scripted Responses API server, on a background thread.

    ``start()`` binds 127.0.0.1 (port 0: ephemeral) and returns the port; ``base_url`` is the
    provider's ``base_url`` (with ``/v1``). ``stop()`` closes it (idempotent).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, slow_interval: float = 1.0):
        self.host = host
        self.port = port
        self.slow_interval = slow_interval
        self.requests: list[ResponsesRequest] = []
        self._ids = itertools.count(1)
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: the provider's ``base_url`` in ``config.toml``."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> int:
        if self._server is not None:
            return self.port
        model = self

        class Handler(_Handler):
            server_model = model

        self._server = http.server.ThreadingHTTPServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="scripted-responses", daemon=True
        )
        self._thread.start()
        return self.port

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._server = None
        self._thread = None

    def __enter__(self) -> ScriptedResponses:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- what to answer

    def responses(self) -> list[ResponsesRequest]:
        """The ``POST /v1/responses`` requests so far."""
        return [r for r in list(self.requests) if r.path.endswith("/responses")]

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def events(self, request: ResponsesRequest) -> Iterator[tuple[bytes, float]]:
        """The stream answering ``request``: (an event's bytes, seconds to wait before it)."""
        response_id = self._id("resp")
        yield _sse("response.created", {"response": {"id": response_id}}), 0.0
        last = request.last_input()
        text = request.user_text()
        tools = request.tool_names()
        planned = _TOOLS.search(text)
        if last.get("type") == "function_call_output":
            done = request.calls_so_far()
            if planned and done < int(planned.group(1)) and "exec_command" in tools:
                yield from self._call(
                    "exec_command", {"cmd": f"true {done + 1}", "yield_time_ms": 1000}
                )
            else:
                output = last.get("output")
                said = output if isinstance(output, str) else json.dumps(output)
                yield from self._message(f"Done. The tool said: {said[:60]}")
        elif "SHELL" in text and "exec_command" in tools:
            args = {
                "cmd": "touch approved.txt",
                "sandbox_permissions": "require_escalated",
                "justification": "The scripted model wants to create approved.txt",
            }
            yield from self._call("exec_command", args)
        elif "ASK" in text and "request_user_input" in tools:
            yield from self._call("request_user_input", {"questions": [QUESTION]})
        elif planned and "exec_command" in tools:
            yield from self._call("exec_command", {"cmd": "true 1", "yield_time_ms": 1000})
        elif "SLOW" in text:
            yield from self._message(SLOW_TEXT.split(" "), delay=self.slow_interval)
        elif "LONG" in text:
            yield from self._message(LONG_TEXT)
        else:
            yield from self._message(HELLO)
        usage = {
            "input_tokens": 120,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 12,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 132,
        }
        yield _sse("response.completed", {"response": {"id": response_id, "usage": usage}}), 0.0

    def _message(self, text: str | list[str], delay: float = 0.0) -> Iterator[tuple[bytes, float]]:
        item_id = self._id("msg")
        chunks = [text] if isinstance(text, str) else [w + " " for w in text]
        item = {"type": "message", "role": "assistant", "id": item_id, "content": []}
        yield _sse("response.output_item.added", {"item": item}), 0.0
        for chunk in chunks:
            yield _sse("response.output_text.delta", {"delta": chunk, "item_id": item_id}), delay
        full = "".join(chunks).strip()
        done = {**item, "content": [{"type": "output_text", "text": full}]}
        yield _sse("response.output_item.done", {"item": done}), 0.0

    def _call(self, name: str, arguments: dict[str, Any]) -> Iterator[tuple[bytes, float]]:
        item = {
            "type": "function_call",
            "id": self._id("fc"),
            "call_id": self._id("call"),
            "name": name,
            "arguments": json.dumps(arguments),
        }
        yield _sse("response.output_item.done", {"item": item}), 0.0


class _Handler(http.server.BaseHTTPRequestHandler):
    server_model: ScriptedResponses
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # the log is .requests
        return

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        with contextlib.suppress(ValueError):
            return json.loads(raw or b"null")
        return None

    def _json(self, status: int, data: Any) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server_model.requests.append(ResponsesRequest("GET", self.path, None))
        if self.path.split("?")[0].endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        request = ResponsesRequest("POST", self.path.split("?")[0], self._body())
        self.server_model.requests.append(request)
        if not request.path.endswith("/responses"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for data, delay in self.server_model.events(request):
                if delay:
                    time.sleep(delay)
                self.wfile.write(data)
                self.wfile.flush()
        except OSError:  # Codex went away mid-stream (Esc, exit): nothing to answer
            return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=18080)
    args = parser.parse_args(argv)
    server = ScriptedResponses(port=args.port)
    server.start()
    print(f"scripted Responses API on {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
