"""Agent SDK runs answered from pmux-widget (issue 35 part 1): ``pmux_widget.can_use_tool``
with the SDK's bundled CLI 2.1.337 and the scripted model, our hooks installed.

The hub where it is in use: in this process (``pmux_widget.start()``), in another process
(``pmux-widget serve``, as the Jupyter server's would be: reached over loopback HTTP), and
none at all. approve, deny, answer, interrupt, a stale decision, a killed waiter.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pmux_widget
from pmux_widget.core.model import State
from pmux_widget.core.wording import non_interactive
from pmux_widget.notebook import api
from pmux_widget.notify.answers import AnswerTokens
from pmux_widget.runtime import decisions
from pmux_widget.runtime.action_request import answer_from
from pmux_widget.runtime.actions import ActionError, act, dialog_token
from pmux_widget.system.clock import now_ms

from ..helpers import wait_until
from .sdk_runs import SdkRun, sdk_options

ASK_COLOUR = {
    "name": "sdk_ask_colour",
    "keywords": ["ask me the colour"],
    "turns": [
        {
            "content": [
                {
                    "type": "tool_use",
                    "name": "AskUserQuestion",
                    "input": {
                        "questions": [
                            {
                                "question": "Which colour should the status badge use?",
                                "header": "Colour",
                                "multiSelect": False,
                                "options": [
                                    {"label": "Purple", "description": "the brand's"},
                                    {"label": "Amber", "description": "easier to see"},
                                ],
                            },
                            {
                                "question": "Which states get a badge?",
                                "header": "States",
                                "multiSelect": True,
                                "options": [
                                    {"label": "needs-input", "description": ""},
                                    {"label": "review", "description": ""},
                                    {"label": "busy", "description": ""},
                                ],
                            },
                        ]
                    },
                }
            ],
            "usage": {"input_tokens": 10, "output_tokens": 30},
        },
        {"content": [{"type": "text", "text": "Noted your choice."}]},
    ],
}


@pytest.fixture
def own_hub(sdk_env, monkeypatch) -> Iterator[Any]:
    """``pmux_widget.start()`` in this process (the kernel's own hub)."""
    env, pmux_home = sdk_env
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(pmux_home.root))
    hub = pmux_widget.start(home=pmux_home.root, claude_home=env.config_dir)
    yield hub
    api.stop()
    assert hub.errors == 0


def _waiting(hub: Any, run: SdkRun, timeout: float = 60) -> tuple[str, decisions.Pending]:
    """The run's session id and its call waiting in ``hub``, once the row is needs-input."""
    sid = wait_until(lambda: run.session_id, timeout, what="the SDK's init message")
    pending = wait_until(
        lambda: (
            (p := hub.decisions.waiting(sid)) is not None
            and hub.fleet[sid].state is State.NEEDS_INPUT
            and hub.fleet[sid].tool_summary  # the PermissionRequest hook: what it asks
            and p
        ),
        timeout,
        what="the call to wait and the row to be needs-input",
    )
    return sid, pending


def _tool_results(env: Any, sid: str) -> list[str]:
    out = []
    for line in env.transcript_path(sid).read_text().splitlines():
        record = json.loads(line)
        content = (
            (record.get("message") or {}).get("content") if record.get("type") == "user" else None
        )
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return out


def test_approve_from_the_api_resolves_the_waiting_call(sdk_env, own_hub):
    env, _ = sdk_env
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid, pending = _waiting(own_hub, run)
    row = own_hub.fleet[sid]
    assert row.tool_summary and "touch" in row.tool_summary
    assert row.question is not None and row.question.kind == "permission"
    assert pending.tool_name == "Bash"
    assert own_hub.snapshot_json()["counts"]["needs-input"] == 1
    pmux_widget.session(sid).approve()
    run.wait(60)
    assert run.error is None and run.result.permission_denials == []
    assert list(env.cwd.glob("sim-*.txt")), "the approved touch ran"
    assert own_hub.decisions.waiting(sid) is None
    assert not (own_hub.home.root / "decisions" / f"{sid}.json").exists()
    # the history says who answered it
    sources = [t.source for t in own_hub.history(sid)]
    assert "action:approve" in sources


def test_deny_says_who_and_where_and_a_second_decision_is_refused(sdk_env, own_hub):
    env, _ = sdk_env
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid, _ = _waiting(own_hub, run)
    shown = dialog_token(own_hub.fleet[sid])
    act(own_hub, sid, "deny", text="not now", token=shown, record=own_hub.record_action)
    with pytest.raises(ActionError):  # the same dialog, answered already: nothing reaches it
        act(own_hub, sid, "approve", token=shown, record=own_hub.record_action)
    run.wait(60)
    assert [d["tool_name"] for d in run.result.permission_denials] == ["Bash"]
    assert not list(env.cwd.glob("sim-*.txt"))
    [result] = [r for r in _tool_results(env, sid) if "Denied" in r]
    assert "Denied by the user, from pmux-widget (" in result and "not now" in result


def test_a_stale_token_is_refused_and_the_call_keeps_waiting(sdk_env, own_hub):
    env, _ = sdk_env
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid, pending = _waiting(own_hub, run)
    row = own_hub.fleet[sid]
    stale = f"needs-input:{row.state_since - 5000}:{row.tool_summary}"
    with pytest.raises(ActionError, match="moved on"):
        act(own_hub, sid, "approve", token=stale)
    assert not pending.future.done() and own_hub.decisions.waiting(sid) is pending
    act(own_hub, sid, "approve", token=dialog_token(row))
    run.wait(60)
    assert run.result.permission_denials == []


def test_interrupt_denies_and_stops_the_turn(sdk_env, own_hub):
    env, _ = sdk_env
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid, _ = _waiting(own_hub, run)
    pmux_widget.session(sid).interrupt()
    run.wait(60)
    assert [d["tool_name"] for d in run.result.permission_denials] == ["Bash"]
    # recorded (2.1.337): with interrupt the CLI writes its own rejection, not our message,
    # and ends the turn at once (no further request to the model)
    assert any("STOP what you are doing" in r for r in _tool_results(env, sid))
    assert run.result.terminal_reason == "aborted_tools"
    wait_until(
        lambda: own_hub.fleet[sid].state is not State.NEEDS_INPUT, 15, what="the row to move on"
    )


def test_a_question_is_answered_with_its_options(sdk_env, own_hub, scripted_model):
    """The waiting AskUserQuestion gets updated_input with the answers (one label; several
    joined with ", " for multi-select), and the model reads them in the tool result."""
    env, _ = sdk_env
    scripted_model.scenarios.insert(0, ASK_COLOUR)
    run = SdkRun(
        "please ask me the colour", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid, _ = _waiting(own_hub, run)
    row = own_hub.fleet[sid]
    assert row.question is not None and row.question.kind == "question"
    assert [a.question for a in row.question.questions] == [
        "Which colour should the status badge use?",
        "Which states get a badge?",
    ]
    with pytest.raises(ActionError, match="takes one answer"):
        act(own_hub, sid, "answer", options=["Purple", "Amber"])
    with pytest.raises(ActionError, match="answer it with one of its options"):
        act(own_hub, sid, "approve")
    act(
        own_hub,
        sid,
        "answer",
        options=["Amber", "needs-input", "review"],
        token=dialog_token(row),
        record=own_hub.record_action,
    )
    run.wait(60)
    assert run.result.permission_denials == []
    [result] = [r for r in _tool_results(env, sid) if "answered" in r]
    assert '"Which colour should the status badge use?"="Amber"' in result
    assert '"Which states get a badge?"="needs-input, review"' in result
    print(result)


@pytest.fixture
def serve(sdk_env, monkeypatch) -> Iterator[subprocess.Popen[str]]:
    """``pmux-widget serve`` in a process of its own: the hub is elsewhere, as the Jupyter
    server's is for a kernel."""
    env, pmux_home = sdk_env
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(pmux_home.root))
    argv = [sys.executable, "-m", "pmux_widget", "--home", str(pmux_home.root)]
    argv += ["--claude-home", str(env.config_dir), "serve"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "pmux-widget hub on" in line, line
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _cli(pmux_home: Any, env: Any, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pmux_widget", "--home", str(pmux_home.root)]
    return subprocess.run(
        [*argv, "--claude-home", str(env.config_dir), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _published(pmux_home: Any, sid: str) -> Path:
    return pmux_home.root / "decisions" / f"{sid}.json"


def test_with_the_hub_in_another_process_the_cli_approves(sdk_env, serve):
    env, pmux_home = sdk_env
    assert api._hub is None or not api._hub.running  # no hub here: the call goes over HTTP
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid = wait_until(lambda: run.session_id, 60, what="the SDK's init message")
    wait_until(
        lambda: _published(pmux_home, sid).exists(), 30, what="the call to wait in serve's hub"
    )
    status = wait_until(
        lambda: (
            (out := _cli(pmux_home, env, "status", "--json")).returncode == 0
            and any(
                s["session_id"] == sid and s["state"] == "needs-input"
                for s in json.loads(out.stdout)["sessions"]
            )
        ),
        30,
        what="serve's row to be needs-input",
    )
    assert status
    out = _cli(pmux_home, env, "approve", sid)
    assert out.returncode == 0, out.stderr
    run.wait(60)
    assert run.error is None and run.result.permission_denials == []
    assert list(env.cwd.glob("sim-*.txt"))
    assert not _published(pmux_home, sid).exists()


KERNEL = """
import asyncio, json, os, sys
sys.path.insert(0, {root!r})
import pmux_widget
from claude_agent_sdk import ClaudeAgentOptions, query
env = json.loads(os.environ["SDK_ENV"])
async def main():
    options = pmux_widget.agent_options(cwd={cwd!r}, env=env)
    async for message in query(prompt="please run the command", options=options):
        print(type(message).__name__, getattr(message, "session_id", ""), flush=True)
asyncio.run(main())
"""


def test_a_killed_waiter_leaves_no_call_and_no_dialog(sdk_env, own_hub):
    """The program whose call waits dies (a kernel restarted): the hub drops the call (its
    connection closed), the published file goes, the CLI with it, and the row ends."""
    env, pmux_home = sdk_env
    code = KERNEL.format(root=str(Path(__file__).resolve().parents[2]), cwd=str(env.cwd))
    kernel = subprocess.Popen(
        [sys.executable, "-c", code],
        env={
            **os.environ,
            "SDK_ENV": json.dumps(env.env()),
            "PMUX_WIDGET_HOME": str(pmux_home.root),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        sid = wait_until(
            lambda: next(iter(own_hub.decisions._pending), None),
            90,
            what="the kernel's call to wait",
        )
        wait_until(_published(pmux_home, sid).exists, 5, what="the call's published file")
        wait_until(lambda: own_hub.fleet[sid].state is State.NEEDS_INPUT, 15, what="needs-input")
        os.kill(kernel.pid, signal.SIGKILL)
        kernel.wait(10)
        # dropping cancels the call, then removes its file (a step later, on another thread)
        wait_until(
            lambda: (
                own_hub.decisions.waiting(sid) is None and not _published(pmux_home, sid).exists()
            ),
            10,
            what="the call to be dropped and its published file removed",
        )
        # the CLI (its stdin gone) exits: the row ends, no dialog left
        wait_until(
            lambda: own_hub.fleet[sid].ended or own_hub.fleet[sid].state is not State.NEEDS_INPUT,
            30,
            what="the row to leave needs-input",
        )
        with pytest.raises(ActionError):
            act(own_hub, sid, "approve")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(kernel.pid, signal.SIGKILL)
        kernel.wait(10)


def test_with_no_hub_the_call_is_refused_once_said_and_never_hangs(sdk_env, monkeypatch, caplog):
    env, pmux_home = sdk_env
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(pmux_home.root))
    assert api._hub is None or not api._hub.running
    started = time.monotonic()
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    run.wait(90)
    assert run.error is None
    [denial] = run.result.permission_denials
    assert denial["tool_name"] == "Bash"
    assert any("no pmux-widget hub runs" in r for r in _tool_results(env, run.session_id))
    print(f"refused with no hub; the run took {time.monotonic() - started:.1f} s")


@pytest.fixture
def jupyter(sdk_env, tmp_path, monkeypatch) -> Iterator[Any]:
    """A real Jupyter server with our extension, its hub watching the SDK env (the usual
    case: the kernel and the server are separate processes)."""
    from ..jupyter_ext import LabServer

    env, pmux_home = sdk_env
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(pmux_home.root))
    server = LabServer(tmp_path / "lab", claude=env.config_dir, pmux=pmux_home.root).start()
    yield server
    server.stop()


def test_with_the_hub_in_a_jupyter_server_its_action_route_decides(sdk_env, jupyter):
    """The program (a kernel) has no hub: its call waits in the server's, and the panel's
    route (POST pmux/api/actions, Jupyter's auth) resolves it; a second answer is refused."""
    env, pmux_home = sdk_env
    assert api._hub is None or not api._hub.running
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid = wait_until(lambda: run.session_id, 60, what="the SDK's init message")
    wait_until(_published(pmux_home, sid).exists, 30, what="the call to wait in the server's hub")
    published = json.loads(_published(pmux_home, sid).read_text())
    assert published["pid"] == jupyter.pid

    def row() -> dict[str, Any] | None:
        rows = jupyter.get("pmux/api/sessions").json()["sessions"]
        return next((r for r in rows if r["session_id"] == sid), None)

    shown = wait_until(
        lambda: (
            (r := row()) is not None and r["state"] == "needs-input" and r["tool_summary"] and r
        ),
        30,
        what="the server's row to ask",
    )
    answer = jupyter.post("pmux/api/actions", {"session_id": sid, "action": "deny"})
    assert answer.status_code == 202, answer.text
    again = jupyter.post("pmux/api/actions", {"session_id": sid, "action": "approve"})
    assert again.status_code == 409, again.text
    run.wait(60)
    assert [d["tool_name"] for d in run.result.permission_denials] == ["Bash"]
    [denied] = [r for r in _tool_results(env, sid) if "Denied" in r]
    assert "the Jupyter server on" in denied, denied
    assert shown["state"] == "needs-input"


CELL = """
import json, pmux_widget
from claude_agent_sdk import query
_messages = []
async for _m in query(
    prompt="please run the command",
    options=pmux_widget.agent_options(cwd={cwd!r}, env=json.loads({env!r}){extra}),
):
    _messages.append(_m)
print("DENIALS", len(_messages[-1].permission_denials))
"""


def _client(connection: Path, timeout: float) -> Any:
    """A kernel client on ``connection``, ready; a new one when a starting kernel on a loaded
    machine missed a heartbeat (1 s) and the client called it dead while the server still
    runs it (a client's channels start once)."""
    from jupyter_client import BlockingKernelClient

    deadline = time.monotonic() + timeout
    while True:
        client = BlockingKernelClient()
        client.load_connection_file(str(connection))
        client.start_channels()
        try:
            client.wait_for_ready(timeout=max(1.0, deadline - time.monotonic()))
            return client
        except RuntimeError as exc:
            client.stop_channels()
            if "died" not in str(exc) or time.monotonic() > deadline:
                raise


@pytest.mark.parametrize("hooks", [True, False], ids=["hooks", "setting_sources=[]"])
def test_a_notebooks_kernel_run_names_its_notebook_and_the_panel_approves_it(
    sdk_env, jupyter, hooks
):
    """The usual case, for real: a notebook's kernel (started by the Jupyter server, as
    opening the notebook does) runs the SDK in a cell with agent_options; the panel's row
    (the server's stream) says it is an SDK run from that notebook, and the panel's route
    approves its call. With ``setting_sources=[]`` no hook fires: the row, its origin and
    what it asks come from the PID file and the waiting call alone."""
    from ..test_jupyter_ext import View, frames, stream

    env, pmux_home = sdk_env
    started = jupyter.post(
        "api/sessions",
        {"path": "agents.ipynb", "type": "notebook", "name": "", "kernel": {"name": "python3"}},
    )
    assert started.status_code == 201, started.text
    kernel_id = started.json()["kernel"]["id"]
    connection = Path(jupyter.env["JUPYTER_RUNTIME_DIR"]) / f"kernel-{kernel_id}.json"
    wait_until(connection.exists, 30, what="the kernel's connection file")
    kernels = pmux_home.root / "kernels" / f"{jupyter.pid}.json"
    wait_until(
        lambda: kernels.exists() and kernel_id in kernels.read_text(),
        30,
        what="the server to publish its kernel's notebook",
    )
    client = _client(connection, 60)
    ws = stream(jupyter)
    ws.settimeout(90)  # the kernel starts the SDK's CLI: no frame for a while
    try:
        [first] = frames(ws, lambda f: True, "the first frame")
        view = View(first["traits"])
        extra = "" if hooks else ", setting_sources=[]"
        client.execute(CELL.format(cwd=str(env.cwd), env=json.dumps(env.env()), extra=extra))

        def asking(v: View) -> bool:
            return any(r["state"] == "needs-input" and r["tool_summary"] for r in v.rows.values())

        view.until(ws, asking, "the kernel's run asking")
        [row] = [r for r in view.rows.values() if r["state"] == "needs-input"]
        assert row["non_interactive"] == "SDK"
        if not hooks:  # no hook reached the server: the waiting call and the PID file said it
            assert row["source"] in ("sdk:waiting", "pid:waiting"), row
        assert row["origin"] == {
            "program": "ipykernel",
            "kernel_id": kernel_id,
            "notebook": "agents.ipynb",
        }
        sid = row["session_id"]
        wait_until(_published(pmux_home, sid).exists, 10, what="the call to wait")
        # the panel's Approve: the row's short token, over the stream, as a click sends it
        click = {"type": "action", "session_id": sid, "action": "approve"}
        ws.send(json.dumps({"type": "msg", "content": {**click, "token": row["dialog_token"]}}))
        view.until(ws, lambda v: v.results, "the click's answer")
        assert view.results[0]["ok"], view.results[0]
        reply = client.get_shell_msg(timeout=90)
        assert reply["content"]["status"] == "ok", reply["content"]
        out = ""
        with contextlib.suppress(Exception):  # (queue.Empty once the output is read)
            while True:
                msg = client.get_iopub_msg(timeout=2)
                if msg["msg_type"] == "stream":
                    out += msg["content"]["text"]
        assert "DENIALS 0" in out, out
        assert list(env.cwd.glob("sim-*.txt"))
    finally:
        ws.close()
        client.stop_channels()
        import requests

        requests.delete(
            jupyter.url(f"api/kernels/{kernel_id}"), headers=jupyter.headers(), timeout=30
        )


def test_with_no_hooks_the_handler_says_what_waits_and_the_answer_reaches_it(
    sdk_env, own_hub, scripted_model
):
    """setting_sources=[]: no hook at all (agent-sdk.md 1b); the row still asks the question,
    from the call our handler holds, and the answer reaches it."""
    env, _ = sdk_env
    scripted_model.scenarios.insert(0, ASK_COLOUR)
    options = sdk_options(env, can_use_tool=pmux_widget.can_use_tool, setting_sources=[])
    run = SdkRun("please ask me the colour", options).start()
    sid, _ = _waiting(own_hub, run)
    row = own_hub.fleet[sid]
    assert not row.hooked
    # needs-input from the call (sdk:waiting) or the PID file (pid:waiting), whichever came
    # first; what it asks, from the call only (no hook, and a PID file does not say)
    assert row.source in ("sdk:waiting", "pid:waiting"), row.source
    assert row.question is not None and row.question.kind == "question"
    pmux_widget.session(sid).answer("Purple", "busy")  # Session.answer, by label
    run.wait(60)
    assert run.result.permission_denials == []
    [result] = [r for r in _tool_results(env, sid) if "answered" in r]
    assert '"Which colour should the status badge use?"="Purple"' in result
    wait_until(
        lambda: own_hub.fleet[sid].state is not State.NEEDS_INPUT, 15, what="the row to move on"
    )


PROGRAM = """
import asyncio, json, os, sys
sys.path.insert(0, {root!r})
import pmux_widget
from claude_agent_sdk import ResultMessage, query
async def main():
    options = pmux_widget.agent_options(
        cwd={cwd!r}, env=json.loads(os.environ["SDK_ENV"]), setting_sources=[]
    )
    async for message in query(prompt="please run the command", options=options):
        if isinstance(message, ResultMessage):
            print("DENIALS", len(message.permission_denials), flush=True)
asyncio.run(main())
"""


def test_with_no_hooks_a_programs_run_says_sdk_and_names_the_program(sdk_env, own_hub, tmp_path):
    """setting_sources=[] in a program of its own (``python sdk_program.py``): no hook ever
    comes, yet the row (from the PID file) says SDK and names that program, and its call,
    waiting in this process's hub over HTTP, is approved."""
    env, pmux_home = sdk_env
    script = tmp_path / "sdk_program.py"
    script.write_text(
        PROGRAM.format(root=str(Path(__file__).resolve().parents[2]), cwd=str(env.cwd))
    )
    program = subprocess.Popen(
        [sys.executable, str(script)],
        env={
            **os.environ,
            "SDK_ENV": json.dumps(env.env()),
            "PMUX_WIDGET_HOME": str(pmux_home.root),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        sid = wait_until(
            lambda: next(iter(own_hub.decisions._pending), None), 90, what="the call to wait"
        )
        row = wait_until(
            lambda: (s := own_hub.fleet[sid]).state is State.NEEDS_INPUT and s.tool_summary and s,
            15,
            what="the row to ask",
        )
        assert not row.hooked, "no hook fires with setting_sources=[]"
        assert non_interactive(row) == "SDK"
        t = row.tracking
        assert (t.program, t.kernel_id, t.notebook) == ("sdk_program.py", None, None)
        assert "touch" in row.tool_summary
        pmux_widget.session(sid).approve()
        out, err = program.communicate(timeout=90)
        assert program.returncode == 0, err
        assert "DENIALS 0" in out, (out, err)
        assert list(env.cwd.glob("sim-*.txt")), "the approved touch ran"
        wait_until(lambda: own_hub.fleet[sid].ended, 30, what="the row to end")
        assert own_hub.fleet[sid].tracking.program == "sdk_program.py"
    finally:
        if program.poll() is None:
            program.kill()
        program.wait(10)


OWN_HUB_KERNEL = """
import asyncio, json, os, sys
sys.path.insert(0, {root!r})
import pmux_widget
pmux_widget.start(home={home!r}, claude_home={claude!r})  # as show() does in a kernel
from claude_agent_sdk import query
env = json.loads(os.environ["SDK_ENV"])
async def main():
    options = pmux_widget.agent_options(cwd={cwd!r}, env=env)
    async for message in query(prompt="please run the command", options=options):
        print(type(message).__name__, flush=True)
asyncio.run(main())
"""


def test_a_kernel_killed_while_its_own_hub_holds_the_call(sdk_env, own_hub):
    """The call waits in the killed program's own hub (a kernel that ran show()): its CLI
    exits with it and the row leaves needs-input; an approve from another hub (this one) is
    refused at once, forwarded nowhere; the dead hub's published call is swept."""
    env, pmux_home = sdk_env
    code = OWN_HUB_KERNEL.format(
        root=str(Path(__file__).resolve().parents[2]),
        home=str(pmux_home.root),
        claude=str(env.config_dir),
        cwd=str(env.cwd),
    )
    kernel = subprocess.Popen(
        [sys.executable, "-c", code],
        env={
            **os.environ,
            "SDK_ENV": json.dumps(env.env()),
            "PMUX_WIDGET_HOME": str(pmux_home.root),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def published() -> tuple[str, dict[str, Any]] | None:
            for path in (pmux_home.root / "decisions").glob("*.json"):
                with contextlib.suppress(OSError, ValueError):
                    return path.stem, json.loads(path.read_text())
            return None

        sid, call = wait_until(published, 90, what="the kernel's call to wait in its hub")
        assert call["pid"] == kernel.pid and own_hub.decisions.waiting(sid) is None
        wait_until(lambda: own_hub.fleet[sid].state is State.NEEDS_INPUT, 15, what="needs-input")
        os.kill(kernel.pid, signal.SIGKILL)
        kernel.wait(10)
        wait_until(
            lambda: own_hub.fleet[sid].ended or own_hub.fleet[sid].state is not State.NEEDS_INPUT,
            30,
            what="the row to leave needs-input",
        )
        started = time.monotonic()
        with pytest.raises(ActionError):
            act(own_hub, sid, "approve")
        assert time.monotonic() - started < 5
        assert not list(env.cwd.glob("sim-*.txt"))
        assert decisions.clean_stale(pmux_home) == [sid]
        assert published() is None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(kernel.pid, signal.SIGKILL)
        kernel.wait(10)


def test_a_kernel_restarted_while_its_call_waits_in_the_server_leaves_no_dialog(sdk_env, jupyter):
    """A notebook's kernel (no hub of its own) whose call waits in the Jupyter server's hub is
    restarted through Jupyter's API, as the Restart button does: the long poll's connection
    closes, so the server drops the call and its published file; the run's CLI goes with its
    kernel and the row leaves needs-input; the panel's approve is then refused."""
    env, pmux_home = sdk_env
    started = jupyter.post(
        "api/sessions",
        {"path": "agents.ipynb", "type": "notebook", "name": "", "kernel": {"name": "python3"}},
    )
    assert started.status_code == 201, started.text
    kernel_id = started.json()["kernel"]["id"]
    connection = Path(jupyter.env["JUPYTER_RUNTIME_DIR"]) / f"kernel-{kernel_id}.json"
    wait_until(connection.exists, 30, what="the kernel's connection file")
    client = _client(connection, 60)
    try:
        client.execute(CELL.format(cwd=str(env.cwd), env=json.dumps(env.env()), extra=""))
        calls = pmux_home.root / "decisions"
        path = wait_until(
            lambda: next(iter(calls.glob("*.json")), None) if calls.is_dir() else None,
            90,
            what="the kernel's call to wait in the server's hub",
        )
        sid = path.stem
        assert json.loads(path.read_text())["pid"] == jupyter.pid

        def row() -> dict[str, Any] | None:
            rows = jupyter.get("pmux/api/sessions").json()["sessions"]
            return next((r for r in rows if r["session_id"] == sid), None)

        wait_until(
            lambda: (r := row()) is not None and r["state"] == "needs-input",
            30,
            what="the server's row to ask",
        )
        restarted = jupyter.post(f"api/kernels/{kernel_id}/restart", {})
        assert restarted.status_code == 200, restarted.text
        wait_until(lambda: not path.exists(), 30, what="the server to drop the call")
        wait_until(
            lambda: (r := row()) is None or r["state"] != "needs-input",
            60,
            what="the row to leave needs-input",
        )
        refused = jupyter.post("pmux/api/actions", {"session_id": sid, "action": "approve"})
        assert refused.status_code in (404, 409), refused.text
        assert not list(env.cwd.glob("sim-*.txt"))
    finally:
        client.stop_channels()
        import requests

        requests.delete(
            jupyter.url(f"api/kernels/{kernel_id}"), headers=jupyter.headers(), timeout=30
        )


def test_a_phones_notification_answers_the_waiting_call_once(sdk_env, own_hub):
    """The phone's path (issue 35 part 1): a notification's single-use token, bound to this
    dialog, redeemed by its Allow once: the waiting call is allowed, nothing typed anywhere;
    replayed, it is refused and reaches nothing."""
    env, _ = sdk_env
    run = SdkRun(
        "please run the command", sdk_options(env, can_use_tool=pmux_widget.can_use_tool)
    ).start()
    sid, pending = _waiting(own_hub, run)
    tokens = AnswerTokens(own_hub.home.root / "notify.db")
    try:
        token = tokens.issue(own_hub.host_name, own_hub.fleet[sid], now_ms())

        def redeem() -> Any:
            return tokens.answer(
                token,
                "approve",
                host=own_hub.host_name,
                device="phone (test)",
                session_of=own_hub.fleet.get,
                act=answer_from(own_hub, "phone (test)", own_hub.record_action),
                now=now_ms(),
            )

        result = redeem()
        assert (result.status, result.reason) == (202, "answered"), result
        run.wait(60)
        assert run.error is None and run.result.permission_denials == []
        assert len(list(env.cwd.glob("sim-*.txt"))) == 1, "the approved touch ran once"
        assert pending.future.done() and own_hub.decisions.waiting(sid) is None
        replay = redeem()
        assert (replay.status, replay.reason) == (409, "already used"), replay
        assert len(list(env.cwd.glob("sim-*.txt"))) == 1
        sources = [t.source for t in own_hub.history(sid)]
        assert "action:approve@phone (test) (notification)" in sources, sources
    finally:
        tokens.close()
