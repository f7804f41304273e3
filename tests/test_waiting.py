"""``wait_for`` / ``Session.ask`` from every kind of caller: ``await``, ``.result()``, and
``asyncio.run()`` (a script's first try, which takes only coroutines).

Real hub on a real socket, hooks over HTTP; the script test runs a real subprocess against the
scripted demo fleet (simulated Claude processes in a private tmux server, answering typed
prompts as the CLI does).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pmux_widget import hooks
from pmux_widget.core.model import State
from pmux_widget.demo.driver import ScriptedFleet
from pmux_widget.notebook.waiting import Answer, Ask, Wait
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.home import PmuxHome

from .helpers import post_hook, wait_until

DONE = "a5c00000-aaaa-4bbb-8ccc-000000000001"
REVIEW = frozenset({State.REVIEW})
T = TypeVar("T")


@pytest.fixture
def hub(homes: Any) -> Iterator[Hub]:
    hub = Hub().start()
    yield hub
    hub.stop()


def _finish(hub: Hub, sid: str, text: str) -> None:
    payload = {"session_id": sid, "hook_event_name": "Stop", "cwd": "/tmp/acme",
               "last_assistant_message": text}  # fmt: skip
    assert post_hook(hub.port, hub.token, payload) == 204


def _in_thread(fn: Callable[[], T]) -> T:
    """Run ``fn`` in a plain thread (no event loop, as a script's main thread): its result."""
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # handed to the test thread
            out["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the thread never returned"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]  # type: ignore[return-value]


def test_wait_runs_under_asyncio_run_in_a_plain_thread(hub: Hub) -> None:
    pending = Wait(hub, DONE, REVIEW, timeout=30)
    assert asyncio.iscoroutine(pending)  # what asyncio.run() checks
    _finish(hub, DONE, "All green.")
    session = _in_thread(lambda: asyncio.run(pending))
    assert session.session_id == DONE and session.state is State.REVIEW
    assert pending.result().session_id == DONE  # still there for .result()


def test_wait_times_out_under_asyncio_run(hub: Hub) -> None:
    pending = Wait(hub, DONE, REVIEW, timeout=0.2)
    with pytest.raises(TimeoutError, match="did not reach review"):
        _in_thread(lambda: asyncio.run(pending))
    # the listener went with it: a later change resolves nothing in a closed loop
    _finish(hub, DONE, "late")
    wait_until(
        lambda: DONE in hub.fleet and hub.fleet[DONE].state is State.REVIEW, what="the hub's step"
    )


def test_ask_is_awaitable_runnable_and_blocking(hub: Hub) -> None:
    _finish(hub, DONE, "All green.")
    wait_until(lambda: hub.fleet.get(DONE), what="the session")

    # no prompt: the turn that has ended, its answer (the hook's text: no transcript here)
    ran = _in_thread(lambda: asyncio.run(Ask(hub, DONE, None, timeout=10)))
    assert isinstance(ran, Answer) and ran == "All green." and ran.state is State.REVIEW

    async def awaited() -> Answer:
        return await Ask(hub, DONE, None, timeout=10)

    assert _in_thread(lambda: asyncio.run(awaited())) == "All green."
    assert Ask(hub, DONE, None, timeout=10).result() == "All green."

    async def gathered() -> list[Answer]:  # tasks take it as the coroutine it is
        return list(await asyncio.gather(Ask(hub, DONE, None, 10), Ask(hub, DONE, None, 10)))

    assert _in_thread(lambda: asyncio.run(gathered())) == ["All green.", "All green."]


def test_an_ask_only_waited_on_with_result_leaves_no_coroutine_behind(
    hub: Hub, recwarn: pytest.WarningsRecorder
) -> None:
    _finish(hub, DONE, "All green.")
    wait_until(lambda: hub.fleet.get(DONE), what="the session")
    pending = Ask(hub, DONE, None, timeout=10)
    assert pending.result() == "All green."
    del pending  # (an eagerly made coroutine would warn here, when collected)
    gc.collect()
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


#: A final answer longer than a row's snippet: the Stop hook's quote of it is clipped.
FINAL = "All 142 tests pass. " + "The last page was cut off by an off-by-one. " * 8
EARLIER = "I'll run the test suite first."


def _assistant(text: str) -> str:
    at = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    record = {"type": "assistant", "isSidechain": False, "timestamp": at, "message": message}
    return json.dumps(record) + "\n"


def _stopped_with_a_lagging_transcript(hub: Hub, path: Path) -> None:
    """The turn's earlier text is in the transcript; the Stop hook (which the CLI fires before
    it writes the answer's record) quotes the final answer."""
    path.write_text(_assistant(EARLIER))
    payload = {"session_id": DONE, "hook_event_name": "Stop", "cwd": "/tmp/acme",
               "transcript_path": str(path), "last_assistant_message": FINAL}  # fmt: skip
    assert post_hook(hub.port, hub.token, payload) == 204
    wait_until(lambda: DONE in hub.fleet and hub.fleet[DONE].state is State.REVIEW, what="review")


def test_ask_gives_the_final_answer_not_an_earlier_text_of_the_turn(
    hub: Hub, tmp_path: Path
) -> None:
    path = tmp_path / "transcript.jsonl"
    _stopped_with_a_lagging_transcript(hub, path)
    pending = Ask(hub, DONE, None, timeout=10)

    # the answer's record lands a moment after the hook, as the CLI writes it
    def write_the_answer() -> None:
        with path.open("a") as transcript:
            transcript.write(_assistant(FINAL))

    late = threading.Timer(0.3, write_the_answer)
    late.start()
    try:
        answer = pending.result()
    finally:
        late.join()
    assert answer == FINAL.strip()  # in full, from the transcript (the hook's quote is clipped)


def test_ask_falls_back_to_the_hooks_quote_when_the_answer_never_lands(
    hub: Hub, tmp_path: Path
) -> None:
    _stopped_with_a_lagging_transcript(hub, tmp_path / "transcript.jsonl")
    answer = Ask(hub, DONE, None, timeout=10).result()
    assert answer != EARLIER
    assert answer.endswith("…") and FINAL.startswith(answer[:-1])


def _busy_then_a_dialog(hub: Hub) -> Ask:
    """A turn at work, an ask() waiting on it, then a dialog known only by its Notification
    (2.1.332+ report a dialog in the PID file or a Notification before the PermissionRequest
    hook says what it asks)."""
    base = {"session_id": DONE, "cwd": "/tmp/acme"}
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "run the command"}
    assert post_hook(hub.port, hub.token, prompt) == 204
    wait_until(lambda: DONE in hub.fleet and hub.fleet[DONE].state is State.BUSY, what="busy")
    pending = Ask(hub, DONE, None, timeout=10)
    dialog = {
        **base,
        "hook_event_name": "Notification",
        "notification_type": "permission_prompt",
        "message": "Claude needs your permission to use Bash",
    }
    assert post_hook(hub.port, hub.token, dialog) == 204
    wait_until(lambda: hub.fleet[DONE].state is State.NEEDS_INPUT, what="needs-input")
    return pending


def test_a_turn_stopped_on_a_dialog_says_what_it_asks_even_when_its_words_come_late(
    hub: Hub,
) -> None:
    pending = _busy_then_a_dialog(hub)  # ci, 2.1.332: "[waiting for permission: a tool]"
    request = {"session_id": DONE, "cwd": "/tmp/acme", "hook_event_name": "PermissionRequest",
               "tool_name": "Bash", "tool_input": {"command": "touch marker"}}  # fmt: skip
    late = threading.Timer(0.4, lambda: post_hook(hub.port, hub.token, request))
    late.start()
    try:
        answer = pending.result()
    finally:
        late.join()
    assert answer.waiting and answer == "[asks to run: touch marker]", answer
    assert answer.session.current_tool == "Bash"


def test_a_dialog_whose_words_never_come_says_what_is_known(hub: Hub) -> None:
    answer = _busy_then_a_dialog(hub).result()
    assert answer.waiting and answer == "[Claude needs your permission to use Bash]", answer


# ----------------------------------------------------------------------- from a real script

#: What a user's first script looks like: start, find a finished session, ask it something.
SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    import pmux_widget

    pmux_widget.start()
    print("started", flush=True)
    done = pmux_widget.wait_for(None, "review", timeout=90)  # no loop here: it blocks
    answer = asyncio.run(done.ask("what changed today?", timeout=60))
    print(json.dumps({"sid": done.session_id, "answer": answer, "state": answer.state.value,
                      "prompt": answer.session.last_prompt}), flush=True)
    pmux_widget.stop()
    """
)


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.timeout(180)
def test_a_script_asks_with_asyncio_run(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    (claude / "projects").mkdir(parents=True)
    home = PmuxHome(tmp_path / "pmux")
    hooks.install(claude / "settings.json", home.ensure())
    script = tmp_path / "ask.py"
    script.write_text(SCRIPT)
    root = str(Path(__file__).resolve().parents[1])
    env = dict(
        os.environ,
        CLAUDE_CONFIG_DIR=str(claude),
        PMUX_WIDGET_HOME=str(home.root),
        PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
    )
    # The script's hub is up before the fleet starts: the review it waits for is a live one.
    # At the demo's own speed, a review rests ~13 s before the persona's next prompt: time
    # enough for the script's prompt to reach it first, even on a loaded machine.
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    fleet = ScriptedFleet(claude, home.root, tmp_path / "projects", sessions=1, seed=5, speed=1)
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "started":
            proc.kill()
            pytest.fail(f"the script did not start its hub: {proc.communicate()[1]}")
        fleet.start()
        assert fleet.panes is not None, fleet.note
        out, err = proc.communicate(timeout=150)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        fleet.stop()
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    # the simulated CLI's answer to a typed prompt quotes it: the prompt reached the pane
    assert result["state"] == "review", result
    assert result["prompt"] == "what changed today?", result
    assert "“what changed today?”" in result["answer"], result
