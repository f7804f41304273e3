"""The server's ``Stream`` on a real hub, without Jupyter: what a page gets, in which order.

A page's first frame is serialized off the loop; what the feed makes meanwhile waits for it
(none lost), answers go to the page that asked, a switch to the other pages.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from pmux_widget.core import signals as s
from pmux_widget.jupyter.stream import Client, Stream
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

from .helpers import wait_until


@pytest.fixture
def hub(homes: Any) -> Iterator[Hub]:
    hub = Hub().start()
    yield hub
    hub.stop()


def prompt(hub: Hub, sid: str) -> None:
    hub.call(lambda: hub.apply(s.UserPromptSubmit(at=now_ms(), session_id=sid, cwd="/p/x")))


async def pump(until: Any, what: str) -> None:
    """Let the loop run (frames are delivered by its callbacks) until ``until()`` holds."""
    for _ in range(500):
        if until():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


def test_frames_made_before_the_first_one_wait_for_it(hub: Hub) -> None:
    async def run() -> None:
        stream = Stream(hub)
        try:
            seen: list[dict[str, Any]] = []
            page = Client(lambda text: seen.append(json.loads(text)))
            stream.add(page)
            first = stream.first_frame()  # read now ...
            prompt(hub, "s-1")  # ... a patch made before it went out ...
            await asyncio.sleep(0.2)
            assert seen == []  # ... waits for it
            page.started(first)
            await pump(lambda: len(seen) >= 2, "the waiting patch")
            assert seen[0]["type"] == "traits" and "s-1" not in seen[0]["traits"]["snapshot"]
            patch = seen[1]["content"]
            assert patch["type"] == "patch" and patch["upsert"][0]["session_id"] == "s-1"
            assert patch["seq"] > seen[0]["traits"]["snapshot"]["seq"]
            stream.remove(page)
        finally:
            stream.close()

    asyncio.run(run())


def test_answers_go_to_the_asking_page_and_switches_to_the_others(hub: Hub) -> None:
    async def run() -> None:
        stream = Stream(hub)
        try:
            pages: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
            clients = {}
            for name, frames in pages.items():
                client = clients[name] = Client(lambda t, f=frames: f.append(json.loads(t)))
                stream.add(client)
                client.started(stream.first_frame())
            peek = {"type": "peek", "session_id": "nope"}
            stream.feed.handle(peek, stream.reply_to(clients["a"]))
            await pump(lambda: len(pages["a"]) == 2, "the peek's answer")
            assert pages["a"][1]["content"]["type"] == "peek_result"
            stream.set_traits({"show_non_interactive": False, "mode": "x"}, clients["a"])
            await pump(lambda: len(pages["b"]) == 2, "the other page's switch")
            assert pages["b"][1] == {"type": "traits", "traits": {"show_non_interactive": False}}
            await asyncio.sleep(0.1)
            assert len(pages["a"]) == 2  # neither the switch echoed nor b's answers
            assert stream.get("show_non_interactive") is False and stream.get("mode") == "full"
        finally:
            stream.close()

    asyncio.run(run())
    wait_until(lambda: not hub._listeners, what="the stream's listener gone")
