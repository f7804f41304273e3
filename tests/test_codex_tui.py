"""Which Codex TUI shows which thread (core/codex_tui.py): pure rules over recorded facts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pmux_widget.core.codex_tui import (
    Thread,
    Tui,
    is_tui_argv,
    match_threads,
    proved_threads,
)

HOME = "/h/.codex"


def tui(pid: int, started: int, cwd: str = "/p", rollouts: frozenset[str] = frozenset()) -> Tui:
    return Tui(pid, HOME, cwd, started, rollouts)


def thread(tid: str, opened: int | None, cwd: str = "/p") -> Thread:
    return Thread(tid, HOME, cwd, f"{HOME}/sessions/2026/12/07/rollout-x-{tid}.jsonl", opened)


def test_argv_of_a_tui_and_of_the_daemon_and_its_helper() -> None:
    assert is_tui_argv([])
    assert is_tui_argv(["--no-daemon"])
    assert not is_tui_argv(
        ["app-server", "--listen", "unix://", "--analytics-default-enabled", "--managed-daemon"]
    )
    assert not is_tui_argv(["app-server", "daemon", "pid-update-loop"])
    assert not is_tui_argv(["exec", "say hi"])
    assert is_tui_argv(["please fix the bug"])  # a first prompt is no subcommand


def test_two_tuis_of_one_folder_the_recorded_run() -> None:
    # recorded: TUI 1 started, its thread opened 10 s later, TUI 2 started 350 ms after that
    tuis = [tui(1, 1_000), tui(2, 11_050)]
    threads = [thread("a", 10_700), thread("b", 12_100)]
    assert match_threads(threads, tuis) == {"a": 1, "b": 2}


def test_a_tui_started_just_after_a_thread_opened_is_not_its_tui() -> None:
    assert match_threads([thread("a", 10_000)], [tui(1, 1_000), tui(2, 10_030)]) == {"a": 1}


def test_two_tuis_started_before_both_threads_prove_nothing() -> None:
    tuis = [tui(1, 1_000), tui(2, 2_000)]
    assert match_threads([thread("a", 5_000), thread("b", 6_000)], tuis) == {}


def test_a_tui_shows_its_newest_thread() -> None:
    # /new in TUI 1: its older thread is not shown any more
    assert match_threads([thread("a", 5_000), thread("b", 6_000)], [tui(1, 1_000)]) == {"b": 1}


def test_other_folder_other_home_and_no_opening_time_are_never_candidates() -> None:
    assert match_threads([thread("a", 5_000, cwd="/q")], [tui(1, 1_000)]) == {}
    other_home = Thread("a", "/other/.codex", "/p", "/other/.codex/sessions/r-a.jsonl", 5_000)
    assert match_threads([other_home], [tui(1, 1_000)]) == {}
    assert match_threads([thread("a", None)], [tui(1, 1_000)]) == {}


def test_no_daemon_tui_holds_its_rollout_open() -> None:
    a, b = thread("a", 5_000), thread("b", 6_000)
    holder = tui(2, 1_000, rollouts=frozenset({b.rollout}))
    assert match_threads([a, b], [tui(1, 500), holder]) == {"a": 1, "b": 2}


@given(
    st.lists(st.integers(0, 100_000), min_size=1, max_size=5, unique=True),
    st.lists(st.integers(0, 100_000), min_size=1, max_size=5, unique=True),
)
def test_a_match_is_one_to_one_and_never_a_tui_started_after(
    starts: list[int], opens: list[int]
) -> None:
    tuis = [tui(i + 1, s) for i, s in enumerate(starts)]
    threads = [thread(f"t{i}", o) for i, o in enumerate(opens)]
    found = match_threads(threads, tuis)
    assert len(set(found.values())) == len(found)
    started = {t.pid: t.started_ms for t in tuis}
    opened = {t.thread_id: t.opened_ms for t in threads}
    for tid, pid in found.items():
        assert started[pid] <= (opened[tid] or 0) + 25


def test_proved_only_by_an_open_rollout_the_new_and_resume_cases() -> None:
    # the recorded /new case: TUI 1 opened "a", TUI 2 started and opened "b", then TUI 1's
    # /new opened "c": elimination places "c" in TUI 2 (wrong: it is TUI 1's)
    tuis = [tui(1, 1_000), tui(2, 11_000)]
    a, b, c = thread("a", 10_000), thread("b", 12_000), thread("c", 13_000)
    assert match_threads([a, b, c], tuis) == {"a": 1, "c": 2}
    assert proved_threads([a, b, c], tuis) == {}
    # one TUI, one thread: placed, yet a /resume of an older thread leaves no trace
    assert match_threads([a], [tui(1, 1_000)]) == {"a": 1}
    assert proved_threads([a], [tui(1, 1_000)]) == {}
    # a --no-daemon TUI holds the rollout it shows
    holder = tui(2, 2_000, rollouts=frozenset({a.rollout}))
    assert proved_threads([a, b], [tui(1, 1_000), holder]) == {"a": 2}
