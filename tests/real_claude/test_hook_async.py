"""The tool hooks are async (issue 28): on the real CLI, nothing is lost or reordered.

Claude Code does not wait for an ``"async": true`` hook, so a tool call's PreToolUse and
PostToolUse scripts race, and the CLI may exit while one still runs (2.1.197 then sends it
SIGTERM). Each test drives a pinned CLI in print mode against the scripted model with our
hooks installed by ``pmux_widget.hooks.install``:

* a real hub, with every PreToolUse held back (``sleep`` before our command) so that it
  reaches the hub after its PostToolUse: every hook still arrives, and no overtaken
  PreToolUse brings its tool back (paired by ``tool_use_id``);
* a hub that never answers and no Stop/SessionEnd entries, so the CLI exits right after the
  last tool's async hooks, while their curl still waits: every event is spooled anyway, and a
  hub started afterwards replays them into the right final state.
"""

from __future__ import annotations

import collections
import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from pmux_widget import hooks as pmux_hooks
from pmux_widget.core.model import Session, State
from pmux_widget.core.signals import HookSignal, PostToolUse, PreToolUse
from pmux_widget.demo.forty_tools import HOOKS, PROMPT, TOOLS
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.runtime.assemble import make_hub

from ..helpers import wait_until
from .test_kill9 import hooked_env


def _settings(env_settings: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(env_settings.read_text())
    return doc


def _hook_scripts_running(home_script: Path) -> bool:
    needle = str(home_script).encode()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if needle in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


@pytest.mark.all_versions
def test_tool_hooks_overtaken_by_their_posttooluse_bring_no_tool_back(
    claude_cli: Path, cli_version: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    env, home = hooked_env(scripted_model, tmp_path, cli_version, tool_hooks=True)
    doc = _settings(env.settings_file)
    entries = [h for g in doc["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert entries and all(h.get("async") is True for h in entries)
    for group in doc["hooks"]["PreToolUse"]:  # the race, forced: Pre reaches the hub late
        for hook in group["hooks"]:
            # the delay's shell ignores what our script ignores (2.1.197 sends SIGTERM to the
            # async hooks still running when it exits): else it is the delay that is lost
            hook["command"] = f"trap '' HUP TERM; sleep 0.3; {hook['command']}"
    env.settings_file.write_text(json.dumps(doc, indent=2))

    hub = make_hub(home=home.root, claude_home=env.config_dir).start()
    arrivals: list[tuple[HookSignal, Session | None, Session | None]] = []
    accept = hub.accept_hook

    def recording(
        signal: HookSignal, ppid: int | None, hook_id: tuple[int, int] | None = None
    ) -> None:
        before = hub.fleet.get(signal.session_id)
        accept(signal, ppid, hook_id)
        arrivals.append((signal, before, hub.fleet.get(signal.session_id)))

    hub.accept_hook = recording  # type: ignore[method-assign]
    try:
        proc = env.run_print(claude_cli, PROMPT, timeout=600)
        assert proc.returncode == 0 and "Ran all 40 steps" in proc.stdout, proc.stderr
        wait_until(
            lambda: (
                not _hook_scripts_running(home.hook_script)
                and sum(isinstance(a[0], PreToolUse) for a in arrivals) == TOOLS
            ),
            60,
            what=lambda: (
                f"every hook at the hub ({collections.Counter(a[0].event_name for a in arrivals)})"
            ),
        )
        # On a loaded machine a hook whose POST the busy hub did not answer within the
        # script's 1 s is spooled, as the contract says: not lost, replayed by the next hub
        spooled = [
            json.loads(e.payload_bytes or b"{}")["hook_event_name"]
            for e in pmux_hooks.read_spool(home)
        ]
        counts = collections.Counter(a[0].event_name for a in arrivals)
        seen = counts + collections.Counter(spooled)
        if cli_version == "2.1.197" and "SessionEnd" not in seen:
            # 2.1.197, exiting while async hooks still run (here: forty held back), sends them
            # SIGTERM and at times skips its SessionEnd hook altogether (docs/hooks.md): the
            # row ends by its process's exit instead. Everything else must be there.
            seen["SessionEnd"] = 1
            sid = arrivals[-1][0].session_id
            wait_until(
                lambda: (x := hub.fleet.get(sid)) is not None and not x.running,
                30,
                what="the session not running after its CLI exited",
            )
            assert seen == HOOKS, spooled
            return
        assert seen == HOOKS, spooled
        pre_ids = [a[0].tool_use_id for a in arrivals if isinstance(a[0], PreToolUse)]
        post_ids = [a[0].tool_use_id for a in arrivals if type(a[0]) is PostToolUse]
        assert len(set(pre_ids)) == TOOLS and set(pre_ids) == set(post_ids)
        finished: set[str | None] = set()
        overtaken = 0
        for signal, before, after in arrivals:
            if isinstance(signal, PostToolUse):
                finished.add(signal.tool_use_id)
            elif isinstance(signal, PreToolUse) and signal.tool_use_id in finished:
                overtaken += 1
                assert after is not None and before is not None
                assert (after.state, after.current_tool, after.tool_summary) == (
                    before.state,
                    before.current_tool,
                    before.tool_summary,
                ), f"an overtaken PreToolUse changed the session: {after.current_tool!r}"
        assert overtaken, "no PreToolUse arrived after its PostToolUse: the race was not forced"
        final = arrivals[-1][2]
        assert final is not None
        if spooled:  # the next hub replays them: the same final state
            sid = final.session_id
            hub.stop()
            hub = make_hub(home=home.root, claude_home=env.config_dir).start()
            final = wait_until(
                lambda: (
                    (x := hub.fleet.get(sid)) is not None and x.source == "hook:SessionEnd" and x
                ),
                30,
                what=lambda: f"the spooled {spooled} replayed",
            )
        assert final.source == "hook:SessionEnd"
        assert (final.state, final.running, final.current_tool) == (State.IDLE, False, None)
        assert not list(home.spool_dir.glob("*.hook"))
    finally:
        hub.stop()


class _NeverAnswers:
    """A hub that accepts connections and never answers, listed in ``runtime/``."""

    def __init__(self, runtime: Path) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()
        self.file = runtime / "never.json"
        runtime.mkdir(parents=True, exist_ok=True)
        port = self.sock.getsockname()[1]
        self.file.write_text(json.dumps({"pid": os.getpid(), "port": port}))

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                continue

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.file.unlink(missing_ok=True)
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.mark.all_versions
def test_async_hooks_still_running_when_the_cli_exits_are_spooled(
    claude_cli: Path, cli_version: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    env, home = hooked_env(scripted_model, tmp_path, cli_version, tool_hooks=True)
    doc = _settings(env.settings_file)
    # Without its synchronous Stop and SessionEnd hooks the CLI exits right after the last
    # tool's async hooks, whose curl waits up to 1 s on the silent hub.
    for event in ("Stop", "SessionEnd"):
        del doc["hooks"][event]
    env.settings_file.write_text(json.dumps(doc, indent=2))
    never = _NeverAnswers(home.runtime_dir)
    try:
        proc = env.run_print(claude_cli, "please read the readme", timeout=300)
        assert proc.returncode == 0 and "README says hello" in proc.stdout, proc.stderr
        wait_until(lambda: not _hook_scripts_running(home.hook_script), 30, what="hooks done")
    finally:
        never.close()
    spooled = pmux_hooks.read_spool(home)
    events = [json.loads(e.payload_bytes or b"{}")["hook_event_name"] for e in spooled]
    assert sorted(events) == sorted(
        ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"]
    ), events
    # the next hub replays them in order: the tool is over, the turn still runs (no Stop)
    hub = make_hub(home=home.root, claude_home=env.config_dir).start()
    try:
        sid = json.loads(spooled[0].payload_bytes or b"{}")["session_id"]
        session = wait_until(lambda: hub.fleet.get(sid), 30, what="the replayed session")
        assert session.current_tool is None and session.last_prompt == "please read the readme"
    finally:
        hub.stop()
