"""The server extension black box: a real ``jupyter server`` with pmux-widget's extension
enabled from a conf.d file, hooks fired through the installed script, the routes and the
websocket over real sockets (``tests/jupyter_ext.py``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import websocket

from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.store import Store

from .helpers import wait_until
from .jupyter_ext import TOKEN, Hooks, LabServer

SID = "1ab5e2f0-0000-4000-8000-00000000c0de"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LabServer]:
    lab = LabServer(tmp_path).start()
    try:
        yield lab
    finally:
        lab.stop()


def sessions(server: LabServer) -> dict[str, Any]:
    answer = server.get("pmux/api/sessions")
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


def state_of(server: LabServer, sid: str) -> str | None:
    found = [s for s in sessions(server)["sessions"] if s["session_id"] == sid]
    return found[0]["state"] if found else None


def stream(server: LabServer, **kwargs: Any) -> websocket.WebSocket:
    kwargs.setdefault("header", [f"Authorization: token {TOKEN}"])
    return websocket.create_connection(server.url("pmux/api/stream", "ws"), timeout=15, **kwargs)


def frames(ws: websocket.WebSocket, until: Any, what: str) -> list[dict[str, Any]]:
    """Frames until ``until(frame)`` holds (each recv waits at most the socket's timeout)."""
    seen: list[dict[str, Any]] = []
    while True:
        try:
            frame = json.loads(ws.recv())
        except websocket.WebSocketTimeoutException:
            raise AssertionError(f"no frame for {what}; seen: {seen}") from None
        seen.append(frame)
        if until(frame):
            return seen


class View:
    """What the front-end's store does with the frames: the snapshot, then only newer patches."""

    def __init__(self, traits: dict[str, Any]) -> None:
        self.traits = dict(traits)
        self.rows = dict(traits["snapshot"]["sessions"])
        self.seq = traits["snapshot"]["seq"]
        self.counts = traits["snapshot"]["counts"]
        self.notes: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []

    def state(self, sid: str) -> str | None:
        row = self.rows.get(sid)
        return row["state"] if row else None

    def apply(self, frame: dict[str, Any]) -> None:
        if frame["type"] == "traits":
            self.traits.update(frame["traits"])
            return
        content = frame["content"]
        if content["type"] == "patch" and content["seq"] > self.seq:
            self.seq = content["seq"]
            self.counts = content["counts"]
            for row in content["upsert"]:
                self.rows[row["session_id"]] = row
            for sid in content["remove"]:
                self.rows.pop(sid, None)
        elif content["type"] == "notify":
            self.notes.append(content["notification"])
        elif content["type"] == "action_result":
            self.results.append(content)

    def until(self, ws: websocket.WebSocket, ok: Any, what: str) -> None:
        while not ok(self):
            try:
                self.apply(json.loads(ws.recv()))
            except websocket.WebSocketTimeoutException:
                raise AssertionError(f"the stream never showed {what}") from None


def test_hooks_reach_the_sessions_route_and_the_stream(server: LabServer) -> None:
    hooks = Hooks(server)
    hooks.fire("SessionStart", SID, source="startup")
    hooks.fire("UserPromptSubmit", SID, prompt="add the webhook")
    wait_until(lambda: state_of(server, SID) == "busy", what="the session busy")
    [listed] = [s for s in sessions(server)["sessions"] if s["session_id"] == SID]
    assert listed["terminal"] is None  # issue 21 fills it
    assert listed["project"] == "acme-api" and listed["last_prompt"] == "add the webhook"
    assert sessions(server)["counts"]["busy"] == 1

    ws = stream(server)
    try:
        [first] = frames(ws, lambda f: True, "the first frame")
        assert first["type"] == "traits"
        view = View(first["traits"])
        assert set(view.traits) >= {"snapshot", "history", "env", "title_prefix", "mode"}
        assert view.traits["env"]["hub"]["pid"] == server.pid
        assert view.traits["env"]["claude_installed"] is True
        # the first frame may be up to one coalescing interval behind: a patch follows
        view.until(ws, lambda v: v.state(SID) == "busy", "busy")
        assert [t["state"] for t in view.traits["history"]["sessions"][SID]][-1:] == ["busy"]
        # the hooks were installed after the hub started: env follows them
        view.until(ws, lambda v: v.traits["env"]["hooks_installed"], "env: hooks installed")
        seq = view.seq

        hooks.fire("Stop", SID, last_assistant_message="done")
        view.until(ws, lambda v: v.state(SID) == "review", "review")
        assert view.seq > seq and view.counts["review"] == 1
        view.until(ws, lambda v: v.notes, "the notification")
        assert view.notes[0]["session_id"] == SID and view.notes[0]["state"] == "review"

        # The page's messages reach the same handlers as the widget's: dismiss → patch (idle)
        ws.send(json.dumps({"type": "msg", "content": {"type": "dismiss", "session_id": SID}}))
        view.until(ws, lambda v: v.state(SID) == "idle", "the dismissed row")
        # Anything else is ignored, and the stream goes on.
        junk = [
            "not json",
            "[1]",
            '{"type": "msg", "content": 7}',
            '{"type": "traits", "traits": {"snapshot": {}, "env": 1}}',
            '{"type": "msg", "content": {"type": "action", "session_id": 5}}',
        ]
        ws.send_binary(b"\xff\xfe")
        for frame in junk:
            ws.send(frame)
        # ... and an action on an unknown session answers this page with the reason.
        act = {"type": "action", "session_id": "gone", "action": "approve", "token": None}
        ws.send(json.dumps({"type": "msg", "content": act}))
        view.until(ws, lambda v: v.results, "the action's answer")
        assert view.results[0]["message"] == "no session gone" and not view.results[0]["ok"]
        last_seq = view.seq
    finally:
        ws.close()

    # A second page: a snapshot newer than every patch the first one got, and a switch that
    # one page writes reaches the other (the widget's one model, many views).
    first_page, second_page = stream(server), stream(server)
    try:
        snapshot = frames(second_page, lambda f: True, "a first frame")[0]["traits"]["snapshot"]
        assert snapshot["seq"] >= last_seq and snapshot["sessions"][SID]["state"] == "idle"
        frames(first_page, lambda f: True, "a first frame")
        second_page.send(json.dumps({"type": "traits", "traits": {"desktop_notifications": True}}))
        got = frames(first_page, lambda f: f["type"] == "traits", "the other page's switch")
        assert got[-1]["traits"] == {"desktop_notifications": True}
    finally:
        first_page.close()
        second_page.close()


def doctor(server: LabServer) -> str:
    """``pmux-widget doctor`` in the server's environment (its config and runtime dirs)."""
    result = subprocess.run(
        [sys.executable, "-m", "pmux_widget", "doctor"],
        env=server.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result.stdout


def test_the_hub_is_registered_and_goes_with_a_clean_stop(tmp_path: Path) -> None:
    server = LabServer(tmp_path).start()
    try:
        [info] = wait_until(server.server_hubs, what="the server hub's runtime file")
        assert info["port"] > 0 and info["hub_id"].startswith(f"{server.pid}-")
        pid = server.pid
        said = doctor(server)
        assert "OK   jupyter server extension: pmux_widget.jupyter enabled" in said, said
        assert f"OK   jupyter server: {server.url()} (pid {pid}) runs a hub" in said, said
        ws = stream(server)
        seq = json.loads(ws.recv())["traits"]["snapshot"]["seq"]
        ws.close()
    finally:
        assert server.stop() == 0, server.log()
    assert not [i for i in server.runtime_files() if i.get("pid") == pid]
    assert "Traceback" not in server.log(), server.log()

    # A page that reconnects to the restarted server still sees seq grow.
    again = LabServer(tmp_path).start()
    try:
        ws = stream(again)
        assert json.loads(ws.recv())["traits"]["snapshot"]["seq"] > seq
        ws.close()
    finally:
        again.stop()


def test_a_kernel_hub_and_the_server_hub_store_the_history_once(server: LabServer) -> None:
    """A kernel on the same machine keeps its own hub (docs/architecture.md): both get every
    hook, and the store they share holds each transition once."""
    kernel_hub = Hub(home=server.pmux.root, claude_home=server.claude).start()
    try:
        wait_until(lambda: len(server.runtime_files()) == 2, what="two hubs registered")
        hooks = Hooks(server)
        hooks.fire("SessionStart", SID, source="startup")
        hooks.fire("UserPromptSubmit", SID, prompt="p")
        hooks.fire("Stop", SID)
        wait_until(lambda: state_of(server, SID) == "review", what="the server hub: review")
        wait_until(
            lambda: (s := kernel_hub.fleet.get(SID)) is not None and s.state.value == "review",
            what="the kernel hub: review",
        )
    finally:
        kernel_hub.stop()
    store = Store(server.pmux.db_path, readonly=True)
    try:
        history = [(t.to_state.value, t.source) for t in store.history(SID)]
    finally:
        store.close()
    assert history == [
        ("idle", "hook:SessionStart"),
        ("busy", "hook:UserPromptSubmit"),
        ("review", "hook:Stop"),
    ]


@pytest.mark.parametrize(
    ("env", "args", "config"),
    [
        ({"PMUX_WIDGET_SERVER_HUB": "0"}, (), None),
        ({}, (), "c.PmuxWidget.hub = False\n"),
        ({}, ("--PmuxWidget.hub=False",), None),
    ],
    ids=["env", "config-file", "command-line"],
)
def test_turned_off_the_server_runs_no_hub(
    tmp_path: Path, env: dict[str, str], args: Any, config: str | None
) -> None:
    server = LabServer(tmp_path, env=env, args=args)
    if config is not None:
        (server.config_dir / "jupyter_server_config.py").write_text(config)
    server.start(hub=False)
    try:
        answer = server.get("pmux/api/sessions")
        assert answer.status_code == 503
        assert "runs no pmux-widget hub" in answer.json()["error"]
        assert server.runtime_files() == []
        assert "pmux-widget | the server's hub is off" in server.log()
        said = doctor(server)
        assert f"note jupyter server: {server.url()} (pid {server.pid}) runs no pmux" in said
    finally:
        server.stop()


def test_a_hub_that_cannot_start_leaves_jupyter_running(tmp_path: Path) -> None:
    """PMUX_WIDGET_HOME is a file: the hub fails, the server runs, the routes say why."""
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    server = LabServer(tmp_path, env={"PMUX_WIDGET_HOME": str(blocked)})
    server.start(hub=False)
    try:
        # (a Response is falsy when not ok: wait for the answer in a list)
        [answer] = wait_until(
            lambda: [a for a in [server.get("pmux/api/sessions")] if a.status_code != 200],
            what="the route's answer",
        )
        assert answer.status_code == 503
        assert "the pmux-widget hub failed to start" in answer.json()["error"]
        assert server.get("api/status").status_code == 200
        assert (
            server.post("pmux/api/actions", {"action": "approve", "session_id": "y"}).status_code
            == 503
        )
    finally:
        server.stop()


def test_every_route_needs_jupyter_credentials(tmp_path: Path) -> None:
    # As the extension template's check_auth: no handler of ours lacks an auth decorator.
    args = ("--ServerApp.allow_unauthenticated_access=False",)
    server = LabServer(tmp_path, args=args).start()
    try:
        check_credentials(server)
    finally:
        server.stop()
    # (jupyter_lsp's and the terminals' websockets are listed there; ours never)
    listed = [line for line in server.log().splitlines() if line.startswith("- ")]
    assert "without @allow_unauthenticated" not in server.log() or listed, server.log()
    assert not [line for line in listed if "pmux" in line], listed


def check_credentials(server: LabServer) -> None:
    none: dict[str, str] = {}
    assert server.get("pmux/api/sessions", headers=none).status_code == 403
    assert server.post("pmux/api/actions", {"action": "x"}, headers=none).status_code == 403
    wrong = {"Authorization": "token not-the-token"}
    assert server.get("pmux/api/sessions", headers=wrong).status_code == 403
    with pytest.raises(websocket.WebSocketBadStatusException, match="403"):
        stream(server, header=[])

    # A browser: the login cookie. GET works; a POST without the XSRF token is refused, with
    # it the action is judged (404: no such session).
    browser = server.cookie_session()
    assert browser.get(server.url("pmux/api/sessions"), timeout=15).status_code == 200
    body = json.dumps({"action": "approve", "session_id": "nope"})
    assert browser.post(server.url("pmux/api/actions"), data=body, timeout=15).status_code == 403
    xsrf = {"X-XSRFToken": browser.cookies["_xsrf"]}
    answer = browser.post(server.url("pmux/api/actions"), data=body, headers=xsrf, timeout=15)
    assert answer.status_code == 404, answer.text

    # The websocket on the cookie: its own origin is let in, a foreign one refused.
    cookie = "; ".join(f"{c.name}={c.value}" for c in browser.cookies)
    own = f"http://127.0.0.1:{server.port}"
    ws = stream(server, header=[f"Cookie: {cookie}"], origin=own)
    assert json.loads(ws.recv())["type"] == "traits"
    ws.close()
    with pytest.raises(websocket.WebSocketBadStatusException, match="403"):
        stream(server, header=[f"Cookie: {cookie}"], origin="http://evil.example")


def test_actions_answer_with_the_hub_actions_codes(server: LabServer) -> None:
    hooks = Hooks(server)
    hooks.fire("SessionStart", SID, source="startup")
    wait_until(lambda: state_of(server, SID) == "idle", what="the session")
    for bad in (b"{not json", b"[1, 2]", {"action": "approve"}, {"session_id": SID},
                {"action": "send", "session_id": SID, "text": 7}):  # fmt: skip
        answer = server.post("pmux/api/actions", bad)
        assert answer.status_code == 400, (bad, answer.text)
        assert answer.json()["error"]
    # An unknown action: 400 before the session is looked at (SID has no pane, which would
    # be a 409; "nope" does not exist, a 404).
    for sid in (SID, "nope"):
        answer = server.post("pmux/api/actions", {"action": "format-disk", "session_id": sid})
        assert answer.status_code == 400, (sid, answer.text)
        assert "unknown action 'format-disk'" in answer.json()["error"]
    answer = server.post("pmux/api/actions", {"action": "approve", "session_id": "nope"})
    assert (answer.status_code, answer.json()) == (404, {"error": "no session nope"})
    answer = server.post("pmux/api/actions", {"action": "approve", "session_id": SID})
    assert answer.status_code == 409 and "no permission prompt" in answer.json()["error"]
    answer = server.post("pmux/api/actions", {"action": "send", "session_id": SID, "text": "hi"})
    assert answer.status_code == 409  # idle, but no Claude process runs it: nothing is typed
    assert server.get("pmux/api/actions").status_code == 405  # never by GET
    too_big = {"action": "send", "session_id": SID, "text": "x" * 300_000}
    assert server.post("pmux/api/actions", too_big).status_code == 413


def test_under_a_jupyterhub_base_url(tmp_path: Path) -> None:
    server = LabServer(tmp_path, base_url="/user/alice/").start()
    try:
        hooks = Hooks(server)
        hooks.fire("SessionStart", SID, source="startup")
        wait_until(lambda: state_of(server, SID) == "idle", what="the session")
        ws = stream(server)
        assert SID in json.loads(ws.recv())["traits"]["snapshot"]["sessions"]
        ws.close()
        # a browser logged in under /user/alice/: its cookie's path is the base URL
        browser = server.cookie_session()
        assert browser.get(server.url("pmux/api/sessions"), timeout=15).status_code == 200
        cookie = "; ".join(f"{c.name}={c.value}" for c in browser.cookies)
        ws = stream(server, header=[f"Cookie: {cookie}"], origin=f"http://127.0.0.1:{server.port}")
        assert json.loads(ws.recv())["type"] == "traits"
        ws.close()
        outside = requests.get(
            f"http://127.0.0.1:{server.port}/pmux/api/sessions",
            headers=server.headers(),
            timeout=15,
        )
        assert outside.status_code == 404
    finally:
        server.stop()


def test_a_hung_hub_does_not_stall_jupyter(server: LabServer) -> None:
    """The hub's thread held busy (a hung probe): Jupyter's own API answers, ours says why."""
    assert server.post("pmux/api/test/hang?seconds=60", {}).status_code == 202
    for _ in range(3):
        assert server.get("api/status").status_code == 200
        assert server.get("api/contents").status_code == 200
    answer = server.get("pmux/api/sessions")
    assert answer.status_code == 503
    assert "did not answer" in answer.json()["error"]
    assert server.get("api/status").status_code == 200


def test_the_extension_is_listed_enabled_and_ok(server: LabServer) -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter", "server", "extension", "list"],
        env=server.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = listed.stdout + listed.stderr
    assert listed.returncode == 0, out
    lines = [line for line in out.splitlines() if "pmux_widget.jupyter" in line]
    assert any("enabled" in line for line in lines), out
    assert any("OK" in line for line in lines), out
    assert not [line for line in lines if "error" in line.lower() or "X" in line.split()], out


def test_the_wheel_enables_the_extension_on_install(tmp_path: Path) -> None:
    """An editable install does not put shared-data into etc/ (the tests enable it through
    their config dir): the built wheel must carry the conf.d file, at that path, with a
    ``jpserver_extensions`` entry of its own, never a whole dict of another package's."""
    root = Path(__file__).resolve().parents[1]
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(root)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = tmp_path.glob("pmux_widget-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [config] = [n for n in names if n.endswith("jupyter_server_config.d/pmux_widget.json")]
        assert config.split(".data/", 1)[1] == (
            "data/etc/jupyter/jupyter_server_config.d/pmux_widget.json"
        )
        enabled = json.loads(archive.read(config))
        assert "pmux_widget/jupyter/__init__.py" in names
    assert enabled == {"ServerApp": {"jpserver_extensions": {"pmux_widget.jupyter": True}}}


def test_the_usage_curl_examples_work(server: LabServer) -> None:
    """docs/usage.md's curl lines, against this server (its URL, token and a session)."""
    Hooks(server).fire("SessionStart", SID, source="startup")
    wait_until(lambda: state_of(server, SID) == "idle", what="the session")
    usage = (Path(__file__).parents[1] / "docs" / "usage.md").read_text()
    section = usage.split("## In the Jupyter server", 1)[1]
    script = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert script is not None
    lines = script.group(1).replace("http://127.0.0.1:8888/", server.url()).replace("5f0c…", SID)
    out = subprocess.run(
        ["bash", "-c", lines.replace("curl ", "curl -sS ") + "\n"],
        env={**server.env, "JUPYTER_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    listed, refused = out.stdout.split("}{", 1)
    assert SID in listed + "}"
    # idle: nothing to interrupt, so the route refuses it with the reason (409)
    assert "error" in json.loads("{" + refused)
