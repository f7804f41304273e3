"""A Codex row whose TUI process facts do not prove (a /new in a shared home and folder) is
acted on only when its screen shows it (agents/codex/screen_proof.py), on screens recorded
from the real TUI 0.171.0 (tests/fixtures/codex_screens/)."""

from __future__ import annotations

from pathlib import Path

from pmux_widget.agents.codex.screen import Screen, parse_screen
from pmux_widget.agents.codex.screen_proof import same_text, screen_shows, shown_session
from pmux_widget.core.model import Session, State
from pmux_widget.core.question import Ask, Question

SCREENS = Path(__file__).parent / "fixtures" / "codex_screens"


def screen(name: str) -> Screen:
    return parse_screen((SCREENS / f"{name}.txt").read_text())


def row(sid: str, state: State = State.REVIEW, **fields: object) -> Session:
    return Session(session_id=sid, agent="codex", cwd="/p", state=state, **fields)  # type: ignore[arg-type]


def waiting(sid: str, command: str) -> Session:
    return row(sid, State.NEEDS_INPUT, tool_summary=f"$ {command}", last_prompt="please SHELL now")


def test_an_approval_proves_its_session_by_the_command_it_asks_for() -> None:
    s = screen("approval")
    assert screen_shows(s, waiting("a", "touch approved.txt"), []) is None
    refused = screen_shows(s, waiting("a", "rm -rf build"), [])
    assert refused is not None and "'rm -rf build'" in refused
    # another row of the folder waits on the same command: the screen cannot tell them apart
    twin = screen_shows(s, waiting("a", "touch approved.txt"), [waiting("b", "touch approved.txt")])
    assert twin is not None and "cannot tell" in twin
    # a row that waits on nothing has nothing to look for
    assert screen_shows(s, row("a", last_prompt="please SHELL now"), []) is not None


def test_a_question_proves_its_session_by_what_it_asks() -> None:
    asks = Question("question", (Ask("Which color should the banner be?"),))
    other = Question("question", (Ask("Which size?"),))
    s = screen("question")
    assert screen_shows(s, row("a", State.NEEDS_INPUT, question=asks), []) is None
    assert screen_shows(s, row("a", State.NEEDS_INPUT, question=other), []) is not None


def test_a_composer_proves_its_session_by_the_last_prompt_sent() -> None:
    s = screen("interrupted")  # last sent: "please SLOW again"
    assert screen_shows(s, row("a", last_prompt="please SLOW again"), []) is None
    assert screen_shows(s, row("a", last_prompt="hello three"), []) is not None
    assert screen_shows(s, row("a"), []) is not None  # no prompt known
    assert screen_shows(screen("empty"), row("a", last_prompt="hi"), []) is not None  # /new
    rival = row("b", last_prompt="please SLOW again")
    assert screen_shows(s, row("a", last_prompt="please SLOW again"), [rival]) is not None
    # the rival list may hold the session itself: it is no rival of its own
    me = row("a", last_prompt="please SLOW again")
    assert screen_shows(s, me, [me]) is None


def test_same_text_takes_a_clipped_prompt_and_collapsed_whitespace() -> None:
    assert same_text("fix  the\nbug in parser.py", "fix the bug in…")
    assert same_text("fix the bug", " fix the\tbug ")
    assert not same_text("fix the bug", "fix the bug in parser.py")  # a screen wraps, never cuts
    assert not same_text("fix the bug in parser.py", "fix the bug")  # another prompt
    assert not same_text("fix the bug", "fix a bug")
    # a command's first line, then its other lines; not another word that starts alike
    assert same_text("make test && make lint", "make test", continues=True)
    assert not same_text("make tests", "make test", continues=True)
    assert not same_text("", "x") and not same_text("x", None)


def test_the_one_row_a_screen_shows_among_its_folders_rows() -> None:
    """What placement asks of each TUI's screen (core/codex_tui.place_by_screens)."""
    s = screen("interrupted")  # last sent: "please SLOW again"
    mine, other = row("a", last_prompt="please SLOW again"), row("b", last_prompt="hello two")
    assert shown_session(s, [mine, other]) == "a"
    assert shown_session(s, [other]) is None  # it shows no row of the folder
    twin = row("c", last_prompt="please SLOW again")
    assert shown_session(s, [mine, other, twin]) is None  # two rows alike: cannot tell
    assert shown_session(screen("empty"), [mine, other]) is None  # nothing sent yet (/new)
    assert shown_session(screen("approval"), [waiting("w", "touch approved.txt"), mine]) == "w"
