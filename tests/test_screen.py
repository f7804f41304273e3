"""Reading Claude Code's screen (recorded captures of 2.1.197 and 2.1.332) for actions."""

from __future__ import annotations

from pathlib import Path

import pytest

from pmux_widget.agents.claude.screen import keys_for_choice, last_lines, parse_screen

SCREENS = Path(__file__).parent / "fixtures" / "screens"


def screen(name: str) -> str:
    return (SCREENS / name).read_text()


@pytest.mark.parametrize(
    ("name", "title", "body_has", "yes_keys", "no_keys"),
    [
        # "❯ 1. Yes" selected: Enter alone approves; arrows to "No" (a digit acts at once on
        # 2.1.197 but may only move the selection on 2.1.332: arrows behave the same on both)
        ("2.1.197/bash-dialog.txt", "Bash command", "touch sim-2.txt", [], ["Down"] * 2),
        ("2.1.197/bash-dialog-requires-approval.txt", "Bash command", "curl", [], ["Down"] * 2),
        ("2.1.197/edit-dialog.txt", "Edit file", "notes.txt", [], ["Down"] * 2),
        ("2.1.197/write-dialog.txt", "Create file", "sim-5.md", [], ["Down"] * 2),
        ("2.1.332-manual/bash-dialog.txt", "Bash command", "touch sim-1.txt", [], ["Down"] * 3),
        ("2.1.332-manual/read-dialog.txt", "Read file", "Read(/notes.txt)", [], ["Down"]),
        # a background session through `claude attach` (its name on the rule below the dialog)
        ("2.1.332-attach/bash-dialog.txt", "Bash command", "touch sim-1.txt", [], ["Down"] * 3),
        # auto mode's permission dialog: "❯ No" first, no numbers: arrows, never a bare Enter
        ("2.1.332-auto/permission-no-first.txt", "Bash command", "curl", ["Down"], []),
    ],
)
def test_permission_dialogs_are_answered_by_label(name, title, body_has, yes_keys, no_keys):
    parsed = parse_screen(screen(name))
    dialog = parsed.dialog
    assert dialog is not None and dialog.kind == "permission"
    assert dialog.title == title
    assert any(body_has in line for line in dialog.body)
    assert dialog.question.startswith("Do you want to")
    yes, no = dialog.choice("yes"), dialog.choice("no")
    assert yes is not None and yes.label == "Yes"  # never "Yes, and don't ask again"
    assert no is not None and no.label == "No"
    assert keys_for_choice(dialog, yes) == yes_keys
    assert keys_for_choice(dialog, no) == no_keys
    assert parsed.prompt_text is None  # the dialog replaces the prompt box


def test_the_default_choice_differs_by_version():
    old = parse_screen(screen("2.1.197/bash-dialog.txt")).dialog
    auto = parse_screen(screen("2.1.332-auto/permission-no-first.txt")).dialog
    assert old is not None and old.selected is not None and old.selected.label == "Yes"
    assert auto is not None and auto.selected is not None and auto.selected.label == "No"


def test_auto_modes_notice_is_not_a_permission_dialog():
    dialog = parse_screen(screen("2.1.332-auto/auto-notice.txt")).dialog
    assert dialog is not None and dialog.kind == "notice"
    assert dialog.choice("yes") is None and dialog.choice("no") is None
    assert "Auto mode can't check actions" in dialog.title


def test_fingerprints_tell_dialogs_apart():
    names = [
        "2.1.197/bash-dialog.txt",
        "2.1.197/bash-dialog-requires-approval.txt",
        "2.1.197/edit-dialog.txt",
        "2.1.197/write-dialog.txt",
    ]
    dialogs = [parse_screen(screen(n)).dialog for n in names]
    prints = {d.fingerprint for d in dialogs if d is not None}
    assert len(prints) == len(names)
    again = parse_screen(screen(names[0])).dialog
    assert again is not None and again.fingerprint in prints


@pytest.mark.parametrize(
    ("name", "busy", "prompt"),
    [
        ("2.1.197/idle.txt", False, ""),
        ("2.1.197/busy.txt", True, ""),
        ("2.1.197/after-esc.txt", False, ""),
        ("2.1.197/typed-not-sent.txt", False, "draft prompt not sent"),
        ("2.1.332-auto/idle.txt", False, ""),
        ("2.1.332-auto/busy.txt", True, ""),
        ("2.1.332-auto/after-esc.txt", False, ""),
        ("2.1.332-auto/after-deny.txt", False, ""),
        ("2.1.332-auto/typed-not-sent.txt", False, "draft prompt not sent"),
        # `claude attach` of a named background session: the box's upper rule ends "─ bgA ─"
        ("2.1.332-attach/idle.txt", False, ""),
        ("2.1.332-attach/busy.txt", True, ""),
    ],
)
def test_busy_footer_and_prompt_box(name, busy, prompt):
    parsed = parse_screen(screen(name))
    assert parsed.dialog is None
    assert parsed.busy is busy
    assert parsed.prompt_text == prompt


def test_a_shell_prompt_is_nothing_claude_shows():
    parsed = parse_screen("root@host:~/project# ls\nREADME.md  notes.txt\nroot@host:~/project# \n")
    assert parsed.dialog is None and parsed.busy is False and parsed.prompt_text is None


def test_a_digit_only_when_no_selection_is_visible():
    text = screen("2.1.197/bash-dialog.txt").replace("❯ 1. Yes", "  1. Yes")
    dialog = parse_screen(text).dialog
    assert dialog is not None and dialog.selected is None
    yes, no = dialog.choice("yes"), dialog.choice("no")
    assert yes is not None and no is not None
    assert keys_for_choice(dialog, yes) == ["1"]
    assert keys_for_choice(dialog, no) == ["3"]


def test_last_lines_skip_the_padding_above_the_prompt_box():
    padded = "● Hi! I am the scripted model.\n\n✻ Brewed for 0s\n" + "\n" * 16 + "─" * 20 + "\n❯ \n"
    assert last_lines(padded, 20) == (
        "● Hi! I am the scripted model.",
        "",
        "✻ Brewed for 0s",
        "",
        "─" * 20,
        "❯ ",
    )
    assert last_lines(padded, 2) == ("─" * 20, "❯ ")
    assert last_lines("\n\n", 5) == ()
