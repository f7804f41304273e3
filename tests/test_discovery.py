"""The poller's discovery of a Claude in a tmux pane that neither hooks nor a PID file
announced (its session: the newest transcript of its folder). A process with a PID file of
its own is never discovered (a 2.1.197 spare, under the agent view's pane and with no
``--bg-spare`` in its argv, was), and a transcript whose name is no session id is no
session's (a ``<id>.orphaned-<ms>-<hex>.jsonl`` made a stray row after a respawn, 1 run in 10
of the real kill -9 test on 2.1.197)."""

from __future__ import annotations

import json

from pmux_widget.agents.claude.paths import ClaudeHome, transcript_path_for
from pmux_widget.runtime.sources.poller import discover
from pmux_widget.system import processes, tmux

SID = "6f1d2c3b-4a59-4e68-8f7a-9b0c1d2e3f40"


def _found(claude: ClaudeHome) -> list[tuple[int, str]]:
    panes = tmux.list_panes()
    records = discover(claude, panes, processes.children_map(), [])
    return [(r.pid, r.session_id) for r in records]


def test_a_transcript_named_as_no_session_is_not_a_session(homes, claude_in_a_pane):
    pid, work = claude_in_a_pane
    claude = ClaudeHome.resolve(homes.claude)
    transcript = transcript_path_for(claude, str(work), SID)
    transcript.parent.mkdir(parents=True)
    orphaned = transcript.with_name(f"{SID}.orphaned-1796609258051-73fa0dcc.jsonl")
    orphaned.write_text("")
    assert _found(claude) == []
    transcript.write_text("")
    assert _found(claude) == [(pid, SID)]


def test_a_process_with_its_own_pid_file_is_never_discovered(homes, claude_in_a_pane):
    pid, work = claude_in_a_pane
    claude = ClaudeHome.resolve(homes.claude)
    transcript = transcript_path_for(claude, str(work), SID)
    transcript.parent.mkdir(parents=True)
    transcript.write_text("")
    assert _found(claude) == [(pid, SID)]
    claude.sessions_dir.mkdir(parents=True, exist_ok=True)
    spare = {"pid": pid, "sessionId": "31186cbc-9c65-48c6-aca9-8d64ec6b9380", "kind": "bg"}
    (claude.sessions_dir / f"{pid}.json").write_text(json.dumps(spare))
    assert _found(claude) == []
