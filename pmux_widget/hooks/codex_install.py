"""Our hooks in Codex: entries in ``$CODEX_HOME/hooks.json`` and their trust in
``config.toml``, recorded as Codex records it when a user trusts a hook, so Codex runs them
without asking (issue 36).

What is Codex's (which events, the trust key and hash, the TOML tables) is
``agents/codex/``; this module reads and writes the two files, with the same rules as
Claude's settings (``docs/hooks.md``): the user's entries kept, a backup beside each file
changed, invalid JSON or TOML refused with both files untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pmux_widget.agents.codex import CodexHome, trust_hash
from pmux_widget.agents.codex.config_toml import (
    CodexConfigError,
    edit_trust,
    parse_config,
    trusted_states,
)
from pmux_widget.agents.codex.hooks_config import (
    OUR_HOOKS,
    entry,
    merge_ours,
    moved_keys,
    ours,
    remove_ours,
    trust_entries,
)
from pmux_widget.system.home import PmuxHome

from .script import hook_command, is_our_command, write_script
from .settings_json import SettingsError, dump, read_settings, write_settings

__all__ = [
    "AGENT",
    "CodexHooksStatus",
    "CodexInstallResult",
    "codex_hooks_status",
    "install_codex",
    "uninstall_codex",
]

#: The argument our Codex entries pass the hook script: the hub learns the agent from it.
AGENT = "codex"


@dataclass(frozen=True)
class CodexInstallResult:
    """What :func:`install_codex` or :func:`uninstall_codex` did; ``message`` is for humans."""

    hooks_file: Path
    config_file: Path
    changed: bool
    events: tuple[str, ...] = ()
    trusted: int = 0
    removed: int = 0
    message: str = ""


def _is_ours(home: PmuxHome) -> Callable[[object], bool]:
    return lambda command: is_our_command(command, home)


def _read_config(codex: CodexHome) -> tuple[bytes | None, str]:
    path = codex.config_file
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        raise SettingsError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsError(path, "not UTF-8: Codex reads TOML as UTF-8") from None
    try:
        parse_config(path, text)
    except CodexConfigError as exc:
        raise SettingsError(path, exc.problem) from None
    return data, text


def _our_hashes(command: str) -> set[str]:
    """Every hash an entry of ours may be trusted under (any event we register)."""
    return {trust_hash(s.event, entry(command, s.event), s.matcher) for s in OUR_HOOKS}


def _edit_config(
    path: Path,
    text: str,
    drop: set[str],
    rename: dict[str, str],
    add: dict[str, str] | None = None,
) -> str:
    try:
        return edit_trust(path, text, drop=drop, rename=rename, add=add)
    except CodexConfigError as exc:
        raise SettingsError(path, exc.problem) from None


def install_codex(
    codex_home: CodexHome, home: PmuxHome, *, create: bool = False
) -> CodexInstallResult:
    """Write our entries into ``hooks.json`` (merged) and their trust into ``config.toml``.

    Raises :class:`SettingsError` (both files untouched) for invalid JSON or TOML, a trust
    we cannot write without changing more than our tables, or a missing home unless
    ``create`` (a missing one usually means Codex is not installed, or ``CODEX_HOME`` points
    elsewhere).
    """
    if not codex_home.root.is_dir():
        if not create:
            raise SettingsError(
                codex_home.root,
                "Codex's home does not exist: install Codex and run it once (or set "
                "CODEX_HOME to the directory your Codex uses); to create it, pass --codex",
            )
        codex_home.root.mkdir(mode=0o700, parents=True)
        codex_home = CodexHome.resolve(codex_home.root)
    hooks_file = codex_home.hooks_file
    original, doc, layout = read_settings(hooks_file)
    config_bytes, config_text = _read_config(codex_home)
    is_ours = _is_ours(home)
    command = hook_command(home, AGENT)
    before = dump(doc, layout)
    had = trust_entries(doc, str(hooks_file), is_ours)
    added, _changed, moves = merge_ours(doc, command, is_ours)
    after_bytes = dump(doc, layout)
    wanted = trust_entries(doc, str(hooks_file), is_ours)
    states = trusted_states(parse_config(codex_home.config_file, config_text))
    prefix = f"{hooks_file}:"
    ours_hashes = _our_hashes(command)
    stale = {
        k
        for k, v in states.items()
        if k.startswith(prefix) and v.get("trusted_hash") in ours_hashes and k not in wanted
    }
    drop = (set(had) | stale) - set(wanted)
    rename = {k: v for k, v in moved_keys(moves, str(hooks_file)).items() if k in states}
    add = {k: h for k, h in wanted.items() if states.get(k, {}).get("trusted_hash") != h}
    new_config = config_text
    if drop or rename or add:
        new_config = _edit_config(
            codex_home.config_file, config_text, drop=drop, rename=rename, add=add
        )
    home.ensure()
    home.token()
    write_script(home)
    hooks_changed = original is None or after_bytes != before
    if hooks_changed:
        write_settings(hooks_file, original, after_bytes)
    config_changed = new_config != config_text
    if config_changed:
        write_settings(codex_home.config_file, config_bytes, new_config.encode("utf-8"))
    changed = hooks_changed or config_changed
    if not changed:
        message = f"{hooks_file}: Codex hooks already installed and trusted, nothing to change"
    else:
        message = (
            f"{hooks_file}: hooks for {len(OUR_HOOKS)} Codex events"
            + (f" (added: {', '.join(added)})" if added else " (rewritten)")
            + f"; {codex_home.config_file}: trusted, as Codex records it when you trust a "
            f'hook ([hooks.state."<key>"] trusted_hash for {len(wanted)} entries), so Codex '
            "runs them without asking"
        )
    return CodexInstallResult(
        hooks_file, codex_home.config_file, changed, tuple(added), len(wanted), 0, message
    )


def uninstall_codex(codex_home: CodexHome, home: PmuxHome) -> CodexInstallResult:
    """Remove exactly our entries from ``hooks.json`` and their trust from ``config.toml``
    (the trust of the user's hooks that moved up moves with them). Idempotent; raises
    :class:`SettingsError` (both untouched) for invalid files."""
    hooks_file = codex_home.hooks_file
    original, doc, layout = read_settings(hooks_file)
    config_bytes, config_text = _read_config(codex_home)
    is_ours = _is_ours(home)
    had = trust_entries(doc, str(hooks_file), is_ours)
    removed, moves = remove_ours(doc, is_ours)
    states = trusted_states(parse_config(codex_home.config_file, config_text))
    ours_hashes = _our_hashes(hook_command(home, AGENT))
    prefix = f"{hooks_file}:"
    stale = {
        k
        for k, v in states.items()
        if k.startswith(prefix) and v.get("trusted_hash") in ours_hashes
    }
    drop = {k for k in set(had) | stale if k in states}
    rename = {k: v for k, v in moved_keys(moves, str(hooks_file)).items() if k in states}
    new_config = config_text
    if drop or rename:
        new_config = _edit_config(codex_home.config_file, config_text, drop=drop, rename=rename)
    if not removed and new_config == config_text:
        return CodexInstallResult(
            hooks_file, codex_home.config_file, False, message=f"{hooks_file}: no pmux-widget hooks"
        )
    if removed:
        write_settings(hooks_file, original, dump(doc, layout))
    if new_config != config_text:
        write_settings(codex_home.config_file, config_bytes, new_config.encode("utf-8"))
    return CodexInstallResult(
        hooks_file,
        codex_home.config_file,
        True,
        removed=removed,
        message=f"{hooks_file}: removed {removed} Codex hooks and their trust "
        f"({len(drop)} entries) from {codex_home.config_file}",
    )


@dataclass(frozen=True)
class CodexHooksStatus:
    """Whether our Codex hooks are installed and trusted (for ``doctor``)."""

    codex_home: Path
    home_exists: bool
    missing: tuple[str, ...] = ()
    untrusted: tuple[str, ...] = ()
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.home_exists and not self.error and not self.missing and not self.untrusted

    @property
    def message(self) -> str:
        if not self.home_exists:
            return f"{self.codex_home} not found: Codex is not installed here (or set CODEX_HOME)"
        if self.error:
            return self.error
        if self.missing:
            return (
                f"Codex hooks missing for {', '.join(self.missing)} in "
                f"{self.codex_home / 'hooks.json'}: run `pmux-widget install`"
            )
        if self.untrusted:
            return (
                f"Codex hooks not trusted ({', '.join(self.untrusted)}): Codex skips them; "
                "run `pmux-widget install`"
            )
        return f"Codex hooks installed and trusted in {self.codex_home}"


def codex_hooks_status(codex_home: CodexHome, home: PmuxHome) -> CodexHooksStatus:
    """Inspect Codex's two files (never raises)."""
    base = CodexHooksStatus(codex_home.root, codex_home.root.is_dir())
    if not base.home_exists:
        return base
    try:
        _, doc, _ = read_settings(codex_home.hooks_file)
        _, text = _read_config(codex_home)
    except SettingsError as exc:
        return CodexHooksStatus(codex_home.root, True, error=exc.message)
    is_ours = _is_ours(home)
    command = hook_command(home, AGENT)
    present = {event for event, _, _ in ours(doc, is_ours)}
    right = {
        event
        for event, g, h in ours(doc, is_ours)
        if doc["hooks"][event][g]["hooks"][h] == entry(command, event)
    }
    missing = tuple(s.event for s in OUR_HOOKS if s.event not in present or s.event not in right)
    states = trusted_states(parse_config(codex_home.config_file, text))
    wanted = trust_entries(doc, str(codex_home.hooks_file), is_ours)
    untrusted = tuple(
        key.rsplit(":", 3)[1]
        for key, digest in wanted.items()
        if states.get(key, {}).get("trusted_hash") != digest
    )
    return CodexHooksStatus(codex_home.root, True, missing, untrusted)
