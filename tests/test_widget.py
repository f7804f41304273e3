"""StatusWidget on a real hub, without a browser: what travels to the front-end, and when.

Outside a kernel, ipywidgets opens a dummy comm; the widget's own ``send`` is wrapped here to
record every custom message exactly as it would be serialized.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from pmux_widget.core import signals as s
from pmux_widget.core.model import State
from pmux_widget.notebook import feed as feed_module
from pmux_widget.notebook.widget import StatusWidget
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

from .helpers import wait_until


@pytest.fixture
def hub(homes):
    hub = Hub().start()
    yield hub
    hub.stop()


class Recorder:
    def __init__(self, widget: StatusWidget) -> None:
        self.messages: list[dict] = []
        self.lock = threading.Lock()
        original = widget.send

        def send(content, buffers=None):
            with self.lock:
                self.messages.append(json.loads(json.dumps(content)))
            return original(content, buffers)

        widget.send = send  # type: ignore[method-assign]

    def patches(self) -> list[dict]:
        with self.lock:
            return [m for m in self.messages if m["type"] == "patch"]


def fill(hub: Hub, count: int) -> None:
    def apply_all() -> None:
        for i in range(count):
            hub.apply(
                s.UserPromptSubmit(
                    at=now_ms(),
                    session_id=f"s-{i:04d}",
                    cwd=f"/home/dev/projects/p{i % 7}",
                    prompt="a realistic prompt " * 3,
                )
            )

    hub.call(apply_all)


def change_one(hub: Hub, session_id: str = "s-0003") -> None:
    hub.call(
        lambda: hub.apply(
            s.PermissionRequest(
                at=now_ms(),
                session_id=session_id,
                tool_name="Bash",
                tool_input={"command": "pytest -q tests/test_widget.py"},
            )
        )
    )


@pytest.mark.parametrize("fleet", [10, 500])
def test_one_change_sends_only_that_session(hub, fleet):
    fill(hub, fleet)
    widget = StatusWidget(hub)
    recorder = Recorder(widget)
    assert len(widget.snapshot["sessions"]) == fleet
    change_one(hub)
    [patch] = wait_until(recorder.patches, what="the patch")
    assert [row["session_id"] for row in patch["upsert"]] == ["s-0003"]
    assert patch["upsert"][0]["state"] == "needs-input"
    assert patch["counts"]["needs-input"] == 1
    size = len(json.dumps(patch, separators=(",", ":")))
    assert size <= 2048, size
    # The kernel-side snapshot is current (for views created later) but was not synced.
    assert widget.snapshot["sessions"]["s-0003"]["state"] == "needs-input"
    assert widget.snapshot["seq"] == patch["seq"]
    widget.close()


def test_patch_size_does_not_grow_with_the_fleet(homes, tmp_path):
    sizes = []
    for fleet in (10, 500):
        hub = Hub(home=tmp_path / f"h{fleet}", claude_home=homes.claude).start()
        try:
            fill(hub, fleet)
            widget = StatusWidget(hub)
            recorder = Recorder(widget)
            change_one(hub)
            [patch] = wait_until(recorder.patches, what="the patch")
            patch.pop("now")
            sizes.append(len(json.dumps(patch, separators=(",", ":"))))
            widget.close()
        finally:
            hub.stop()
    assert abs(sizes[0] - sizes[1]) <= 8, sizes  # only the counts' digits may differ


def test_bursts_are_coalesced(hub):
    fill(hub, 50)
    widget = StatusWidget(hub)
    recorder = Recorder(widget)

    def burst() -> None:
        for i in range(50):
            hub.apply(s.Stop(at=now_ms(), session_id=f"s-{i:04d}"))

    started = now_ms()
    hub.call(burst)
    wait_until(lambda: sum(len(p["upsert"]) for p in recorder.patches()) >= 50, what="all 50 rows")
    elapsed = max(1, now_ms() - started)
    patches = recorder.patches()
    assert len(patches) <= 2 + elapsed // 50  # at most one per 50 ms
    # A flush sends its patch, then its notifications one by one: wait for the last of them.
    with_notes = lambda: [m for m in recorder.messages if m["type"] == "notify"]  # noqa: E731
    notes = wait_until(lambda: len(with_notes()) >= 50 and with_notes(), what="50 notifications")
    assert len(notes) == 50 and {n["notification"]["state"] for n in notes} == {"review"}
    widget.close()


def test_a_session_that_starts_to_wait_is_sent_at_once(hub, monkeypatch):
    """Not after the coalescing interval: a dialog's PermissionRequest comes a few ms after
    the PreToolUse that was just sent (P11: amber before the dialog is drawn)."""
    monkeypatch.setattr(feed_module, "MIN_PATCH_INTERVAL", 3600.0)
    fill(hub, 2)
    widget = StatusWidget(hub)
    recorder = Recorder(widget)

    def tool_then_dialog() -> None:
        hub.apply(s.Stop(at=now_ms(), session_id="s-0001"))  # flushed at once (first)
        hub.apply(s.Stop(at=now_ms(), session_id="s-0000"))  # waits for the interval
        hub.apply(s.PermissionRequest(at=now_ms(), session_id="s-0001", tool_name="Bash"))

    hub.call(tool_then_dialog)
    patches = wait_until(lambda: len(recorder.patches()) >= 2 and recorder.patches(), 10)
    assert [r["state"] for r in patches[1]["upsert"]] == ["review", "needs-input"]
    widget.close()


def test_closed_widget_stops_listening(hub):
    widget = StatusWidget(hub)
    listeners = len(hub._listeners)
    widget.close()
    assert len(hub._listeners) == listeners - 1
    fill(hub, 3)  # must not raise on the hub thread


def test_dismiss_message_answers_with_the_row(hub):
    fill(hub, 1)
    hub.call(lambda: hub.apply(s.Stop(at=now_ms(), session_id="s-0000")))
    widget = StatusWidget(hub)
    recorder = Recorder(widget)
    widget._on_front_end_msg(widget, {"type": "dismiss", "session_id": "s-0000"}, [])
    patch = wait_until(lambda: recorder.patches(), what="answer")[-1]
    assert patch["upsert"][0]["state"] == "idle"
    assert hub.fleet["s-0000"].source == "user:dismiss"
    # Refused (no longer in review): still answered, so the button does not stay pending.
    widget._on_front_end_msg(widget, {"type": "dismiss", "session_id": "s-0000"}, [])
    wait_until(lambda: len(recorder.patches()) >= 2, what="second answer")


def test_seen_message_ends_a_review_silently_and_leaves_needs_input(hub):
    fill(hub, 2)
    hub.call(lambda: hub.apply(s.Stop(at=now_ms(), session_id="s-0000")))
    hub.call(
        lambda: hub.apply(s.PermissionRequest(at=now_ms(), session_id="s-0001", tool_name="Bash"))
    )
    widget = StatusWidget(hub)
    recorder = Recorder(widget)
    widget._on_front_end_msg(widget, {"type": "seen", "session_id": "s-0001"}, [])
    widget._on_front_end_msg(widget, {"type": "seen", "session_id": "s-0000"}, [])
    patch = wait_until(lambda: recorder.patches(), what="the look's patch")[-1]
    assert [(r["session_id"], r["state"], r["source"]) for r in patch["upsert"]] == [
        ("s-0000", "idle", "user:seen")
    ]
    assert hub.fleet["s-0001"].state is State.NEEDS_INPUT
    with recorder.lock:
        assert not [m for m in recorder.messages if m["type"] == "notify"]
    widget.close()


def test_an_action_for_an_unknown_session_is_refused_with_the_reason(hub):
    widget = StatusWidget(hub)
    recorder = Recorder(widget)
    message = {"type": "action", "session_id": "gone", "action": "approve", "token": "x"}
    widget._on_front_end_msg(widget, message, [])
    widget._on_front_end_msg(widget, {"type": "peek", "session_id": "gone"}, [])

    def answers():
        with recorder.lock:
            return [m for m in recorder.messages if m["type"] in ("action_result", "peek_result")]

    got = {m["type"]: m for m in wait_until(lambda: len(answers()) == 2 and answers(), what="2")}
    assert got["action_result"] == {
        "type": "action_result",
        "session_id": "gone",
        "action": "approve",
        "ok": False,
        "message": "no session gone",
        "queued": False,
    }
    assert got["peek_result"]["ok"] is False and got["peek_result"]["message"] == "no session gone"


def test_rows_carry_the_dialog_token_a_click_sends_back(hub):
    from pmux_widget.notebook.widget import short_token
    from pmux_widget.runtime.actions import dialog_token

    fill(hub, 1)
    change_one(hub, "s-0000")
    widget = StatusWidget(hub)
    sent = widget.snapshot["sessions"]["s-0000"]
    assert sent["dialog_token"] == short_token(dialog_token(hub.fleet["s-0000"]))
    assert len(sent["dialog_token"]) == 12
    assert sent["asks"] == "asks to run: pytest -q tests/test_widget.py"
    assert sent["answer"] is None


def test_text_fallback_is_the_status_table(hub):
    fill(hub, 2)
    widget = StatusWidget(hub)
    text = repr(widget)
    assert "busy" in text and "p0" in text and "need you" in text
    bundle = widget._repr_mimebundle_()
    plain = bundle[0]["text/plain"] if isinstance(bundle, tuple) else bundle["text/plain"]
    assert "busy" in plain


def test_env_reports_claude_and_hooks(hub, homes):
    from pmux_widget import hooks

    widget = StatusWidget(hub)
    assert widget.env["claude_installed"] is True
    assert widget.env["hooks_installed"] is False
    widget._on_front_end_msg(widget, {"type": "install_hooks"}, [])
    assert widget.env["hooks_installed"] is True
    assert widget.env["install_result"]["ok"] is True
    assert hooks.hooks_status(homes.settings, homes.pmux).ok


HMR_CHILD = """
import threading, time
from pmux_widget.notebook.widget import STATIC, StatusWidget

changed = threading.Event()
StatusWidget._esm.changed.connect(lambda text: changed.set())
bundle = STATIC / "widget.js"
deadline = time.monotonic() + 20
while not changed.is_set() and time.monotonic() < deadline:
    bundle.write_bytes(bundle.read_bytes())  # a rebuild, as `npm run watch` does
    changed.wait(0.2)  # (the watcher thread may still be starting: write again)
print("reloaded" if changed.is_set() else "not reloaded")
"""


@pytest.mark.parametrize("hmr", ["1", None])
def test_anywidget_hmr_follows_the_built_bundle(hmr):
    """docs/development.md's loop: with ANYWIDGET_HMR=1 a rebuilt widget.js reaches the widget
    (anywidget watches `_esm` because it is a path); without it, nothing is watched."""
    env = {k: v for k, v in os.environ.items() if k != "ANYWIDGET_HMR"}
    if hmr:
        env["ANYWIDGET_HMR"] = hmr
        code = HMR_CHILD
    else:
        code = "from pmux_widget.notebook.widget import StatusWidget as W; print(W._esm._background_thread)"  # noqa: E501
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("reloaded" if hmr else "None")


def test_history_travels_once_and_patches_carry_none(hub):
    """The timeline's history is read with the model (the ``history`` trait, 24 h), kept current
    in place for views made later, and never synced: a patch is the same size with it."""
    fill(hub, 3)
    change_one(hub, "s-0001")
    widget = StatusWidget(hub)
    recorder = Recorder(widget)
    history = widget.history
    assert history["since"] <= now_ms() - 24 * 3600 * 1000 + 60_000
    assert [t["state"] for t in history["sessions"]["s-0001"]] == ["busy", "needs-input"]
    assert history["sessions"]["s-0001"][1]["source"] == "hook:PermissionRequest"
    assert set(history["sessions"]) == {"s-0000", "s-0001", "s-0002"}

    change_one(hub, "s-0002")
    [patch] = wait_until(recorder.patches, what="the patch")
    assert "history" not in json.dumps(patch)
    assert {m["type"] for m in recorder.messages} <= {"patch", "notify"}
    # In place, for the next view: the new transition is there.
    entries = widget.history["sessions"]["s-0002"]
    assert [t["state"] for t in entries] == ["busy", "needs-input"]
    assert entries[-1]["at"] == patch["upsert"][0]["state_since"]
    fill(hub, 5)  # two new sessions: added to a copy of the sessions dict
    wait_until(lambda: "s-0004" in widget.history["sessions"], what="a new session's history")
    widget.close()


def test_a_long_lived_widget_keeps_about_a_day_of_history():
    from pmux_widget.notebook.feed_history import trimmed as _trimmed

    day = 24 * 3600 * 1000
    history = {
        "since": 0,
        "sessions": {
            "a": [{"at": t, "state": "busy", "source": ""} for t in (1, 5, 3 * day, 3 * day + 9)],
            "b": [{"at": 2, "state": "idle", "source": ""}],
        },
    }
    trimmed = _trimmed(history, 2 * day)
    assert trimmed["since"] == 2 * day
    # each session keeps the transition that was current at `since`
    assert [e["at"] for e in trimmed["sessions"]["a"]] == [5, 3 * day, 3 * day + 9]
    assert [e["at"] for e in trimmed["sessions"]["b"]] == [2]
    assert len(history["sessions"]["a"]) == 4  # a new value: the old one is left as it was
