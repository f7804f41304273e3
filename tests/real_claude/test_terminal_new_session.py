"""``pmux_widget.new_session`` with the real CLI of each pin (issue 21): a kernel-like hub in
the test's process asks the Jupyter server (found through Jupyter's runtime files) to open a
terminal running ``claude`` with a first prompt; the Session comes back once the hub knows it,
in that terminal, and the session ends in review with the scripted model's answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmux_widget import hooks as pmux_hooks
from pmux_widget.core.model import State
from pmux_widget.demo.claude_env import NEWEST, ClaudeEnv
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.notebook.starting import LaunchError, new_session
from pmux_widget.notebook.waiting import Answer, Ask
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until
from ..jupyter_ext import LabServer

pytestmark = pytest.mark.all_versions


@pytest.fixture
def lab(
    tmp_path: Path,
    claude_cli: Path,
    cli_version: str,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[LabServer, ClaudeEnv, Hub]]:
    pmux = PmuxHome(tmp_path / "pmux")
    env = ClaudeEnv(
        scripted_model.base_url,
        root=tmp_path / "claude",
        extra_env={"PMUX_WIDGET_HOME": str(pmux.root)},
        version=cli_version,
    )
    pmux_hooks.install(env.settings_file, pmux)
    # the server's terminals run the pinned CLI in the sealed environment
    server_env = {**env.env(), "PMUX_WIDGET_CLAUDE": str(claude_cli)}
    server = LabServer(tmp_path, claude=env.config_dir, pmux=pmux.root, env=server_env).start()
    # this process is the kernel: it finds the server in Jupyter's runtime dir
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", server.env["JUPYTER_RUNTIME_DIR"])
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(pmux.root))
    hub = make_hub(home=pmux.root, claude_home=env.config_dir).start()
    try:
        yield server, env, hub
    finally:
        hub.stop()
        server.stop()


def test_new_session_opens_a_terminal_whose_session_ends_in_review(
    lab: tuple[LabServer, ClaudeEnv, Hub],
) -> None:
    server, env, hub = lab
    session = new_session(hub, env.cwd, prompt="say hi", where="terminal")
    assert session.terminal is not None
    assert session.state is not State.IDLE or session.last_prompt == "say hi"  # its turn began
    name = session.terminal.name
    listed = server.get("api/terminals").json()
    assert name in [t["name"] for t in listed]
    wait_until(
        lambda: hub.fleet[session.session_id].state is State.REVIEW,
        90,
        what=lambda: f"review: {hub.fleet[session.session_id]}",
    )
    assert "scripted model" in (hub.fleet[session.session_id].last_assistant or "")
    # the server's own hub shows it in that terminal too
    rows = server.get("pmux/api/sessions").json()["sessions"]
    assert {"name": name} in [r["terminal"] for r in rows if r["session_id"] == session.session_id]
    # a folder that does not exist: refused with the reason, nothing opened
    with pytest.raises(LaunchError, match="no folder"):
        new_session(hub, env.cwd / "nowhere", where="terminal")
    assert len(server.get("api/terminals").json()) == len(listed)


@pytest.mark.cli_versions(NEWEST, reason="the tutorial's flow; the mechanics run on every pin")
def test_agents_side_by_side_collect_their_answers(
    lab: tuple[LabServer, ClaudeEnv, Hub],
) -> None:
    """What notebooks/agents.ipynb does: two agents in two terminals, asked together."""
    _, env, hub = lab
    other = env.cwd.parent / "other"
    other.mkdir()
    env.trust(other)
    agents = [new_session(hub, folder, prompt="say hi") for folder in (env.cwd, other)]
    names = {s.terminal.name for s in agents if s.terminal is not None}
    assert len(names) == 2

    async def collect() -> list[Answer]:
        return list(await asyncio.gather(*(Ask(hub, s.session_id, None, 120) for s in agents)))

    answers = asyncio.run(collect())
    assert [a.state for a in answers] == [State.REVIEW, State.REVIEW]
    assert all("scripted model" in a for a in answers), answers
