"""The kernel ↔ browser contract: one definition (core/contract.py), and everything else agrees.

- the committed TypeScript (js/src/contract.gen.ts, js/testing/contract-sample.gen.ts) is what
  the contract generates now, so the browser's types cannot drift from Python's;
- the contract agrees with the model (state names, session JSON keys, count keys);
- what a real StatusWidget over a real Hub sends validates against the contract's TypedDicts:
  every key present, no extra key, every value of its declared type.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import anywidget
import pytest

from pmux_widget.core import contract as c
from pmux_widget.core import contract_ts as ts
from pmux_widget.core import signals as s
from pmux_widget.core import wording as w
from pmux_widget.core.model import (
    JSON_FIELDS,
    Notification,
    Session,
    State,
    TmuxLocation,
    Tracking,
    count_states,
)
from pmux_widget.notebook.widget import StatusWidget
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

from .helpers import wait_until
from .test_widget import Recorder, change_one, fill

ROOT = Path(__file__).resolve().parent.parent


def conforms(value: Any, tp: Any, where: str = "$") -> list[str]:
    """Where ``value`` breaks the type ``tp`` (a contract TypedDict, or what one holds)."""
    if tp is Any:
        return []
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        hints = get_type_hints(tp)
        problems = [f"{where}: missing {k!r}" for k in hints if k not in value]
        problems += [f"{where}: extra {k!r}" for k in value if k not in hints]
        for key, hint in hints.items():
            if key in value:
                problems += conforms(value[key], hint, f"{where}.{key}")
        return problems
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        arms = get_args(tp)
        tagged = [a for a in arms if is_typeddict(a) and "type" in get_type_hints(a)]
        if tagged and isinstance(value, dict):  # a message: pick the arm by its "type"
            for arm in tagged:
                if value.get("type") in get_args(get_type_hints(arm)["type"]):
                    return conforms(value, arm, where)
            return [f"{where}: no message type {value.get('type')!r}"]
        if any(not conforms(value, arm, where) for arm in arms):
            return []
        return [f"{where}: {value!r} is none of {tp}"]
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{where}: {value!r} not in {get_args(tp)}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        (item,) = get_args(tp)
        return [p for i, v in enumerate(value) for p in conforms(v, item, f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        _, item = get_args(tp)
        return [p for k, v in value.items() for p in conforms(v, item, f"{where}[{k!r}]")]
    if tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if tp is int:  # JSON numbers; a bool is not one
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not an int"]
    return [] if isinstance(value, tp) else [f"{where}: {value!r} is not {tp.__name__}"]


# --------------------------------------------------------------------------- generated files


@pytest.mark.parametrize("path", sorted(ts.GENERATED))
def test_committed_typescript_is_what_the_contract_generates(path):
    committed = (ROOT / path).read_text(encoding="utf-8")
    assert committed == ts.GENERATED[path](), (
        f"{path} differs from pmux_widget/core/contract.py: run `npm run contract` and commit"
    )


def test_the_typescript_declares_every_contract_type():
    text = ts.typescript()
    for name in ("State", "Counts", "Row", "Snapshot", "PatchMessage", "Env", "HubInfo"):
        assert f"export type {name} " in text or f"export interface {name} " in text, name
    assert "  pid: number;\n  hub_id: string;" in text  # the hub's pid is a number


# --------------------------------------------------------------------------- contract = model


def test_state_names_are_the_models():
    assert get_args(c.StateName) == tuple(state.value for state in State)


def test_count_keys_are_what_count_states_returns():
    assert tuple(get_type_hints(c.Counts)) == c.COUNT_KEYS
    assert tuple(count_states([])) == c.COUNT_KEYS


def test_need_you_has_one_meaning_and_one_wording():
    """Issue 30: the count said "2 need you" while the panel's "Needs you" section held one
    row. What the count counts (``attention``) is what ``needs_you`` picks, in the states the
    section and the bell list, and every place says it with the same words."""
    assert set(w.NEED_YOU_STATES) == {State.NEEDS_INPUT, State.REVIEW}
    assert w.NEED_YOU_STATES[0] is State.NEEDS_INPUT  # the most urgent first, as the section
    sessions = [
        Session(session_id=f"{state.value}-{n}", state=state, tracking=Tracking(ended=ended))
        for state in State
        for ended in (False, True)
        for n in range(3)
    ]
    assert sum(map(w.needs_you, sessions)) == c.counts(sessions)["attention"] == 6
    assert not any(w.needs_you(s) for s in sessions if s.ended)
    assert [w.need_you(n) for n in (0, 1, 2)] == ["0 need you", "1 need you", "2 need you"]
    assert [w.need_you_sentence(n) for n in (0, 1, 3)] == [
        "Nothing needs you",
        "1 session needs you",
        "3 sessions need you",
    ]
    assert (w.title_prefix(0), w.title_prefix(4)) == ("", "(4) ")
    assert w.NEEDS_YOU == w.NEED_YOU_WORDS["section"] == "Needs you"
    # the browser's copy is generated from these (test_committed_typescript_... checks it)
    generated = ts.typescript()
    assert '"count": "{n} need you"' in generated
    assert 'NEED_YOU_STATES: readonly State[] = ["needs-input", "review"]' in generated


def test_each_agent_has_a_name_and_only_other_agents_a_mark():
    """Issue 36: a row of another agent than Claude carries a mark with its name, in the
    words the browser gets (generated) and ``status`` prints; Claude's rows carry none."""
    from pmux_widget.core.agents import AGENTS, DEFAULT_AGENT

    assert set(w.AGENT_NAMES) == set(AGENTS)
    assert w.agent_mark(DEFAULT_AGENT) is None
    assert [w.agent_mark(a) for a in AGENTS if a != DEFAULT_AGENT] == ["Codex"]
    generated = ts.typescript()
    assert '"codex": "Codex"' in generated
    assert f'DEFAULT_AGENT = "{DEFAULT_AGENT}"' in generated
    # the sample the vitest reads has rows of both agents, and the marks
    sample = ts.sample()
    assert {r["agent"] for r in sample["rows"]} == set(AGENTS)
    assert sample["agent_marks"] == {"claude": None, "codex": "Codex"}
    # a notification names the agent as the row does
    asking = Session(session_id="x", state=State.NEEDS_INPUT, project="api", agent="codex")
    assert w.notification_text(asking)[0] == "api (Codex) needs you"
    assert w.notification_text(asking.replace(agent="claude"))[0] == "api needs you"


def test_session_json_is_the_models():
    assert tuple(get_type_hints(c.SessionJSON)) == JSON_FIELDS
    session = Session(session_id="x", tmux=TmuxLocation("work", "1", "%3", "title"), ports=(3000,))
    assert conforms(session.to_json(), c.SessionJSON) == []
    assert conforms(c.row(session), c.Row) == []
    note = Notification("x", State.REVIEW, "title", "body", 1)
    assert conforms(note.to_json(), c.NotificationJSON) == []


def test_the_checker_finds_a_drift():
    """The checks above can fail: a missing, an extra and a mistyped key are all reported."""
    good = c.row(Session(session_id="x"))
    drifted: dict[str, Any] = {**good, "pid": "1234-abcd", "extra": 1}
    del drifted["name"]
    problems = conforms(drifted, c.Row)
    assert any("missing 'name'" in p for p in problems)
    assert any("extra 'extra'" in p for p in problems)
    assert any("$.pid" in p for p in problems)


def test_source_labels_are_plain_words():
    assert c.describe_source("hook:Stop") == "finished its turn"
    assert c.describe_source("hook:PermissionRequest") == "asked for permission"
    assert c.describe_source("transcript:interrupt") == "interrupted"
    assert c.describe_source("recovery:pid:busy") == "working (at restart)"
    assert c.describe_source("process:gone") == "its process exited"
    assert c.describe_source("hook:Elicitation") == "signal: Elicitation"
    assert c.describe_source("new:thing") == "new:thing"
    assert c.describe_source("action:approve") == "approved"
    assert c.describe_source("action:deny@Pixel 8 (Web Push)") == "denied from Pixel 8 (Web Push)"
    # No label names the machinery a new user does not know.
    for label in c.SOURCE_LABELS.values():
        assert not any(word in label for word in ("hook", "PID", "via ")), label


def test_every_source_the_tracker_sets_has_a_label():
    import re

    core = ROOT / "pmux_widget" / "core"
    rules = ("tracker", "transitions", "rules_hooks", "rules_files", "rules_process")
    tracker = "".join((core / f"{name}.py").read_text() for name in rules)
    literal = set(re.findall(r'"((?:pid|poll|process|transcript|user):[a-z-]+)"', tracker))
    assert literal and literal <= c.SOURCE_LABELS.keys(), literal - c.SOURCE_LABELS.keys()
    for event in (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "Notification",
        "PostToolUse",
        "Stop",
        "StopFailure",
        "SessionEnd",
    ):
        assert f"hook:{event}" in c.SOURCE_LABELS


def test_paths_are_relative_to_the_session_and_keep_the_file_name():
    cwd = "/tmp/pytest-7/projects/acme-api"
    text = f"Edit {cwd}/src/acme/payments/processors/stripe_webhooks.py (+3, -1)"
    assert w.relative_paths(text, cwd) == "Edit src/…/processors/stripe_webhooks.py (+3, -1)"
    assert w.relative_paths(f"cd {cwd} && ls", cwd) == "cd . && ls"
    assert w.relative_paths("Read /etc/hosts", cwd) == "Read /etc/hosts"
    long = "/home/dev/other/project/with/a/very/long/path/to/some/file_name.py"
    short = w.relative_paths(f"Read {long}", cwd)
    assert short.endswith("/file_name.py") and "…" in short and len(short) <= 5 + w.PATH_LIMIT
    assert w.relative_paths("WebFetch https://x.org/a/b/c", cwd) == "WebFetch https://x.org/a/b/c"


def _asking(tool, summary, **kw):
    return Session(
        "s", state=State.NEEDS_INPUT, cwd="/w/api", current_tool=tool, tool_summary=summary, **kw
    )


def test_asks_says_what_in_full_words():
    assert w.asks(_asking("Bash", "$ uv run pytest -q")) == "asks to run: uv run pytest -q"
    assert (
        w.asks(_asking("Edit", "Edit /w/api/src/a.py (+1, -0)")) == "asks to edit src/a.py (+1, -0)"
    )
    assert w.asks(_asking("Write", "Write /w/api/b.txt")) == "asks to write b.txt"
    assert w.asks(_asking("mcp__x__y", "mcp__x__y go")) == "asks to use mcp__x__y: go"
    waits = Tracking(waiting_for="permission for Bash")
    assert w.asks(_asking(None, None, tracking=waits)) == "permission for Bash"
    assert w.asks(_asking(None, None)) == "waits for your answer"
    row = c.row(_asking("Bash", "$ ls"))
    assert row["asks"] == "asks to run: ls" and "why" not in row


def test_the_answer_of_an_older_turn_is_never_shown():
    done = Session(
        "s",
        state=State.REVIEW,
        last_assistant="All 142 tests pass",
        tracking=Tracking(prompt_at=10, assistant_at=20),
    )
    assert w.answer(done) == "All 142 tests pass"
    assert w.answer(done.replace(state=State.BUSY)) is None
    newer_prompt = done.tracking.replace(prompt_at=30)
    assert w.answer(done.replace(state=State.IDLE, tracking=newer_prompt)) is None  # interrupted
    assert w.notification_text(done) == ("s finished its turn", "All 142 tests pass")
    title, body = w.notification_text(_asking("Bash", "$ make"))
    assert (title, body) == ("api needs you", "asks to run: make")


def test_context_window_by_model():
    assert w.context_window(None) == 200_000
    assert w.context_window("claude-sonnet-4-5-20250929") == 200_000
    assert w.context_window("claude-sonnet-4-5[1m]") == 1_000_000
    assert w.context_window("Sonnet 4.5 (1M context)") == 1_000_000
    assert 0.9 <= w.AUTO_COMPACT_AT <= 0.95 and w.CONTEXT_WARN_AT < w.AUTO_COMPACT_AT


# --------------------------------------------------------------------------- what really travels


@pytest.fixture
def hub(homes):
    hub = Hub().start()
    yield hub
    hub.stop()


def test_what_the_widget_sends_is_the_contract(hub):
    fill(hub, 3)
    hub.call(lambda: hub.apply(s.Stop(at=now_ms(), session_id="s-0001")))
    widget = StatusWidget(hub)
    recorder = Recorder(widget)

    own = StatusWidget.class_trait_names(sync=True)
    traits = set(own) - set(anywidget.AnyWidget.class_trait_names(sync=True))
    assert traits == set(get_type_hints(c.Traits))
    state = {name: getattr(widget, name) for name in traits}
    assert conforms(state, c.Traits) == []
    assert widget.env["hub"]["pid"] > 0 and widget.env["hub"]["hub_id"] == hub.hub_id

    change_one(hub, "s-0000")  # a patch and a notification
    wait_until(lambda: any(m["type"] == "notify" for m in recorder.messages), what="notify")
    widget._on_front_end_msg(widget, {"type": "dismiss", "session_id": "s-0001"}, [])
    wait_until(lambda: len(recorder.patches()) >= 2, what="the dismiss answer")
    widget._on_front_end_msg(widget, {"type": "install_hooks"}, [])
    widget._on_front_end_msg(widget, {"type": "action", "session_id": "nope", "action": "deny"}, [])
    widget._on_front_end_msg(widget, {"type": "peek", "session_id": "nope"}, [])
    widget._on_front_end_msg(widget, {"type": "attach", "session_id": "nope"}, [])
    answered = {"action_result", "peek_result", "attach_result"}
    wait_until(
        lambda: answered <= {m["type"] for m in recorder.messages},
        what="the action, peek and attach answers",
    )

    kinds = {m["type"] for m in recorder.messages}
    assert kinds == {"patch", "notify", "install_result", *answered}
    for message in recorder.messages:
        assert conforms(message, c.KernelMessage) == [], message
    assert conforms(widget.snapshot, c.Snapshot) == []
    assert conforms(widget.env, c.Env) == []
    assert widget.env["install_result"] is not None
    widget.close()
