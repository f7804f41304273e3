"""Which Codex TUI shows which thread (core/codex_tui.py): pure rules over recorded facts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pmux_widget.core.codex_tui import (
    Thread,
    Tui,
    is_tui_argv,
    match_threads,
    may_show,
    place_by_screens,
    proved_threads,
    shared_folders,
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


# ------------------------------------------------------------------ corrected by the screens

#: The recorded /new case: TUI 1 opened "x", TUI 2 started and opened "y", then TUI 1's /new
#: opened "n" (and its screen shows "n" now).
A, B = tui(1, 1_000), tui(2, 11_000)
X, Y, N = thread("x", 10_000), thread("y", 12_000), thread("n", 13_000)


def test_new_the_screen_gives_the_new_thread_its_tui_and_the_old_one_loses_it() -> None:
    assert match_threads([X, Y, N], [A, B]) == {"x": 1, "n": 2}  # wrong, by process facts
    assert place_by_screens([X, Y, N], [A, B], {1: "n", 2: "y"}) == {"n": 1, "y": 2}
    # one screen is enough: TUI 1 shows "n", so "y" is left TUI 2, and "x" nothing
    assert place_by_screens([X, Y, N], [A, B], {1: "n"}) == {"n": 1, "y": 2}
    # TUI 2's screen alone: "n" and "x" are left TUI 1, the newest wins it (elimination)
    assert place_by_screens([X, Y, N], [A, B], {2: "y"}) == {"y": 2, "n": 1}


def test_resume_of_an_older_thread_is_placed_by_the_screen_alone() -> None:
    # /resume "x" in TUI 1 after its /new: no time says so, its screen shows x's last prompt
    assert place_by_screens([X, Y, N], [A, B], {1: "x", 2: "y"}) == {"x": 1, "y": 2}
    # an old thread opened before any TUI started has no candidate: only a screen places it
    old = thread("o", 500)
    assert match_threads([old, Y], [A, B]) == {}
    assert place_by_screens([old, Y], [A, B], {1: "o"}) == {"o": 1, "y": 2}


def test_one_tui_new_then_resume() -> None:
    assert match_threads([X, N], [A]) == {"n": 1}  # its newest: right after /new
    assert place_by_screens([X, N], [A], {1: "n"}) == {"n": 1}
    assert place_by_screens([X, N], [A], {1: "x"}) == {"x": 1}  # /resume x: the screen says


def test_two_screens_showing_the_same_thread_prove_nothing_and_spend_both() -> None:
    # both screens show n's last prompt (or a thread with no row and the same one): unproved,
    # and neither TUI is any other thread's
    assert place_by_screens([X, Y, N], [A, B], {1: "n", 2: "n"}) == {}


def test_a_screen_showing_nothing_known_leaves_the_process_facts() -> None:
    # a screen that proves no row (nothing sent yet, a rival's evidence too) is not in shows
    for threads in ([X], [X, Y], [X, Y, N]):
        assert place_by_screens(threads, [A, B], {}) == match_threads(threads, [A, B])
    # a row unknown to the facts, a pid that is no TUI: ignored
    assert place_by_screens([X, Y], [A, B], {1: "gone", 9: "y"}) == match_threads([X, Y], [A, B])


def test_a_screen_of_another_folder_or_home_proves_nothing() -> None:
    elsewhere = tui(3, 500, cwd="/q")
    assert place_by_screens([X], [A, elsewhere], {3: "x"}) == {"x": 1}
    other_home = Tui(4, "/other/.codex", "/p", 500)
    assert place_by_screens([X], [A, other_home], {4: "x"}) == {"x": 1}


def test_an_open_rollout_always_wins_over_a_screen() -> None:
    holder = tui(3, 500, rollouts=frozenset({X.rollout}))
    assert place_by_screens([X, Y], [A, B, holder], {1: "x", 2: "y"}) == {"x": 3, "y": 2}
    # the holder's own screen is not asked: it shows the rollout it holds
    assert place_by_screens([X, Y], [A, B, holder], {3: "y"}) == {"x": 3}


@given(
    st.lists(st.integers(0, 100_000), min_size=1, max_size=4, unique=True),
    st.lists(st.integers(0, 100_000), min_size=1, max_size=4, unique=True),
    st.dictionaries(st.integers(1, 5), st.integers(0, 4), max_size=4),
)
def test_screens_place_one_to_one_and_a_proved_screen_always_wins(
    starts: list[int], opens: list[int], screens: dict[int, int]
) -> None:
    tuis = [tui(i + 1, s) for i, s in enumerate(starts)]
    threads = [thread(f"t{i}", o) for i, o in enumerate(opens)]
    shows = {pid: f"t{i}" for pid, i in screens.items()}
    found = place_by_screens(threads, tuis, shows)
    assert len(set(found.values())) == len(found)  # one TUI, one thread
    pids = {t.pid for t in tuis}
    ids = {t.thread_id for t in threads}
    valid = {pid: tid for pid, tid in shows.items() if pid in pids and tid in ids}
    for pid, tid in valid.items():
        if list(valid.values()).count(tid) == 1:
            assert found[tid] == pid  # shown by exactly one screen: that TUI's
        else:
            assert tid not in found  # two screens show it: unproved
    for tid, pid in found.items():
        assert valid.get(pid, tid) == tid  # never a TUI whose screen shows another thread
    if not valid:
        assert found == match_threads(threads, tuis)


def test_only_a_folder_a_daemon_tui_may_have_moved_in_needs_its_screens_read() -> None:
    assert shared_folders([X, Y, N], [A, B]) == [([1, 2], ["x", "y", "n"])]
    assert shared_folders([Y], [A, B]) == [([1, 2], ["y"])]  # which of the two shows it?
    assert shared_folders([X], [A]) == []  # one TUI, one thread: nothing to tell apart
    assert shared_folders([X, N], [A]) == [([1], ["x", "n"])]  # /new in the one TUI
    holder = tui(3, 500, rollouts=frozenset({Y.rollout}))
    assert shared_folders([Y], [holder]) == []  # --no-daemon: its rollout proves it
    q = thread("q", 12_000, cwd="/q")
    assert shared_folders([X, q], [A, B, tui(3, 1_000, cwd="/q")]) == [([1, 2], ["x"])]
    assert shared_folders([], [A, B]) == []
    assert shared_folders([X, N], []) == []  # no TUI: no screen to read


def test_what_an_action_may_look_at_is_every_tui_of_the_folder() -> None:
    # a /resume brings "x" back in TUI 2, started after "x" opened: it may show it (its
    # screen must prove it before a key is typed)
    assert may_show(X, [A, B]) == {1, 2}
    assert may_show(X, [A, B, tui(3, 500, cwd="/q")]) == {1, 2}
    holder = tui(3, 500, rollouts=frozenset({X.rollout}))
    assert may_show(X, [A, holder]) == {1, 3}
    assert may_show(Y, [holder]) == set()  # a --no-daemon TUI runs only what it holds
