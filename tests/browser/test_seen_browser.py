"""Seen in real JupyterLab (issue 34): a session in a JupyterLab terminal finishes its turn
while another tab is current: its row and its tab say review. Bringing its terminal tab to the
front (a visible page) ends the review, silently: idle, source ``user:seen``.

The session is test_terminal_tabs.py's stand-in for Claude Code in a real terminal (hooks
fired from inside the terminal, through the installed hook command).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..helpers import wait_until
from .conftest import LabPage, Workspace
from .test_terminal_tabs import SID, Session, lab, open_lab, term_server, wait_tab_state  # noqa: F401

pytestmark = pytest.mark.browser


def session_json(page: LabPage) -> dict[str, Any] | None:
    rows = page.server.api("GET", "/pmux/api/sessions")[1]["sessions"]
    return next((r for r in rows if r["session_id"] == SID), None)


def test_focusing_a_terminal_tab_ends_its_sessions_review(
    lab: tuple[LabPage, Workspace],  # noqa: F811
    tmp_path: Path,
) -> None:
    page, ws = lab
    open_lab(page)
    project = tmp_path / "ui-kit"
    project.mkdir()
    session = Session(ws, project)
    try:
        page.command("terminal:open", {"name": session.name})
        session.step("SessionStart", source="startup")
        wait_until(
            lambda: (session_json(page) or {}).get("terminal") == {"name": session.name},
            30,
            what="the session in its terminal (the server's mapping)",
        )
        session.step("UserPromptSubmit", prompt="add the badge")
        wait_tab_state(page, session.name, "busy")
        # another tab in front: the terminal is not looked at
        page.command("launcher:create")
        page.page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget?.id?.startsWith('launcher')",
            timeout=20_000,
        )
        session.step("Stop", last_assistant_message="The badge is in.")
        wait_tab_state(page, session.name, "review")
        # (a look is told at once on the change that shows the review: none came)
        page.page.wait_for_timeout(1000)
        assert (session_json(page) or {}).get("state") == "review"

        page.command("terminal:open", {"name": session.name})  # its tab to the front
        wait_tab_state(page, session.name, "idle")
        seen = session_json(page)
        assert seen is not None and (seen["state"], seen["source"]) == ("idle", "user:seen"), seen
    finally:
        session.close()
