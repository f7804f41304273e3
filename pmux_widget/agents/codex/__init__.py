"""OpenAI's Codex CLI: its home (``$CODEX_HOME``, default ``~/.codex``), its hooks file and
their trust in ``config.toml``, and its own ``app-server`` (asked what it thinks of our
hooks). Recorded behaviour: ``docs/codex-behaviour.md``.
"""

from __future__ import annotations

from .paths import ENV_VAR, CodexHome
from .trust import EVENT_LABELS, hook_key, trust_hash

__all__ = ["ENV_VAR", "EVENT_LABELS", "CodexHome", "hook_key", "trust_hash"]
