"""Claude Code's and Codex's hooks: the script that reports each hook to our hubs, the spool
it falls back to, our entries in Claude's settings and Codex's hooks.json (with their trust),
and ``doctor``. This package's public names; the details are in ``docs/hooks.md``.
"""

from __future__ import annotations

from .agent_hooks import AGENT_HOOKS, AgentHooks
from .codex_install import (
    CodexHooksStatus,
    CodexInstallResult,
    codex_hooks_status,
    install_codex,
    uninstall_codex,
)
from .doctor import DoctorCheck, doctor
from .hubs import HubInfo, clean_stale_hub_files, live_hubs, remove_hub_file, write_hub_file
from .install import (
    HooksStatus,
    InstallResult,
    UninstallResult,
    default_settings_file,
    hooks_status,
    install,
    install_settings_file,
    uninstall,
)
from .script import (
    HOOK_TIMEOUT,
    MARKER,
    TOOL_EVENTS,
    hook_command,
    hook_entry,
    is_our_command,
    registered_events,
    render_script,
    sh_quote,
    write_script,
)
from .settings_json import BACKUP_SUFFIX, SettingsError
from .spool import (
    SPOOL_CAP,
    SpoolEntry,
    adopt_orphans,
    clean_spool_temp,
    read_spool,
    remove_spool_entries,
    write_spool_entry,
)

__all__ = [
    "AGENT_HOOKS",
    "BACKUP_SUFFIX",
    "HOOK_TIMEOUT",
    "MARKER",
    "SPOOL_CAP",
    "TOOL_EVENTS",
    "AgentHooks",
    "CodexHooksStatus",
    "CodexInstallResult",
    "DoctorCheck",
    "HooksStatus",
    "HubInfo",
    "InstallResult",
    "SettingsError",
    "SpoolEntry",
    "UninstallResult",
    "adopt_orphans",
    "clean_spool_temp",
    "clean_stale_hub_files",
    "codex_hooks_status",
    "default_settings_file",
    "doctor",
    "hook_command",
    "hook_entry",
    "hooks_status",
    "install",
    "install_codex",
    "install_settings_file",
    "is_our_command",
    "live_hubs",
    "read_spool",
    "registered_events",
    "remove_hub_file",
    "remove_spool_entries",
    "render_script",
    "sh_quote",
    "uninstall",
    "uninstall_codex",
    "write_hub_file",
    "write_script",
    "write_spool_entry",
]
