"""Pre-warmed spare workers against the real CLI (issue 37 part 4): the daemon of
``claude --bg`` keeps a spare worker booted (``claude … --bg-spare``), which fires
``SessionStart(startup)`` for a placeholder session of its own while its PID file says it is a
spare (``spare: true``, or a ``bg`` file with no job), in either order. No row for a spare,
ever (not even an ended one, ``pid:spare``): every session the hub ever showed is one
``claude agents --json`` lists. A spare that takes a job is that job's row, with the hooks it
fired before its PID file named the job (held by the hub, then applied)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pmux_widget.core.model import Change, Session, State
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until

pytestmark = [pytest.mark.all_versions, pytest.mark.timeout(300)]


def _decided(hub: Hub, session_id: str) -> bool:
    """The hub took the hook for no session's (a spare's, the view's own), or holds it until
    its PID file says whose it is."""
    held = any(h.session_id == session_id for h in hub._spare_hooks.held_hooks())
    return session_id in hub._not_sessions or held


def test_spares_never_make_a_row_and_a_claimed_spare_is_its_jobs_row(
    make_bg: Callable[..., BgClaude], tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = PmuxHome(tmp_path_factory.mktemp("pmux"))
    bg = make_bg(home)
    hub = make_hub(home=home.root, claude_home=bg.env.config_dir).start()
    seen: dict[str, Session] = {}

    def record(changes: list[Change], fleet: dict[str, Session]) -> None:
        seen.update((c.session_id, c.after) for c in changes)

    hub.add_listener(record)
    try:
        bg.view()  # the agent view starts the daemon, which pre-warms a spare
        bg.wait_ready()
        first = bg.start("please ask later", "spare-a")  # most often the spare, claimed
        # a job dispatched while the daemon's next spare still boots can hang for good
        # (2.1.197 under load: docs/claude-code-behaviour.md): one at a time
        bg.wait_ready()
        second = bg.start("please ask later", "spare-b")
        for job in (first, second):
            bg.wait_status(job, "waiting", timeout=90)
        agents = {a["sessionId"]: a for a in bg.agents()}
        assert len(agents) == 2, agents
        bg.wait_ready()  # the daemon pre-warms a spare again (a claim took the first)

        def others() -> set[str]:
            """The sessions whose SessionStart fired that are no job's: the spares'
            placeholders, the view's own."""
            started = {
                h["payload"]["session_id"]
                for h in bg.env.hooks()
                if h["payload"] and h["payload"].get("hook_event_name") == "SessionStart"
            }
            return started - set(agents)

        placeholders = wait_until(others, timeout=60, what="a spare's SessionStart")
        wait_until(
            lambda: hub.call(
                lambda: all(_decided(hub, sid) or sid in hub.fleet for sid in placeholders)
            ),
            timeout=15,
            what=f"the hooks of {placeholders} (spares, the view) reached the hub",
        )

        def rows() -> dict[str, tuple[object, ...]]:
            found: dict[str, tuple[object, ...]] = hub.call(
                lambda: {
                    sid: (s.state, s.source, s.ended, s.pid, s.background)
                    for sid, s in hub.fleet.items()
                }
            )
            return found

        wait_until(
            lambda: all(rows().get(sid, (None,))[0] is State.NEEDS_INPUT for sid in agents),
            timeout=30,
            what=lambda: f"the two jobs' rows on their dialog: {rows()}, {bg.env.pid_files()}",
        )
        shown = hub.call(lambda: dict(seen))
        strays = {
            sid: (s.source, s.ended, s.pid, s.project)
            for sid, s in shown.items()
            if sid not in agents
        }
        hooks = [
            (h["payload"].get("hook_event_name"), h["payload"].get("session_id"), h.get("ppid"))
            for h in bg.env.hooks()
            if h["payload"]
        ]
        assert not strays, (strays, bg.env.pid_files(), hooks)
        fleet = hub.call(lambda: dict(hub.fleet))
        for sid, agent in agents.items():
            row = fleet[sid]
            assert row.pid == agent["pid"] and row.background is not None
            assert row.tracking.hooked and row.last_prompt == "please ask later"
    finally:
        hub.stop()
    assert hub.errors == 0, "hub errors (see the log)"
