"""Installing our hooks into Claude's settings.json: merge, idempotence, uninstall, refusals.

Real files in temp dirs. The fixtures under ``fixtures/settings/valid`` are realistic user
files (other hooks, matchers, unicode, odd formatting); ``fixtures/settings/malformed`` must
all be refused untouched. A hypothesis test checks the round trip on generated documents.
"""

from __future__ import annotations

import http.server
import json
import os
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmux_widget import hooks
from pmux_widget.core.signals import HOOK_EVENTS
from pmux_widget.hooks.settings_json import dump, parse_settings
from pmux_widget.system.home import PmuxHome

FIXTURES = Path(__file__).parent / "fixtures" / "settings"
VALID = sorted((FIXTURES / "valid").glob("*.json"))
MALFORMED = sorted((FIXTURES / "malformed").glob("*.json"))

# Fixtures already written exactly as we write JSON.
CANONICAL = {
    "empty-object.json",
    "permissions-env-statusline.json",
    "other-hooks-same-events.json",
    "matchers-and-other-events.json",
    "tab-indent.json",
    "four-space-indent.json",
    "compact-no-final-newline.json",
    "hooks-empty-object.json",
    "empty-hook-containers.json",
    "bom-crlf.json",
}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the real ~/.claude or ~/.pmux_widget."""
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(tmp_path / "pmux home"))


@pytest.fixture
def home(tmp_path: Path) -> PmuxHome:
    return PmuxHome(tmp_path / "pmux home")


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    path = tmp_path / "claude" / "settings.json"
    path.parent.mkdir()
    return path


def load(path: Path) -> Any:
    """The document in a settings file (empty file = {}), as we and Claude read it."""
    text = path.read_bytes().decode("utf-8-sig")
    return json.loads(text) if text.strip() else {}


def ordered(value: Any) -> Any:
    """A comparable form that also sees key order (dict == dict ignores it)."""
    if isinstance(value, dict):
        return ("{}", [(key, ordered(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("[]", [ordered(item) for item in value])
    return (type(value).__name__, value)


def ours(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    """Our hook objects on ``event``."""
    return [
        hook
        for group in doc.get("hooks", {}).get(event, [])
        for hook in group.get("hooks", [])
        if isinstance(hook, dict) and hooks.is_our_command(hook.get("command"))
    ]


REGISTERED = hooks.registered_events()


def assert_installed(doc: dict[str, Any], home: PmuxHome, *, tool_hooks: bool = False) -> None:
    events = hooks.registered_events(tool_hooks)
    for event in events:
        assert ours(doc, event) == [hooks.hook_entry(home, event)], event
    for event in doc["hooks"]:
        if event not in events:
            assert ours(doc, event) == [], event


def dir_listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


# --------------------------------------------------------------------------- fixtures


@pytest.mark.parametrize("fixture", VALID, ids=lambda p: p.name)
def test_fixture_roundtrip(fixture: Path, settings_file: Path, home: PmuxHome) -> None:
    original = fixture.read_bytes()
    settings_file.write_bytes(original)
    before = load(settings_file)

    result = hooks.install(settings_file, home)
    assert result.changed and not result.created
    assert result.backup == settings_file.with_name("settings.json" + hooks.BACKUP_SUFFIX)
    assert result.backup.read_bytes() == original
    installed_bytes = settings_file.read_bytes()
    after = load(settings_file)
    assert_installed(after, home)
    # Every other top-level key kept, in order; "hooks" appended only if it was missing.
    expected_keys = list(before) + ([] if "hooks" in before else ["hooks"])
    assert list(after) == expected_keys
    for key in before:
        if key != "hooks":
            assert ordered(after[key]) == ordered(before[key])
    if fixture.name != "old-pmux-entries.json":
        # Other groups of each event kept in order; ours appended after them.
        for event, groups in before.get("hooks", {}).items():
            assert ordered(after["hooks"][event][: len(groups)]) == ordered(groups)

    again = hooks.install(settings_file, home)
    assert not again.changed and again.backup is None
    assert settings_file.read_bytes() == installed_bytes
    assert result.backup.read_bytes() == original

    removed = hooks.uninstall(settings_file, home)
    assert removed.changed and removed.removed >= len(REGISTERED)
    assert removed.backup is not None and removed.backup.read_bytes() == installed_bytes
    if fixture.name == "old-pmux-entries.json":
        return  # the old entries are gone too: checked in test_old_entries_replaced_in_place
    assert ordered(load(settings_file)) == ordered(before)
    assert settings_file.read_bytes() == original, "the user's own bytes, whatever their layout"
    uninstalled_bytes = settings_file.read_bytes()
    assert not hooks.uninstall(settings_file, home).changed
    assert settings_file.read_bytes() == uninstalled_bytes


@pytest.mark.parametrize("name", sorted(CANONICAL))
def test_our_writer_reproduces_the_canonical_fixtures(name: str) -> None:
    """What our rewrite keeps (when the record of the user's bytes is gone or they edited
    the file since): these layouts come back byte for byte from the document alone."""
    path = FIXTURES / "valid" / name
    doc, layout = parse_settings(path, path.read_bytes())
    assert dump(doc, layout) == path.read_bytes()


@pytest.mark.parametrize(
    ("name", "indent", "final_newline"),
    [
        ("tab-indent.json", "\t", True),
        ("four-space-indent.json", "    ", True),
        ("permissions-env-statusline.json", "  ", True),
        ("empty-object.json", "  ", True),
    ],
)
def test_indentation_kept(
    name: str, indent: str, final_newline: bool, settings_file: Path, home: PmuxHome
) -> None:
    settings_file.write_bytes((FIXTURES / "valid" / name).read_bytes())
    hooks.install(settings_file, home)
    text = settings_file.read_text()
    assert text.startswith("{\n" + indent + '"')
    assert text.endswith("}\n") == final_newline
    assert f'\n{indent}"hooks": {{\n{indent}{indent}"' in text


def test_one_line_file_stays_one_line(settings_file: Path, home: PmuxHome) -> None:
    settings_file.write_bytes((FIXTURES / "valid" / "compact-no-final-newline.json").read_bytes())
    hooks.install(settings_file, home)
    text = settings_file.read_text()
    assert "\n" not in text and text.startswith('{"model":"haiku","env":{')
    assert f'"command":{json.dumps(hooks.hook_command(home))},"timeout":5' in text
    settings_file.write_text('{"model": "opus"}')
    hooks.install(settings_file, home)
    assert settings_file.read_text().startswith('{"model": "opus", "hooks": {"SessionStart": [')


def test_bom_and_crlf_kept(settings_file: Path, home: PmuxHome) -> None:
    settings_file.write_bytes((FIXTURES / "valid" / "bom-crlf.json").read_bytes())
    hooks.install(settings_file, home)
    data = settings_file.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf{\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_unicode_and_numbers_kept(settings_file: Path, home: PmuxHome) -> None:
    for name in ("unicode.json", "nested-numbers.json"):
        settings_file.write_bytes((FIXTURES / "valid" / name).read_bytes())
        hooks.install(settings_file, home)
        text = settings_file.read_text(encoding="utf-8")
        if name == "unicode.json":
            assert "héllo wörld — ✓ 日本語 🎉" in text and '"ключ": "значение"' in text
            assert '"LONE_SURROGATE": "\\ud800x"' in text  # cannot be written raw in UTF-8
        else:
            for spelling in ("1.50", "1e3", "-2.5E-7", "0.0", "123456789012345678901234567890"):
                assert spelling in text
            assert '"timeout": 2.5' in text
        hooks.uninstall(settings_file, home)


def test_old_entries_replaced_in_place(settings_file: Path, home: PmuxHome) -> None:
    settings_file.write_bytes((FIXTURES / "valid" / "old-pmux-entries.json").read_bytes())
    result = hooks.install(settings_file, home)
    assert set(result.updated) == {"Stop", "PreToolUse", "Setup"}
    assert set(result.added) == set(REGISTERED) - {"Stop"}
    doc = load(settings_file)
    assert_installed(doc, home)
    entry = hooks.hook_entry(home, "Stop")
    stop = doc["hooks"]["Stop"]
    assert [g["hooks"][0]["command"] for g in stop] == [
        "say done",
        entry["command"],
        "afplay done.aiff",
    ]
    pre = doc["hooks"]["PreToolUse"]  # the per-tool one of ours goes, the user's stays
    assert pre == [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard-bash"}]}]
    assert "Setup" not in doc["hooks"]
    assert list(doc) == ["hooks", "model"]

    hooks.uninstall(settings_file, home)
    doc = load(settings_file)
    assert doc == {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "say done"}]},
                {"matcher": "", "hooks": [{"type": "command", "command": "afplay done.aiff"}]},
            ],
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard-bash"}]}
            ],
        },
        "model": "opus",
    }


def test_entry_for_moved_home_is_updated(tmp_path: Path, settings_file: Path) -> None:
    old, new = PmuxHome(tmp_path / "old home"), PmuxHome(tmp_path / "new home")
    hooks.install(settings_file, old)
    result = hooks.install(settings_file, new)
    assert result.changed and set(result.updated) == set(REGISTERED) and not result.added
    assert_installed(load(settings_file), new)
    assert hooks.uninstall(settings_file, new).removed == len(REGISTERED)
    assert load(settings_file) == {}


def test_missing_file_and_dir_created(tmp_path: Path, home: PmuxHome) -> None:
    path = tmp_path / "fresh" / "claude" / "settings.json"
    result = hooks.install(path, home, create_config_dir=True)
    assert result.changed and result.created and result.backup is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().endswith("}\n")
    assert_installed(load(path), home)
    assert hooks.uninstall(path, home).changed
    assert path.read_text() == "{}\n"


def test_empty_file_is_an_empty_object(settings_file: Path, home: PmuxHome) -> None:
    settings_file.write_bytes(b"  \n")
    result = hooks.install(settings_file, home)
    assert result.changed and result.backup is not None
    assert result.backup.read_bytes() == b"  \n"
    assert_installed(load(settings_file), home)


def test_mode_and_symlink_kept(tmp_path: Path, settings_file: Path, home: PmuxHome) -> None:
    target = tmp_path / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    target.write_text('{\n  "model": "opus"\n}\n')
    target.chmod(0o640)
    settings_file.symlink_to(target)
    hooks.install(settings_file, home)
    assert settings_file.is_symlink() and settings_file.resolve() == target.resolve()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert_installed(load(target), home)
    assert (target.parent / ("claude-settings.json" + hooks.BACKUP_SUFFIX)).is_file()


def test_script_and_token_written(settings_file: Path, home: PmuxHome) -> None:
    result = hooks.install(settings_file, home)
    assert result.script == home.hook_script
    assert stat.S_IMODE(home.hook_script.stat().st_mode) == 0o700
    assert home.hook_script.read_text() == hooks.render_script(home)
    assert stat.S_IMODE(home.token_file.stat().st_mode) == 0o600
    assert len(home.token()) == 64


# --------------------------------------------------------------------------- refusals

EXPECTED_PROBLEMS = {
    "trailing-comma.json": "invalid JSON at line 3, column",
    "comments.json": "invalid JSON at line 2, column 3",
    "truncated.json": "invalid JSON at line 5, column 1",
    "top-level-array.json": "top level must be a JSON object, not an array",
    "top-level-string.json": "top level must be a JSON object, not a string",
    "hooks-array.json": '"hooks" must be an object, not an array',
    "hooks-null.json": '"hooks" must be an object, not null',
    "event-object.json": '"hooks" → "Stop" must be an array of matcher groups, not an object',
    "group-string.json": '"hooks" → "PreToolUse"[0] must be an object, not a string',
    "group-hooks-object.json": '"Notification"[0] → "hooks" must be an array, not an object',
    "duplicate-keys.json": "duplicate key 'model'",
    "nan.json": "NaN",
    "invalid-utf8.json": "not valid UTF-8 at line 2 (byte 24)",
    "two-documents.json": "invalid JSON at line 1, column 19: Extra data",
}


def test_every_malformed_fixture_has_an_expectation() -> None:
    assert {p.name for p in MALFORMED} == set(EXPECTED_PROBLEMS)


@pytest.mark.parametrize("fixture", MALFORMED, ids=lambda p: p.name)
def test_malformed_refused_untouched(fixture: Path, settings_file: Path, home: PmuxHome) -> None:
    original = fixture.read_bytes()
    settings_file.write_bytes(original)
    settings_file.chmod(0o644)
    listing = dir_listing(settings_file.parent)
    mtime = settings_file.stat().st_mtime_ns
    for operation in (hooks.install, hooks.uninstall):
        with pytest.raises(hooks.SettingsError) as caught:
            operation(settings_file, home)
        message = str(caught.value)
        assert message == caught.value.message
        assert str(settings_file) in message
        assert EXPECTED_PROBLEMS[fixture.name] in message
        assert settings_file.read_bytes() == original
        assert settings_file.stat().st_mtime_ns == mtime
        assert dir_listing(settings_file.parent) == listing
    assert not home.root.exists()  # refused before anything was created
    status = hooks.hooks_status(settings_file, home)
    assert (
        not status.installed and status.error and EXPECTED_PROBLEMS[fixture.name] in status.message
    )


def test_directory_refused(settings_file: Path, home: PmuxHome) -> None:
    settings_file.mkdir()
    with pytest.raises(hooks.SettingsError, match="is a directory"):
        hooks.install(settings_file, home)


def test_concurrent_edit_detected(
    settings_file: Path, home: PmuxHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude (or the user) writes the file while we edit it: we write nothing and say so."""
    settings_file.write_text('{"model": "opus"}\n')
    real_fsync = os.fsync
    theirs = b'{"model": "sonnet"}\n'

    def meddling_fsync(fd: int) -> None:
        real_fsync(fd)
        if settings_file.read_bytes() != theirs:
            settings_file.write_bytes(theirs)

    monkeypatch.setattr(os, "fsync", meddling_fsync)
    with pytest.raises(hooks.SettingsError, match="changed while we were editing"):
        hooks.install(settings_file, home)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert settings_file.read_bytes() == theirs
    assert dir_listing(settings_file.parent) == ["settings.json"]


def test_item15_symlinked_settings_stay_a_symlink_through_install_and_uninstall(
    tmp_path: Path, settings_file: Path, home: PmuxHome
) -> None:
    """A dotfiles repo: settings.json is a relative link to a link to the real file. Both
    edits go through the links, which stay links; uninstall gives back the same bytes."""
    real = tmp_path / "dotfiles" / "claude" / "settings.json"
    real.parent.mkdir(parents=True)
    original = (VALID[0]).read_bytes()
    real.write_bytes(original)
    middle = tmp_path / "dotfiles" / "current.json"
    middle.symlink_to(Path("claude") / "settings.json")
    settings_file.symlink_to(Path("..") / "dotfiles" / "current.json")
    links = {settings_file: os.readlink(settings_file), middle: os.readlink(middle)}

    installed = hooks.install(settings_file, home)
    assert installed.changed
    assert {p: os.readlink(p) for p in links} == links  # still the same links
    assert_installed(load(settings_file), home)
    assert installed.backup == real.with_name("settings.json" + hooks.BACKUP_SUFFIX)
    assert dir_listing(settings_file.parent) == ["settings.json"]  # nothing beside the link
    assert hooks.hooks_status(settings_file, home).installed

    removed = hooks.uninstall(settings_file, home)
    assert removed.changed
    assert {p: os.readlink(p) for p in links} == links
    assert real.read_bytes() == original


def test_item15_concurrent_writer_never_loses_its_edit(
    settings_file: Path, home: PmuxHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude writes settings.json (a new file moved into place) after our check that it was
    unchanged and before our own move: its edit survives, and we say so."""
    settings_file.write_text('{"model": "opus"}\n')
    theirs = b'{"model": "sonnet"}\n'
    real_fsync = os.fsync
    fired = []

    def meddling_fsync(fd: int) -> None:
        real_fsync(fd)
        # the backup is written after the check, just before the move: Claude writes now
        if not fired and os.readlink(f"/proc/self/fd/{fd}").endswith(
            hooks.BACKUP_SUFFIX + f".{os.getpid()}.tmp"
        ):
            fired.append(fd)
            tmp = settings_file.with_name("claude-wrote.tmp")
            tmp.write_bytes(theirs)
            os.replace(tmp, settings_file)

    monkeypatch.setattr(os, "fsync", meddling_fsync)
    with pytest.raises(hooks.SettingsError, match="changed while we were editing"):
        hooks.install(settings_file, home)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert fired
    assert settings_file.read_bytes() == theirs
    # run again: installed on top of their edit
    hooks.install(settings_file, home)
    assert load(settings_file)["model"] == "sonnet"
    assert_installed(load(settings_file), home)


def test_item15_created_meanwhile_is_not_overwritten(
    settings_file: Path, home: PmuxHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No settings.json yet, and Claude creates one just before our move: theirs stays."""
    theirs = b'{"model": "sonnet"}\n'
    real_replace, real_link = os.replace, os.link

    def claude_first(real: Any) -> Any:
        def move(src: Any, dst: Any) -> None:
            if Path(dst) == settings_file and not settings_file.exists():
                settings_file.write_bytes(theirs)
            real(src, dst)

        return move

    monkeypatch.setattr(os, "replace", claude_first(real_replace))
    monkeypatch.setattr(os, "link", claude_first(real_link))
    with pytest.raises(hooks.SettingsError, match="while we were editing"):
        hooks.install(settings_file, home)
    assert settings_file.read_bytes() == theirs


# --------------------------------------------------------------------------- uninstall details


def test_uninstall_without_record_removes_emptied_containers(
    settings_file: Path, home: PmuxHome
) -> None:
    settings_file.write_text('{\n  "hooks": {},\n  "model": "opus"\n}\n')
    hooks.install(settings_file, home)
    (home.hooks_dir / "installed.json").unlink()
    hooks.uninstall(settings_file, home)
    assert load(settings_file) == {"model": "opus"}


MIXED_LAYOUT = (
    b'{\n\t"model":   "opus",\n\t"hooks": {"PreToolUse": [{"matcher": "Bash", '
    b'"hooks": [{"type": "command", "command": "echo mine"}]}]},\n'
    b'\t"env": {"A": "1.50e0"} }'
)


def test_uninstall_gives_back_the_users_bytes_through_an_upgrade(
    settings_file: Path, home: PmuxHome
) -> None:
    """An object on one line inside a tab-indented file, odd spacing, no final newline:
    install with the per-tool entries, upgrade (a plain install drops them), uninstall."""
    settings_file.write_bytes(MIXED_LAYOUT)
    hooks.install(settings_file, home, tool_hooks=True)
    assert settings_file.read_bytes() != MIXED_LAYOUT  # re-serialised while ours are in
    assert hooks.install(settings_file, home).changed
    assert (home.hooks_dir / "installed.json").stat().st_mode & 0o777 == 0o600
    hooks.uninstall(settings_file, home)
    assert settings_file.read_bytes() == MIXED_LAYOUT


@pytest.mark.parametrize("lost_record", [False, True])
def test_uninstall_after_the_users_own_edit_or_without_record_keeps_the_document(
    lost_record: bool, settings_file: Path, home: PmuxHome
) -> None:
    """Their bytes come back only when the document is theirs exactly; otherwise the
    document (their edit included), in our layout."""
    settings_file.write_bytes(MIXED_LAYOUT)
    hooks.install(settings_file, home)
    if lost_record:
        (home.hooks_dir / "installed.json").unlink()
    else:
        doc = load(settings_file)
        doc["model"] = "sonnet"
        settings_file.write_text(json.dumps(doc, indent="\t"))
    hooks.uninstall(settings_file, home)
    expected = json.loads(MIXED_LAYOUT)
    if not lost_record:
        expected["model"] = "sonnet"
    assert ordered(load(settings_file)) == ordered(expected)
    assert settings_file.read_bytes() != MIXED_LAYOUT


def test_uninstall_leaves_lookalikes(settings_file: Path, home: PmuxHome) -> None:
    lookalikes = [
        "~/bin/status-hook.sh",
        "/opt/purplemux/hooks/status-hook.sh",
        "status-hook.sh # other-tool",
        "echo '# pmux-widget'",
        "notify-send pmux-widget",
    ]
    doc = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": c} for c in lookalikes]}]}}
    settings_file.write_text(json.dumps(doc, indent=2) + "\n")
    original = settings_file.read_bytes()
    assert not hooks.uninstall(settings_file, home).changed
    hooks.install(settings_file, home)
    hooks.uninstall(settings_file, home)
    assert settings_file.read_bytes() == original


def test_uninstall_missing_file(tmp_path: Path, home: PmuxHome) -> None:
    result = hooks.uninstall(tmp_path / "nope" / "settings.json", home)
    assert not result.changed and "does not exist" in result.message
    assert not (tmp_path / "nope").exists()


def test_is_our_command(home: PmuxHome, tmp_path: Path) -> None:
    assert hooks.is_our_command(hooks.hook_command(home))
    assert hooks.is_our_command("'/elsewhere/hooks/status-hook.sh' # pmux-widget  ")
    # The bare script path (hand-written entries) counts only for the given home.
    plain = PmuxHome(tmp_path / "plain")
    assert hooks.is_our_command(str(plain.hook_script), plain)
    assert hooks.is_our_command(f"'{home.hook_script}'", home)
    assert not hooks.is_our_command(str(home.hook_script), home)  # unquoted space: 2 words
    assert not hooks.is_our_command(str(plain.hook_script))
    assert not hooks.is_our_command("/other/status-hook.sh", home)
    assert not hooks.is_our_command("say '# pmux-widget'", home)
    assert not hooks.is_our_command(None, home)
    assert not hooks.is_our_command(["status-hook.sh # pmux-widget"], home)


# --------------------------------------------------------------------------- hooks.json, status


def test_install_settings_file(home: PmuxHome) -> None:
    path = hooks.install_settings_file(home)
    assert path == home.hooks_json
    doc = json.loads(path.read_text())
    assert list(doc) == ["hooks"] and list(doc["hooks"]) == list(REGISTERED)
    for event in REGISTERED:
        assert doc["hooks"][event] == [{"hooks": [hooks.hook_entry(home, event)]}]
    assert home.hook_script.is_file() and home.token_file.is_file()
    assert hooks.hooks_status(path, home).ok
    mtime = path.stat().st_mtime_ns
    assert hooks.install_settings_file(home) == path
    assert path.stat().st_mtime_ns == mtime


def test_hooks_status(settings_file: Path, home: PmuxHome) -> None:
    status = hooks.hooks_status(settings_file, home)
    assert not status.installed and not status.ok
    assert status.events_missing == REGISTERED and "pmux-widget install" in status.message

    hooks.install(settings_file, home)
    status = hooks.hooks_status(settings_file, home)
    assert status.ok and status.installed and status.script_current
    assert status.events_installed == REGISTERED and "all 11 events" in status.message
    assert status.tool_hooks == () and "none per tool call" in status.message

    home.hook_script.chmod(0o600)
    status = hooks.hooks_status(settings_file, home)
    assert status.installed and not status.ok and "not executable" in status.message
    home.hook_script.unlink()
    status = hooks.hooks_status(settings_file, home)
    assert not status.ok and "script missing" in status.message
    hooks.write_script(home)

    doc = load(settings_file)
    doc["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 30
    del doc["hooks"]["SessionEnd"]
    settings_file.write_text(json.dumps(doc, indent=2))
    status = hooks.hooks_status(settings_file, home)
    assert status.events_missing == ("SessionEnd",) and status.events_outdated == ("Stop",)
    assert not status.ok and "SessionEnd" in status.message
    hooks.install(settings_file, home)
    assert hooks.hooks_status(settings_file, home).ok

    doc = load(settings_file)
    doc["disableAllHooks"] = True
    settings_file.write_text(json.dumps(doc, indent=2))
    status = hooks.hooks_status(settings_file, home)
    assert status.installed and not status.ok and "disableAllHooks" in status.message


# --------------------------------------------------------------------------- doctor


class _HealthHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"ok": true, "version": "test"}'
        self.send_response(200 if self.path == "/api/health" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def health_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HealthHandler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_doctor(tmp_path: Path, home: PmuxHome, health_server: int) -> None:
    claude = tmp_path / "claude"
    checks = {c.name: c for c in hooks.doctor(claude, home)}
    assert (
        not checks["claude config dir"].ok
        and "install Claude Code" in checks["claude config dir"].message
    )
    assert not checks["hooks"].ok and "pmux-widget install" in checks["hooks"].message
    assert not checks["token"].ok
    assert not checks["hub"].ok and "pmux-widget serve" in checks["hub"].message
    assert checks["curl"].ok  # the hook script tests need curl anyway

    hooks.install(claude / "settings.json", home, create_config_dir=True)
    hooks.write_spool_entry(home, b'{"session_id":"s"}\n', sent=1)
    (home.runtime_dir / "stale.json").write_text(json.dumps({"pid": _dead_pid(), "port": 9}))
    checks = {c.name: c for c in hooks.doctor(claude, home)}
    assert checks["claude config dir"].ok and checks["hooks"].ok and checks["hook script"].ok
    assert checks["token"].ok
    assert not checks["hub"].ok and "stale" in checks["hub"].message
    assert "1 spooled events" in checks["hub"].message

    (home.runtime_dir / "live.json").write_text(
        json.dumps({"pid": os.getpid(), "port": health_server})
    )
    checks = {c.name: c for c in hooks.doctor(claude, home)}
    assert checks["hub"].ok and f"127.0.0.1:{health_server}" in checks["hub"].message
    assert checks["tmux"].optional
    assert all(c.message for c in checks.values())


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


# --------------------------------------------------------------------------- generated documents

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=10,
)
_commands = st.sampled_from(
    [
        "say done",
        "~/bin/status-hook.sh",
        "status-hook.sh # other-tool",
        "python3 -m ccmonitor.hook Stop",
        "echo '# pmux-widget'",
    ]
) | st.text(max_size=20)
_hook_objects = st.fixed_dictionaries(
    {"type": st.sampled_from(["command", "http", "prompt"]), "command": _commands},
    optional={
        "timeout": st.integers(min_value=1, max_value=600) | st.floats(min_value=0.1, max_value=60),
        "async": st.booleans(),
        "statusMessage": st.text(max_size=8),
    },
)
_groups = st.fixed_dictionaries(
    {},
    optional={
        "matcher": st.sampled_from(["", "*", "Bash", "Edit|Write", "mcp__.*"])
        | st.text(max_size=6),
        "hooks": st.lists(_hook_objects | _values, max_size=3),
        "extra": _values,
    },
)
_events = st.sampled_from([*HOOK_EVENTS, "Setup", "ConfigChange", "PermissionDenied"]) | st.text(
    min_size=1, max_size=10
)


@st.composite
def settings_documents(draw: st.DrawFn) -> dict[str, Any]:
    doc = draw(
        st.dictionaries(st.text(max_size=10).filter(lambda k: k != "hooks"), _values, max_size=5)
    )
    if draw(st.booleans()):
        block = draw(st.dictionaries(_events, st.lists(_groups, max_size=3), max_size=6))
        items = list(doc.items())
        items.insert(draw(st.integers(min_value=0, max_value=len(items))), ("hooks", block))
        doc = dict(items)
    return doc


@settings(
    max_examples=int(os.environ.get("PMUX_SETTINGS_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    doc=settings_documents(),
    indent=st.sampled_from([2, 4, "\t", None]),
    ensure_ascii=st.booleans(),
    final_newline=st.booleans(),
)
def test_generated_documents_roundtrip(
    doc: dict[str, Any], indent: int | str | None, ensure_ascii: bool, final_newline: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "settings.json"
        text = json.dumps(doc, indent=indent, ensure_ascii=ensure_ascii)
        path.write_text(text + ("\n" if final_newline else ""), encoding="utf-8")
        home = PmuxHome(Path(tmp) / "home")

        hooks.install(path, home)
        installed = path.read_bytes()
        after = load(path)
        assert_installed(after, home)
        assert list(after)[: len(doc)] == list(doc)
        for event, groups in doc.get("hooks", {}).items():
            assert ordered(after["hooks"][event][: len(groups)]) == ordered(groups)

        assert not hooks.install(path, home).changed
        assert path.read_bytes() == installed

        hooks.uninstall(path, home)
        assert ordered(load(path)) == ordered(doc)
        if indent is not None and not ensure_ascii:
            # Written like we write JSON: back byte for byte.
            assert path.read_text(encoding="utf-8") == text + ("\n" if final_newline else "")
        assert sorted(os.listdir(tmp)) == ["home", "settings.json", "settings.json.bak-pmux-widget"]


# ---------------------------------------------------------------- the per-tool hooks (issue 28)


def test_the_per_tool_events_are_not_registered_unless_asked(
    settings_file: Path, home: PmuxHome
) -> None:
    """Claude Code pays for every hook it runs, async or not (P18): by default no entry of
    ours fires per tool call; ``--tool-hooks`` adds them, async; a plain install takes them
    out again, and uninstall gives the user's file back either way."""
    assert set(REGISTERED) == set(HOOK_EVENTS) - set(hooks.TOOL_EVENTS)
    assert hooks.TOOL_EVENTS == ("PreToolUse", "PostToolUse", "PostToolUseFailure")
    user = {
        "model": "opus",
        "hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "fmt"}]}]},
    }
    settings_file.write_text(json.dumps(user, indent=2) + "\n")
    hooks.install(settings_file, home)
    doc = load(settings_file)
    assert all(ours(doc, event) == [] for event in hooks.TOOL_EVENTS)
    assert doc["hooks"]["PostToolUse"] == user["hooks"]["PostToolUse"]

    result = hooks.install(settings_file, home, tool_hooks=True)
    assert set(result.added) == set(hooks.TOOL_EVENTS)
    doc = load(settings_file)
    assert_installed(doc, home, tool_hooks=True)
    assert all(ours(doc, e)[0]["async"] is True for e in hooks.TOOL_EVENTS)
    assert all("async" not in ours(doc, e)[0] for e in REGISTERED)
    status = hooks.hooks_status(settings_file, home)
    assert status.ok and status.tool_hooks == hooks.TOOL_EVENTS
    assert "16 ms per tool call" in status.message and "--tool-hooks" in status.message
    assert not hooks.install(settings_file, home, tool_hooks=True).changed

    result = hooks.install(settings_file, home)
    assert set(result.updated) == set(hooks.TOOL_EVENTS) and not result.added
    assert "removed from PreToolUse, PostToolUse, PostToolUseFailure" in result.message
    assert "updated for" not in result.message
    assert_installed(load(settings_file), home)
    assert hooks.hooks_status(settings_file, home).tool_hooks == ()
    hooks.uninstall(settings_file, home)
    assert load(settings_file) == user

    path = hooks.install_settings_file(home, tool_hooks=True)
    assert list(json.loads(path.read_text())["hooks"]) == list(HOOK_EVENTS)
    path = hooks.install_settings_file(home)
    assert list(json.loads(path.read_text())["hooks"]) == list(REGISTERED)


def test_the_cli_flag(tmp_path: Path) -> None:
    from pmux_widget.cli import main

    claude, pmux = tmp_path / "claude", tmp_path / "pmux"
    claude.mkdir()
    args = ["--claude-home", str(claude), "--home", str(pmux)]
    assert main([*args, "install", "--tool-hooks"]) == 0
    assert set(hooks.TOOL_EVENTS) <= set(load(claude / "settings.json")["hooks"])
    assert main([*args, "install"]) == 0
    assert not set(hooks.TOOL_EVENTS) & set(load(claude / "settings.json")["hooks"])


# ----------------------------------------------------- synchronous entries (before issue 28)


def test_synchronous_entries_of_an_older_version_are_removed(
    settings_file: Path, home: PmuxHome
) -> None:
    """What install wrote before issue 28: a synchronous entry on every event. Doctor says
    the agent waits on the per-tool ones; install removes exactly those (the user's own
    stay where they stand) and keeps the rest; uninstall gives the user's file back."""
    sync = {"type": "command", "command": hooks.hook_command(home), "timeout": 5}
    mine = {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard-bash"}]}
    old = {
        "model": "opus",
        "hooks": {
            event: ([mine] if event == "PreToolUse" else []) + [{"hooks": [dict(sync)]}]
            for event in HOOK_EVENTS
        },
    }
    settings_file.write_text(json.dumps(old, indent=4) + "\n")
    hooks.install_settings_file(home)  # the script and the token, as the old install left them
    status = hooks.hooks_status(settings_file, home)
    assert status.installed and not status.ok
    assert set(status.events_outdated) == set(hooks.TOOL_EVENTS)
    assert "run `pmux-widget install` to remove them" in status.message
    assert all(event in status.message for event in hooks.TOOL_EVENTS)
    check = {c.name: c for c in hooks.doctor(settings_file.parent, home)}["hooks"]
    assert not check.ok and "synchronous" in check.message

    result = hooks.install(settings_file, home)
    assert set(result.updated) == set(hooks.TOOL_EVENTS) and not result.added
    doc = load(settings_file)
    assert_installed(doc, home)
    assert doc["hooks"]["PreToolUse"] == [mine]  # the user's group stays
    assert "PostToolUse" not in doc["hooks"]
    assert doc["hooks"]["Stop"] == [{"hooks": [sync]}]  # synchronous ones untouched
    assert hooks.hooks_status(settings_file, home).ok
    assert not hooks.install(settings_file, home).changed
    assert "    " in settings_file.read_text()  # its indentation kept

    hooks.uninstall(settings_file, home)
    assert load(settings_file) == {"model": "opus", "hooks": {"PreToolUse": [mine]}}
