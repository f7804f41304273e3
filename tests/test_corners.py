"""Issue 11, "Correct in every corner": one test per item, named after it.

Each failed before its fix. Pure rules use the tracker's own ``Run`` driver; the ones that
need real files, processes or a hub start real ones.
"""

from __future__ import annotations

from pmux_widget.core.model import State

from .test_tracker import busy_run

# ------------------------------------------------------------------- item 9: compacting


def test_item9_stop_clears_compacting():
    run = busy_run()
    run.hook("PreCompact", at=run.now, trigger="auto")
    assert run.session.compacting is True
    run.hook("Stop", at=run.now + 10, last_assistant_message="done")  # no PostCompact came
    assert run.session.compacting is False
    assert run.session.tracking.compacting_since == 0
    assert run.state is State.REVIEW


def test_item9_stopfailure_and_sessionstart_compact_clear_compacting():
    run = busy_run()
    run.hook("PreCompact", at=run.now, trigger="manual")
    run.hook("SessionStart", at=run.now + 5, source="compact")  # fired once it is done
    assert run.session.compacting is False and run.state is State.BUSY
    run.hook("PreCompact", at=run.now + 10, trigger="auto")
    run.hook("StopFailure", at=run.now + 20, error="rate_limit")
    assert run.session.compacting is False
