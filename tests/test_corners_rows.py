"""Issue 11, the rows' corners: how a session nobody sits at (``claude -p``, an SDK run) and a
tmux pane's title show in the widget. Named after the items; each failed before its fix."""

from __future__ import annotations

import dataclasses

import pytest

from pmux_widget.core import contract
from pmux_widget.core import signals as s
from pmux_widget.core.model import Session, State, TmuxLocation

from .test_tracker import SID, Run


def finished_run(**pid_fields) -> Run:
    """A session that took one prompt and finished its turn; a PID file with ``pid_fields``."""
    run = Run()
    run.hook("SessionStart", at=1_000, source="startup")
    if pid_fields:
        record = s.PidRecord(pid=1166, session_id=SID, cwd="/w/p", started_at=1, **pid_fields)
        run(s.PidFile(at=1_020, record=record, project="p"))
    run.hook("UserPromptSubmit", at=1_300, prompt="say hi")
    run.hook("Stop", at=2_000, last_assistant_message="Hi!")
    return run


@pytest.mark.parametrize(
    ("fields", "label"),
    [
        ({"kind": "interactive", "entrypoint": "sdk-cli"}, "claude -p"),
        ({"kind": "interactive", "entrypoint": "sdk-py"}, "SDK"),
        ({"kind": "interactive", "entrypoint": "sdk-ts"}, "SDK"),
        ({"kind": "daemon", "entrypoint": "cli"}, "background"),
        ({"kind": "interactive", "entrypoint": "cli"}, None),  # a person sits there
        ({}, None),  # nothing says who sits there
    ],
)
def test_item5_non_interactive_row_is_labelled_and_never_waits_for_you(fields, label):
    run = finished_run(**fields)
    session = run.session
    row = contract.row(session)
    assert row["non_interactive"] == label
    counts = contract.counts([session])
    if label is None:
        assert row["state"] == "review" and counts["attention"] == 1
    else:  # shown as what it is, never as a finished turn that waits for you
        assert row["state"] == "idle" and counts["attention"] == 0 and counts["review"] == 0


def test_item5_hook_entrypoint_labels_a_run_without_pid_file():
    """No PID file (older CLIs, SDK child processes): the hub reads CLAUDE_CODE_ENTRYPOINT
    from the hook's process, or sees ``-p`` on Claude's command line (``sdk-cli``)."""
    run = Run()
    start = s.parse_hook(
        {"session_id": SID, "hook_event_name": "SessionStart", "source": "startup"}, at=1_000
    )
    assert not isinstance(start, s.Invalid)
    run(dataclasses.replace(start, entrypoint="sdk-cli"))  # as the hub's named_hook does
    run.hook("Stop", at=2_000)
    assert contract.row(run.session)["non_interactive"] == "claude -p"
    # a PID file that comes later wins (it names the kind too)
    record = s.PidRecord(
        pid=1166, session_id=SID, cwd="/w/p", started_at=1, kind="interactive", entrypoint="sdk-py"
    )
    run(s.PidFile(at=2_100, record=record, project="p"))
    assert contract.row(run.session)["non_interactive"] == "SDK"


def test_item5_show_non_interactive_false_hides_them_in_the_widget(api_hub):
    import pmux_widget

    widget = pmux_widget.status_widget()
    assert widget.show_non_interactive is None  # the browser's remembered choice
    pmux_widget.show(non_interactive=False)
    assert pmux_widget.status_widget() is widget and widget.show_non_interactive is False
    pmux_widget.show(non_interactive=True)
    assert widget.show_non_interactive is True
    pmux_widget.show()  # no option: the last choice stays
    assert widget.show_non_interactive is True


@pytest.fixture
def api_hub(homes):
    import pmux_widget

    hub = pmux_widget.start()
    yield hub
    pmux_widget.stop()


# ------------------------------------------------------- item 6: the pane's title, shown


def in_pane(title: str, **fields) -> Session:
    tmux = TmuxLocation(session="work", window="2", pane="%7", title=title)
    return Session(session_id=SID, state=State.IDLE, state_since=1, project="shop", tmux=tmux,
                   **fields)  # fmt: skip


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("api server", "api server"),  # the user named the pane (select-pane -T)
        ("✳ Fix the login redirect", "Fix the login redirect"),  # Claude's topic, idle
        ("⠂ Fix the login redirect", "Fix the login redirect"),  # the same, while it works
        ("✳ Claude Code", None),  # Claude before it has a topic
        ("devbox", None),  # tmux's default: the machine's name
        ("devbox.example.com", None),
        ("shop", None),  # repeats the project
        ("", None),
    ],
)
def test_item6_pane_title_is_shown_when_it_tells_something(title, shown):
    row = contract.row(in_pane(title), machine="devbox.example.com")
    assert row["pane_title"] == shown
    assert row["tmux"] is not None and row["tmux"]["title"] == title  # the raw one stays


def test_item6_pane_title_of_a_fleet_session_drops_that_hosts_default():
    assert (
        contract.row(in_pane("buildhost", host="buildhost"), machine="devbox")["pane_title"] is None
    )
    assert (
        contract.row(Session(session_id=SID, state=State.IDLE, state_since=1))["pane_title"] is None
    )


def test_item6_the_widget_row_knows_this_machines_name(api_hub):
    import socket

    from pmux_widget.notebook.widget import row

    assert row(in_pane(socket.gethostname()))["pane_title"] is None
    assert row(in_pane("✳ Refactor payments"))["pane_title"] == "Refactor payments"
