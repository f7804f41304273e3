"""The performance budgets of DESIGN.md ("Budgets"), measured by ``make bench``.

``python -m benchmarks`` runs every ``bench_*`` module and writes ``benchmarks/results.md``;
each module also runs alone (``python -m benchmarks.bench_hooks``). Every run works in temp
dirs (``PMUX_WIDGET_HOME`` / ``CLAUDE_CONFIG_DIR`` or the constructors' ``home=`` /
``claude_home=``): ``~/.claude`` and ``~/.pmux_widget`` are never touched.
"""
