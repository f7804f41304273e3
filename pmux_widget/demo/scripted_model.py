"""A scripted Anthropic Messages API server that the real Claude Code CLI can talk to.

Why: the monitor must be tested against the real CLI (its hooks, PID files, transcripts and
dialogs), but the CLI needs a model. This server stands in for ``api.anthropic.com`` on
127.0.0.1 and answers from small data files (``scenarios/*.json``), so every run is
deterministic, offline and cheap. The demo uses the same server to drive a fleet of real
Claude sessions in tmux.

What it answers:

* ``POST /v1/messages`` (the CLI adds ``?beta=true``): with ``"stream": true`` a server-sent
  event stream in the Messages API format (``message_start`` … ``message_stop``), otherwise
  one JSON message. Every response carries a unique ``request-id: req_…`` header, which the
  CLI stores as the transcript's ``requestId``.
* ``POST /v1/messages/count_tokens``: ``{"input_tokens": N}``.
* anything else: a small JSON 404.

How a response is chosen, and the scenario file format: :mod:`.scenario_plans`.

Run standalone: ``python -m pmux_widget.demo.scripted_model --port 8765``.

Over the house's ~500 lines on purpose: ``_MessagesHandler`` (200 of them) is one Messages
API response in its two forms (a stream, one JSON) with its error paths; what to answer already
lives in :mod:`.scenario_plans`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import secrets
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

import tornado.httpserver
import tornado.iostream
import tornado.netutil
import tornado.web

from .scenario_plans import Planner, RequestRecord, load_scenarios

__all__ = [
    "DEFAULT_USAGE",
    "ScriptedModel",
    "main",
]

MODEL_NAME = "claude-sonnet-4-5-20250929"
"""Model id reported in responses when the request names none."""

DEFAULT_USAGE: dict[str, int] = {
    "input_tokens": 10,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": 5,
}
"""Usage of a turn that declares none."""

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _rand_id(prefix: str, length: int = 24) -> str:
    """An id like the API's (``msg_…``, ``toolu_…``, ``req_…``)."""
    return prefix + "".join(secrets.choice(_ALNUM) for _ in range(length))


# --------------------------------------------------------------------------- the model


class ScriptedModel(Planner):
    """The scripted Messages API server.

    ``start()`` runs it on a background thread with its own asyncio loop (the caller's thread
    stays free, e.g. to drive tmux); ``serve_forever()`` runs it in the foreground. All
    requests are appended to ``requests`` (thread-safe list appends).
    """

    def __init__(
        self,
        scenarios: Iterable[Mapping[str, Any]] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        side_text: str = "Scripted session",
        default_text: str = "OK. (scripted model: no scenario matched this prompt)",
    ) -> None:
        self.scenarios: list[dict[str, Any]] = (
            load_scenarios() if scenarios is None else [dict(s) for s in scenarios]
        )
        self.host = host
        self.port = port
        self.side_text = side_text
        self.default_text = default_text
        self.requests: list[RequestRecord] = []
        self._marker_counter = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: tornado.httpserver.HTTPServer | None = None
        self._started = threading.Event()
        self._stopped: asyncio.Event | None = None

    # ---- lifecycle

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``: the value for ``ANTHROPIC_BASE_URL``."""
        return f"http://{self.host}:{self.port}"

    def make_app(self) -> tornado.web.Application:
        """The Tornado application (routes bound to this model)."""
        return tornado.web.Application(
            [
                (r"/v1/messages/count_tokens", _CountTokensHandler, {"model": self}),
                (r"/v1/messages", _MessagesHandler, {"model": self}),
                (r".*", _NotFoundHandler, {"model": self}),
            ],
            log_function=lambda handler: None,  # the request log is self.requests
        )

    def _listen(self) -> None:
        sockets = tornado.netutil.bind_sockets(self.port, address=self.host)
        self.port = sockets[0].getsockname()[1]
        self._server = tornado.httpserver.HTTPServer(self.make_app())
        self._server.add_sockets(sockets)

    def start(self) -> int:
        """Start on a background thread; return the bound port (ephemeral unless given)."""
        if self._thread is not None:
            return self.port
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop

            async def main() -> None:
                self._stopped = asyncio.Event()
                try:
                    self._listen()
                except BaseException as exc:  # reported to start()
                    errors.append(exc)
                    self._started.set()
                    return
                self._started.set()
                await self._stopped.wait()
                assert self._server is not None
                self._server.stop()
                await self._server.close_all_connections()

            try:
                loop.run_until_complete(main())
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="scripted-model", daemon=True)
        self._thread.start()
        if not self._started.wait(10):
            raise RuntimeError("scripted model did not start within 10 s")
        if errors:
            self._thread = None
            raise errors[0]
        return self.port

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the background server and join its thread (idempotent)."""
        if self._thread is None:
            return
        if self._loop is not None and self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        self._thread.join(timeout)
        self._thread = None

    def __enter__(self) -> ScriptedModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def serve_forever(self) -> None:
        """Serve on the current asyncio loop until cancelled (used by ``main``)."""
        self._listen()
        await asyncio.Event().wait()

    # ---- request log helpers

    def messages_requests(self, kind: str | None = None) -> list[RequestRecord]:
        """Logged ``/v1/messages`` requests, optionally only those of one plan kind."""
        return [
            r
            for r in list(self.requests)
            if r.path == "/v1/messages" and (kind is None or r.kind == kind)
        ]

    def total_usage(self, kind: str | None = "scenario") -> dict[str, int]:
        """Sum of the usage declared in completed responses (default: scenario turns only)."""
        total = dict.fromkeys(DEFAULT_USAGE, 0)
        for r in self.messages_requests(kind):
            if r.usage and r.completed:
                for k in total:
                    total[k] += int(r.usage.get(k, 0))
        return total


# --------------------------------------------------------------------------- HTTP handlers


class _BaseHandler(tornado.web.RequestHandler):
    """Logs every request into the model's ``requests`` list."""

    model: ScriptedModel
    record: RequestRecord

    def initialize(self, model: ScriptedModel) -> None:
        self.model = model

    def prepare(self) -> None:
        body: Any = None
        if self.request.body:
            try:
                body = json.loads(self.request.body)
            except ValueError:
                body = self.request.body.decode("utf-8", "replace")
        self.record = RequestRecord(
            method=self.request.method or "",
            path=self.request.path,
            query=self.request.query,
            headers={k.lower(): v for k, v in self.request.headers.get_all()},
            body=body,
            received_at=time.time(),
        )
        self.model.requests.append(self.record)

    def set_default_headers(self) -> None:
        self.request_id = _rand_id("req_")
        self.set_header("request-id", self.request_id)
        self.set_header("Content-Type", "application/json")

    def write_json(self, status: int, obj: Any) -> None:
        """Finish with a JSON body and record the status."""
        self.record.status = status
        self.record.request_id = self.request_id
        self.set_status(status)
        self.record.completed = True
        self.record.finished_at = time.time()
        self.finish(json.dumps(obj))

    def on_connection_close(self) -> None:
        self.record.finished_at = time.time()


class _NotFoundHandler(_BaseHandler):
    """Anything we do not emulate: a small JSON 404 in the API's error shape."""

    def _nf(self, *_: Any) -> None:
        self.write_json(
            404,
            {
                "type": "error",
                "error": {"type": "not_found_error", "message": f"no route {self.request.path}"},
            },
        )

    get = post = put = delete = patch = head = _nf


class _CountTokensHandler(_BaseHandler):
    """``/v1/messages/count_tokens``: a rough count (characters / 4) of the request body."""

    def post(self) -> None:
        self.write_json(200, {"input_tokens": max(1, len(self.request.body) // 4)})


class _MessagesHandler(_BaseHandler):
    """``POST /v1/messages``: the scripted answer, streamed (SSE) or as one JSON message."""

    async def post(self) -> None:
        body = self.record.body if isinstance(self.record.body, dict) else {}
        plan = self.model.plan(body)
        self.record.plan = plan
        turn = self.model.render_turn(plan, body)
        err = turn.get("error")
        if err:
            await self._error(err)
            return
        model_name = str(body.get("model") or MODEL_NAME)
        usage = {**DEFAULT_USAGE, **turn.get("usage", {})}
        self.record.usage = usage
        content = [self._finish_block(b) for b in turn.get("content", [])]
        stop_reason = turn.get("stop_reason") or (
            "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        )
        msg_id = _rand_id("msg_01")
        self.record.message_id = msg_id
        self.record.request_id = self.request_id
        self.record.stream = bool(body.get("stream"))
        if not body.get("stream"):
            self.write_json(
                200,
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model_name,
                    "content": content,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        await self._stream(turn, content, usage, msg_id, model_name, stop_reason)

    @staticmethod
    def _finish_block(block: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(block)
        if out.get("type") == "tool_use":
            out.setdefault("id", _rand_id("toolu_01"))
            out.setdefault("input", {})
        elif out.get("type") == "text":
            out.setdefault("text", "")
        return out

    async def _error(self, err: Mapping[str, Any]) -> None:
        status = int(err.get("status", 500))
        self.record.request_id = self.request_id
        for k, v in (err.get("headers") or {}).items():
            self.set_header(k, str(v))
        delay = float(err.get("delay", 0))
        if delay:
            await asyncio.sleep(delay)
        if err.get("in_stream"):
            # The API's mid-stream failure: HTTP 200, message_start, then an `error` event.
            self.record.status = 200
            self.set_header("Content-Type", "text/event-stream; charset=utf-8")
            error = {
                "type": err.get("type", "overloaded_error"),
                "message": err.get("message", "scripted error"),
            }
            with contextlib.suppress(tornado.iostream.StreamClosedError):
                await self._send(
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": _rand_id("msg_01"),
                            "type": "message",
                            "role": "assistant",
                            "model": MODEL_NAME,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": dict(DEFAULT_USAGE),
                        },
                    },
                )
                await self._send("error", {"type": "error", "error": error})
            self.finish()
            return
        self.write_json(
            status,
            {
                "type": "error",
                "error": {
                    "type": err.get("type", "api_error"),
                    "message": err.get("message", "scripted error"),
                },
                "request_id": self.request_id,
            },
        )

    async def _send(self, event: str, data: Mapping[str, Any], delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        self.write(f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n")
        await self.flush()

    async def _stream(
        self,
        turn: Mapping[str, Any],
        content: list[dict[str, Any]],
        usage: Mapping[str, int],
        msg_id: str,
        model_name: str,
        stop_reason: str,
    ) -> None:
        self.record.status = 200
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        delay = float(turn.get("delay", 0))
        start_usage = {
            "input_tokens": usage["input_tokens"],
            "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
            "cache_read_input_tokens": usage["cache_read_input_tokens"],
            "output_tokens": min(1, usage["output_tokens"]),
        }
        try:
            # Headers out, then nothing yet (a model still thinking): time for an Esc that
            # comes before the first token.
            await self._send_nothing_for(float(turn.get("first_delay", 0)))
            await self._send(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": msg_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model_name,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": start_usage,
                    },
                },
            )
            for index, block in enumerate(content):
                await self._stream_block(index, block, turn, delay)
            await self._send(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]},
                },
            )
            await self._send("message_stop", {"type": "message_stop"})
            # Recorded before finish() so a client that has read everything sees it logged.
            self.record.completed = True
            self.record.finished_at = time.time()
            self.finish()
        except tornado.iostream.StreamClosedError:
            self.record.completed = False  # the client hung up (Esc)
            self.record.finished_at = time.time()

    async def _send_nothing_for(self, seconds: float) -> None:
        if seconds > 0:
            await self.flush()
            await asyncio.sleep(seconds)

    async def _stream_block(
        self, index: int, block: Mapping[str, Any], turn: Mapping[str, Any], delay: float
    ) -> None:
        kind = block["type"]
        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            pieces = _split(block["text"], int(turn.get("chunks", 0)) or _auto_chunks(block))
            deltas = [{"type": "text_delta", "text": p} for p in pieces]
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"], separators=(",", ":"))
            deltas = [{"type": "input_json_delta", "partial_json": ""}] + [
                {"type": "input_json_delta", "partial_json": p} for p in _split(raw, 3)
            ]
        else:
            raise ValueError(f"unsupported scripted block type {kind!r}")
        await self._send(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        for d in deltas:
            await self._send(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": d},
                delay if kind == "text" else 0.0,
            )
        await self._send("content_block_stop", {"type": "content_block_stop", "index": index})


def _auto_chunks(block: Mapping[str, Any]) -> int:
    return max(1, min(4, len(block.get("text", "")) // 20))


def _split(text: str, n: int) -> list[str]:
    """``text`` in ``n`` roughly equal consecutive pieces (never empty pieces)."""
    n = max(1, min(n, len(text) or 1))
    size = -(-len(text) // n) if text else 1
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return pieces or [""]


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> None:
    """``python -m pmux_widget.demo.scripted_model [--host H] [--port N]``: serve, foreground."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    model = ScriptedModel(host=args.host, port=args.port)

    async def run() -> None:
        model._listen()
        print(f"scripted model listening on {model.base_url}", flush=True)
        await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
