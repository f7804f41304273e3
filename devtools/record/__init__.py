"""Record what the real Claude Code CLI does, per user action, into golden fixtures and a doc.

Why: every rule of the monitor (which hook means what, when the PID file changes, which
transcript records mark an interrupt) must come from observation, not from reading minified
code. This module drives the real CLI (:mod:`pmux_widget.demo.claude_cli`) against the scripted
model (:mod:`pmux_widget.demo.scripted_model`) through every user path, and records with receive
times:

* every hook payload (a recorder hook on all events),
* every PID-file content change (``<config>/sessions/<pid>.json``, polled every 20 ms),
* every transcript record as it appears (main and sub-agent files),
* every request the model server answered, and every keystroke the driver sent.

Refresh the fixtures and the generated doc (takes a few minutes per version; runs the real
CLIs)::

    .venv/bin/python -m devtools.record --version all --out tests/fixtures/real \\
        --doc docs/claude-code-behaviour.md [scenario ...]

Each pinned version (``--version``, default the newest) records the scenarios that exist on it
(:data:`ONLY_ON`). Output per version and scenario (``<out>/<version>/<scenario>/``), with temp
paths replaced by placeholders
(``/home/dev``, ``/home/dev/.claude``, ``/home/dev/project``) and the CLI pid by ``4242``:

* ``hooks.jsonl``       the hook payloads exactly as Claude wrote them (one per line)
* ``pid-files.jsonl``   each distinct PID-file content (``null`` = file removed)
* ``transcripts/``      the transcript files as they were at the end (``<sid>.jsonl``,
  ``<sid>/subagents/agent-<id>.jsonl`` …)
* ``timeline.json``     everything above merged, with ms since the scenario started
* ``requests.jsonl``    the model requests (kind, scenario, step, status, usage, request id)

``--keep DIR`` keeps the raw recordings (``DIR/<scenario>.raw.json``); ``--from-raw DIR``
rewrites the fixtures from them without running the CLI; ``--doc-only`` only regenerates the
doc from the fixtures.

The package, along its jobs: :mod:`.observer` watches a running CLI (PID files, transcripts),
:mod:`.scenarios` drives it through each user path, :mod:`.recording` records one scenario and
writes its fixtures; :mod:`.timelines` reads the fixtures back, :mod:`.contradictions` and
:mod:`.differences` hold the checks the doc reports, :mod:`.doc` writes the document, and
:mod:`.cli` is ``python -m devtools.record``.
"""

from devtools.record.cli import main
from devtools.record.doc import render_doc
from devtools.record.observer import Observer, Run
from devtools.record.recording import record_scenario, write_fixtures
from devtools.record.scenarios import SCENARIOS

__all__ = [
    "SCENARIOS",
    "Observer",
    "Run",
    "main",
    "record_scenario",
    "render_doc",
    "write_fixtures",
]
