"""The coding agents pmux-widget watches, one package each, behind the same seam: where the
agent keeps its files, how our hooks are installed into it, what its signals look like.

``claude/``: Claude Code. ``codex/``: OpenAI's Codex CLI. The two never import each other
(an import-linter ``independence`` contract). This layer sits above ``system/`` and ``core/``,
below ``notify/`` and ``hooks/``.
"""
