"""A multi-select question of the REAL Claude Code CLI answered in JupyterLab's panel (issue
34): its options are checkboxes with one Submit; ticking two and Submit answers with both
labels; next time one box and Other's typed text answer together. Keyboard only where a
person would type (the Other box); the clicks are the page's.

The newest pinned CLI runs in a private tmux server against the scripted model ("ask me to
pick several": "Which checks should run before the release?" — Lint / Types / Tests); the
Jupyter server's own hub (the server extension) watches its config dir, and the answer goes
through the panel's stream to ``runtime.actions`` (the keys typed by label into the pane).
What the CLI got is read from its transcript (``AskUserQuestion``'s tool result).
"""

from __future__ import annotations

from typing import Any

import pytest

from pmux_widget.demo.claude_cli import TmuxClaude

from ..helpers import wait_until
from ..real_claude.test_answer import CHECKS, nth_result
from .conftest import LabPage
from .test_lab_extension import PANEL, open_lab
from .test_lab_extension_actions import setup  # noqa: F401 (the fixture: Lab + the real CLI)

pytestmark = [pytest.mark.browser, pytest.mark.real_claude]


def _asked(lab: LabPage, cli: TmuxClaude, sid: str, prompt: str) -> Any:
    cli.type_prompt(prompt)
    cli.wait_for_screen(CHECKS)
    lab.wait_state(sid, "needs-input", within=PANEL, timeout=45)
    row = lab.row(sid, within=PANEL)
    group = row.locator('.pmux-ask [role="group"]')
    group.wait_for()
    return row


def test_a_multi_select_answered_with_checkboxes_then_with_other(
    setup: tuple[LabPage, TmuxClaude],  # noqa: F811
) -> None:
    lab, cli = setup
    open_lab(lab)
    lab.command("pmux-widget:show-panel")
    cli.start(timeout=90)
    sid = wait_until(cli.session_id, 30, what="the CLI's PID file")
    lab.wait_state(sid, "idle", within=PANEL, timeout=45)

    row = _asked(lab, cli, sid, "ask me to pick several")
    assert "asks: " + CHECKS in row.locator(".pmux-primary").inner_text()
    boxes = row.locator('.pmux-ask input[type="checkbox"]')
    assert [boxes.nth(i).get_attribute("value") for i in range(boxes.count())] == [
        "Lint",
        "Types",
        "Tests",
    ]
    submit = row.locator("button.pmux-act--submit")
    assert submit.get_attribute("data-ready") is None  # nothing chosen yet
    row.get_by_label("Lint", exact=True).check()
    row.get_by_label("Tests", exact=True).check()
    assert submit.get_attribute("data-ready") == "true"
    submit.click()
    assert nth_result(cli, "AskUserQuestion", 1)["answers"] == {CHECKS: "Lint, Tests"}
    lab.wait_state(sid, "review", within=PANEL, timeout=45)

    # Once more: one box and Other's text (Enter in the Other box sends both).
    row = _asked(lab, cli, sid, "ask me to pick several (again)")
    row.get_by_label("Types", exact=True).check()
    other = row.locator(".pmux-ask-other input")
    other.fill("Docs too")
    other.press("Enter")
    answers = nth_result(cli, "AskUserQuestion", 2)["answers"]
    assert set(answers) == {CHECKS}, answers
    assert [part.strip() for part in answers[CHECKS].split(",")] == ["Types", "Docs too"], answers
    lab.wait_state(sid, "review", within=PANEL, timeout=45)
