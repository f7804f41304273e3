"""``pmux-widget install`` / ``uninstall`` / ``doctor`` for Codex (issue 36): our entries in
``$CODEX_HOME/hooks.json`` and their trust in ``config.toml``, on real files. That Codex
itself runs them is ``tests/real_codex/test_install.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmux_widget import hooks
from pmux_widget.agents.codex import CodexHome, hook_key, trust_hash
from pmux_widget.agents.codex.config_toml import parse_config, trusted_states
from pmux_widget.agents.codex.hooks_config import OUR_HOOKS
from pmux_widget.cli.commands import main
from pmux_widget.system.home import PmuxHome

USER_CONFIG = """# my Codex
model = "gpt-5"   # the best

[projects."/work/x"]
trust_level = "trusted"

[hooks.state."/elsewhere/hooks.json:stop:0:0"]
trusted_hash = "sha256:0000"
"""


@pytest.fixture
def codex(tmp_path: Path) -> CodexHome:
    root = tmp_path / "codex"
    root.mkdir()
    return CodexHome.resolve(root)


@pytest.fixture
def home(tmp_path: Path) -> PmuxHome:
    return PmuxHome(tmp_path / "pmux")


def _doc(codex: CodexHome) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(codex.hooks_file.read_text())
    return data


def _states(codex: CodexHome) -> dict[str, dict[str, Any]]:
    return trusted_states(parse_config(codex.config_file, codex.config_file.read_text()))


def _assert_ours_trusted(codex: CodexHome) -> None:
    doc = _doc(codex)
    states = _states(codex)
    for spec in OUR_HOOKS:
        groups = doc["hooks"][spec.event]
        [(g, group)] = [
            (g, group)
            for g, group in enumerate(groups)
            if any(hooks.is_our_command(h.get("command")) for h in group["hooks"])
        ]
        assert group.get("matcher") == spec.matcher
        [hook] = group["hooks"]
        assert hook["command"].endswith(" codex; cat >/dev/null # pmux-widget")
        key = hook_key(str(codex.hooks_file), spec.event, g, 0)
        assert states[key] == {"trusted_hash": trust_hash(spec.event, hook, spec.matcher)}


def test_install_into_an_empty_home_and_back(codex: CodexHome, home: PmuxHome) -> None:
    result = hooks.install_codex(codex, home)
    assert result.changed and result.trusted == len(OUR_HOOKS)
    assert "trusted, as Codex records it" in result.message
    _assert_ours_trusted(codex)
    assert home.hook_script.is_file()
    again = hooks.install_codex(codex, home)
    assert not again.changed and "nothing to change" in again.message
    gone = hooks.uninstall_codex(codex, home)
    assert gone.removed == len(OUR_HOOKS)
    assert _doc(codex) == {"hooks": {}}
    assert _states(codex) == {}
    assert not hooks.uninstall_codex(codex, home).changed


def test_the_users_entries_and_bytes_are_kept(codex: CodexHome, home: PmuxHome) -> None:
    user_hooks = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
        }
    }
    codex.hooks_file.write_text(json.dumps(user_hooks, indent=2) + "\n")
    codex.config_file.write_text(USER_CONFIG)
    hooks.install_codex(codex, home)
    _assert_ours_trusted(codex)
    doc = _doc(codex)
    assert doc["hooks"]["Stop"][0] == user_hooks["hooks"]["Stop"][0]  # first: its key holds
    assert doc["hooks"]["PreToolUse"][0] == user_hooks["hooks"]["PreToolUse"][0]
    text = codex.config_file.read_text()
    assert text.startswith(USER_CONFIG)  # ours are appended; the user's bytes stay
    assert (codex.root / "config.toml.bak-pmux-widget").read_text() == USER_CONFIG
    hooks.uninstall_codex(codex, home)
    assert codex.config_file.read_text() == USER_CONFIG
    assert _doc(codex) == user_hooks


def test_a_users_hook_after_ours_keeps_its_trust(codex: CodexHome, home: PmuxHome) -> None:
    hooks.install_codex(codex, home)
    doc = _doc(codex)
    mine = {"type": "command", "command": "my-stop-hook"}
    doc["hooks"]["Stop"].append({"hooks": [mine]})
    codex.hooks_file.write_text(json.dumps(doc))
    old_key = hook_key(str(codex.hooks_file), "Stop", 1, 0)
    digest = trust_hash("Stop", mine)
    with codex.config_file.open("a") as f:  # the user trusted it (Codex writes this)
        f.write(f'\n[hooks.state."{old_key}"]\ntrusted_hash = "{digest}"\n')
    hooks.uninstall_codex(codex, home)
    assert _doc(codex)["hooks"]["Stop"] == [{"hooks": [mine]}]
    new_key = hook_key(str(codex.hooks_file), "Stop", 0, 0)
    assert _states(codex) == {new_key: {"trusted_hash": digest}}


def test_a_changed_entry_of_ours_is_rewritten_and_retrusted(
    codex: CodexHome, home: PmuxHome
) -> None:
    hooks.install_codex(codex, home)
    doc = _doc(codex)
    doc["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 60  # an older version's
    codex.hooks_file.write_text(json.dumps(doc))
    assert "Stop" in hooks.codex_hooks_status(codex, home).missing
    assert hooks.install_codex(codex, home).changed
    _assert_ours_trusted(codex)
    assert len(_states(codex)) == len(OUR_HOOKS)  # the stale trust went
    assert hooks.codex_hooks_status(codex, home).ok


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("hooks.json", '{"hooks": {"Stop": [}'),
        ("hooks.json", '{"hooks": []}'),
        ("config.toml", 'model = "x"\nmodel = "y"\n'),
        ("config.toml", "[hooks\n"),
    ],
)
def test_invalid_files_are_refused_untouched(
    codex: CodexHome, home: PmuxHome, name: str, text: str
) -> None:
    other = "config.toml" if name == "hooks.json" else "hooks.json"
    (codex.root / name).write_text(text)
    before = {p.name: p.read_bytes() for p in codex.root.iterdir()}
    with pytest.raises(hooks.SettingsError) as caught:
        hooks.install_codex(codex, home)
    assert name in str(caught.value)
    with pytest.raises(hooks.SettingsError):
        hooks.uninstall_codex(codex, home)
    assert {p.name: p.read_bytes() for p in codex.root.iterdir()} == before
    assert not (codex.root / other).exists()
    assert not hooks.codex_hooks_status(codex, home).ok


def test_trust_in_a_form_we_do_not_edit_is_refused(codex: CodexHome, home: PmuxHome) -> None:
    text = '[hooks]\nstate = { "/x:stop:0:0" = { trusted_hash = "sha256:1" } }\n'
    codex.config_file.write_text(text)
    with pytest.raises(hooks.SettingsError) as caught:
        hooks.install_codex(codex, home)
    assert "add these tables yourself" in str(caught.value)
    assert codex.config_file.read_text() == text
    assert not codex.hooks_file.exists()


def test_the_cli_covers_every_agent_found(
    tmp_path: Path, home: PmuxHome, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = tmp_path / "claude"
    claude.mkdir()
    codex_root = tmp_path / "no-codex"
    base = ["--home", str(home.root), "--claude-home", str(claude), "--codex-home", str(codex_root)]
    assert main([*base, "install"]) == 0
    out = capsys.readouterr().out
    assert "Codex: " in out and "not found, skipped" in out
    assert not codex_root.exists()
    assert main([*base, "install", "--codex"]) == 0
    out = capsys.readouterr().out
    assert "trusted, as Codex records it" in out
    _assert_ours_trusted(CodexHome.resolve(codex_root))
    assert main([*base, "doctor"]) in (0, 1)
    out = capsys.readouterr().out
    assert "OK   codex hooks: Codex hooks installed and trusted" in out
    assert main([*base, "uninstall"]) == 0
    assert "removed 7 Codex hooks" in capsys.readouterr().out
    assert main([*base, "doctor"]) in (0, 1)
    assert "FIX  codex hooks: Codex hooks missing" in capsys.readouterr().out
    (codex_root / "hooks.json").write_text("{")
    assert main([*base, "install"]) == 2
    assert "invalid JSON" in capsys.readouterr().err


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_hook = st.fixed_dictionaries({"type": st.just("command"), "command": _text.filter(bool)})
_groups = st.lists(
    st.fixed_dictionaries({"hooks": st.lists(_hook, min_size=1, max_size=2)}), max_size=3
)
_events = st.dictionaries(st.sampled_from([s.event for s in OUR_HOOKS]), _groups, max_size=4)
_comment = st.text(st.sampled_from("abc #=[]\"'é "), max_size=20).map(lambda t: f"# {t}\n")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(user=_events, comments=st.lists(_comment, max_size=3), trust_users=st.booleans())
def test_install_then_uninstall_gives_the_users_files_back(
    tmp_path_factory: pytest.TempPathFactory,
    user: dict[str, Any],
    comments: list[str],
    trust_users: bool,
) -> None:
    root = tmp_path_factory.mktemp("codex")
    codex = CodexHome.resolve(root)
    home = PmuxHome(root / "pmux")
    codex.hooks_file.write_text(json.dumps({"hooks": user}, indent=2))
    config = "".join(comments) + 'model = "m"\n'
    if trust_users:
        for event, groups in user.items():
            for g, group in enumerate(groups):
                for h, hook in enumerate(group["hooks"]):
                    key = json.dumps(hook_key(str(codex.hooks_file), event, g, h))
                    config += f'\n[hooks.state.{key}]\ntrusted_hash = "{trust_hash(event, hook)}"\n'
    codex.config_file.write_text(config)
    hooks.install_codex(codex, home)
    _assert_ours_trusted(codex)
    hooks.uninstall_codex(codex, home)
    assert codex.config_file.read_text() == config
    # An event whose list was empty before goes with ours (the same to Codex: no hooks).
    assert _doc(codex) == {"hooks": {e: groups for e, groups in user.items() if groups}}
