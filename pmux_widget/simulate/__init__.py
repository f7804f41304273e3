"""Drive the real Claude Code CLI without the internet: a scripted model and a tmux harness.

* :mod:`.model`: :class:`~pmux_widget.simulate.model.ScriptedModel`, an Anthropic Messages API
  server on 127.0.0.1 answering from data files (``scenarios/*.json``).
* :mod:`.claude`: install the pinned CLI (:func:`~pmux_widget.simulate.claude.ensure_cli`), a
  sealed config/home (:class:`~pmux_widget.simulate.claude.ClaudeEnv`) and a tmux driver
  (:class:`~pmux_widget.simulate.claude.TmuxClaude`).
* :mod:`.record`: records real runs per user action into golden fixtures
  (``tests/fixtures/real``) and ``docs/claude-code-behaviour.md``.

Used by the ``real_claude`` tests and by ``make demo``.
"""
