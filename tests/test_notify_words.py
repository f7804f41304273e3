"""A notification says what a dialog asks, even when the dialog reaches the hub before its
words: a real hub, a real notifier (no away delay) and a json:// channel on a local HTTP
server. (ci14: 2.1.337 wrote its PID file's ``waiting`` 25 ms before its PermissionRequest
reached the hub, and the phone was told "permission prompt".)"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator

import pytest

from pmux_widget.core.model import State
from pmux_widget.notify.config import Channel, edit_config
from pmux_widget.notify.notifier import find
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub

from .conftest import Homes
from .helpers import post_hook, wait_until
from .notify_servers import Recorder
from .test_sources import PidFile

SID = "3e0c7a51-1b2d-4c5e-8f90-00000000w0rd"
BASE = {"session_id": SID, "cwd": "/tmp/acme"}


WAITS_FOR_WORDS = "what it asks is not known yet"


@pytest.fixture
def notified(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Hub, Recorder]]:
    monkeypatch.setenv("PMUX_WIDGET_NOTIFY_DELAY", "0")
    http = Recorder().start()
    with edit_config(homes.pmux) as box:
        channel = Channel(f"json://127.0.0.1:{http.port}/hook")
        box[0] = type(box[0])((channel,), box[0].settings.updated(cooldown_s=0))
    hub = make_hub().start()  # with its notifier, as every hub has
    yield hub, http
    hub.stop()
    http.stop()


def _a_dialog_without_its_words(hub: Hub) -> None:
    prompt = {**BASE, "hook_event_name": "UserPromptSubmit", "prompt": "run the command"}
    assert post_hook(hub.port, hub.token, prompt) == 204
    dialog = {
        **BASE,
        "hook_event_name": "Notification",
        "notification_type": "permission_prompt",
        "message": "Claude needs your permission to use Bash",
    }
    assert post_hook(hub.port, hub.token, dialog) == 204
    wait_until(lambda: hub.fleet[SID].state is State.NEEDS_INPUT, what="needs-input")


def test_the_notification_waits_for_the_words_that_come_late(
    notified: tuple[Hub, Recorder],
) -> None:
    hub, http = notified
    _a_dialog_without_its_words(hub)
    request = {**BASE, "hook_event_name": "PermissionRequest", "tool_name": "Bash",
               "tool_input": {"command": "touch marker"}}  # fmt: skip
    late = threading.Timer(0.4, lambda: post_hook(hub.port, hub.token, request))
    late.start()
    try:
        wait_until(lambda: http.count() >= 1, 10, what="the dialog's notification")
    finally:
        late.join()
    assert http.requests[0].json()["message"] == "asks to run: touch marker"
    assert http.count() == 1 and WAITS_FOR_WORDS in _reasons(hub)


def test_words_that_never_come_leave_what_is_known(notified: tuple[Hub, Recorder]) -> None:
    hub, http = notified
    _a_dialog_without_its_words(hub)
    wait_until(lambda: http.count() >= 1, 10, what="the dialog's notification")
    assert http.requests[0].json()["message"] == "Claude needs your permission to use Bash"


def _reasons(hub: Hub) -> list[str]:
    notifier = find(hub)
    assert notifier is not None
    return [d.reason for _, d in notifier.log]


def test_a_hooked_dialog_is_held_for_its_words_a_hookless_one_is_not(
    notified: tuple[Hub, Recorder], homes: Homes
) -> None:
    """Only a session whose hooks run has words on their way: one known from its PID file
    alone (no hooks installed) is told at once with what Claude wrote there."""
    hub, http = notified
    sleeper = subprocess.Popen(["sleep", "300"])  # a live process for the PID file
    try:
        pid_file = PidFile(homes.claude, sleeper.pid, session_id=SID, cwd="/tmp/acme")
        pid_file.status("busy")
        wait_until(lambda: SID in hub.fleet, what="the PID file's session")
        pid_file.status("waiting", waitingFor="permission prompt")
        wait_until(lambda: http.count() >= 1, 10, what="the dialog's notification")
        assert http.requests[0].json()["message"] == "permission prompt"
        assert WAITS_FOR_WORDS not in _reasons(hub)
    finally:
        sleeper.kill()
        sleeper.wait()
