"""The coding agents pmux-widget watches, one package each, behind the same seam: where the
agent keeps its files, how our hooks are installed into it, what its signals look like.

``codex/``: OpenAI's Codex CLI. (Claude Code's package is still ``pmux_widget/claude/``;
it moves to ``agents/claude/`` in a later step, issue 36.) This layer sits where
``claude/`` sits: above ``system/`` and ``core/``, below ``notify/`` and ``hooks/``.
"""
