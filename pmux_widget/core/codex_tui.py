"""Which Codex TUI shows which Codex thread: pure rules over process and file facts.

Codex's shared app-server daemon runs every TUI's turns and hooks (their ``TMUX_PANE`` and
parent are the daemon's), so a session belongs to the TUI that shows it only by what can be
proved from the TUI process (``docs/codex-behaviour.md``):

* with ``--no-daemon`` the TUI holds its rollout open (``/proc/<pid>/fd``): exact;
* else a TUI may show a thread of its Codex home and its folder that was opened after the TUI
  started (the thread's ``tui-thread-reference-capabilities/<id>`` or its rollout's
  ``session_meta``). A thread with exactly one such TUI is that TUI's; each TUI shows one
  thread (its newest), so a TUI proved for one thread is no candidate for an older one, and
  the candidates of the others shrink until nothing more is proved. Two TUIs started before
  a thread of their folder leave it unproved: no pid, no pane, no action (never a guess).

That elimination assumes a TUI shows the thread it opened last, and ``/new`` and ``/resume``
break it: a TUI that starts a second thread after another TUI of its home and folder started
leaves its newer thread with both TUIs as candidates, and its first thread spends it, so the
newer thread is "proved" to the other TUI; a ``/resume`` of an older thread leaves no trace
at all (recorded: no mark touched, nothing written until its next prompt). So
:func:`match_threads` places rows (a pid, a pane) and :func:`proved_threads` says which of
them hold by process facts alone: only a ``--no-daemon`` TUI's open rollout. An action on any
other row needs its TUI's screen to show the thread (``agents/codex/screen_proof.py``), and
:func:`place_by_screens` corrects the placement with what the screens prove (the runtime reads
them where :func:`shared_folders` says: two TUIs of a home and folder under the daemon, or one
and two threads).

The daemon, its ``pid-update-loop`` and anything else that is not a TUI are recognised by
their argv (:data:`NOT_A_TUI`), never rows. No I/O here: the facts come from
``agents/codex/tui.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "NOT_A_TUI",
    "OPENED_SLACK_MS",
    "Opening",
    "Thread",
    "Tui",
    "candidates",
    "is_tui_argv",
    "match_threads",
    "may_show",
    "place_by_screens",
    "proved_threads",
    "shared_folders",
]

#: argv words of Codex processes that are not a TUI: the shared daemon (``app-server --listen
#: unix:// … --managed-daemon``), its ``app-server daemon pid-update-loop``, a headless run.
NOT_A_TUI: frozenset[str] = frozenset(
    {"app-server", "exec", "e", "mcp-server", "login", "logout", "completion", "apply"}
)
#: A TUI's start time (clock ticks: 10 ms, against a boot time read to 10 ms) and a thread's
#: opening time (file times) may cross by this much: a TUI started later than a thread's
#: opening plus the slack did not open it. (A second TUI was seen to start 30 ms after the
#: first one's thread opened.)
OPENED_SLACK_MS = 25


def is_tui_argv(argv: Sequence[str]) -> bool:
    """``argv`` (after the program) is an interactive Codex TUI's: no subcommand of
    :data:`NOT_A_TUI` before its options end."""
    for word in argv:
        if word == "--":
            return True
        if word.startswith("-"):
            continue
        return word not in NOT_A_TUI
    return True


@dataclass(frozen=True, slots=True)
class Tui:
    """A Codex TUI process: its pid, Codex home, folder, start time and the rollouts it holds
    open (only with ``--no-daemon``)."""

    pid: int
    home: str
    cwd: str
    started_ms: int
    rollouts: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Thread:
    """A Codex thread (a session): its id, Codex home, folder, rollout and when a TUI opened
    it (ms epoch; None when unknown: then only an open rollout proves its TUI)."""

    thread_id: str
    home: str
    cwd: str
    rollout: str
    opened_ms: int | None


@dataclass(frozen=True, slots=True)
class Opening:
    """A thread some TUI of ``home`` opened at ``opened_ms`` (its
    ``tui-thread-reference-capabilities`` mark, made at once by ``/new``, before the thread
    has a rollout); its folder when known."""

    thread_id: str
    home: str
    opened_ms: int
    cwd: str | None = None


def candidates(thread: Thread, tuis: Iterable[Tui]) -> set[int]:
    """The TUIs that may have opened ``thread``: of its home and folder, started before it
    opened (a ``--no-daemon`` TUI only by the rollout it holds)."""
    if thread.opened_ms is None:
        return set()
    return {
        t.pid
        for t in tuis
        if t.home == thread.home
        and t.cwd == thread.cwd
        and t.started_ms <= thread.opened_ms + OPENED_SLACK_MS
        and not t.rollouts  # a --no-daemon TUI runs only the threads it holds
    }


def may_show(thread: Thread, tuis: Iterable[Tui]) -> set[int]:
    """Every TUI that may show ``thread`` now, whatever the times say: the TUIs of its home
    and folder under the daemon (a ``/resume`` brings back any thread of the folder) and a
    ``--no-daemon`` TUI holding its rollout. What an action may look at, its screen proving
    the rest."""
    return {
        t.pid
        for t in tuis
        if (thread.rollout in t.rollouts)
        or (not t.rollouts and (t.home, t.cwd) == (thread.home, thread.cwd))
    }


def match_threads(threads: Iterable[Thread], tuis: Iterable[Tui]) -> Mapping[str, int]:
    """Thread id → the pid of the TUI that provably shows it (see the module doc)."""
    return place_by_screens(threads, tuis, {})


def place_by_screens(
    threads: Iterable[Thread], tuis: Iterable[Tui], shows: Mapping[int, str]
) -> dict[str, int]:
    """Thread id → the pid of the TUI that shows it, process facts corrected by the TUIs'
    screens. ``shows``: TUI pid → the one thread its screen provably shows (exactly that
    thread's evidence and no rival's: ``agents/codex/screen_proof.py``).

    * a ``--no-daemon`` TUI's open rollout wins over everything (its screen is not asked);
    * a thread shown by exactly one TUI's screen (of its home and folder) is that TUI's,
      whatever the times say (a ``/resume`` leaves none): that TUI is spent;
    * a TUI whose screen shows one thread is no candidate for any other; when a second
      screen shows the same evidence neither proves that thread (it stays unplaced);
    * the rest goes through the elimination of :func:`match_threads` (newest thread first:
      a TUI shows its newest thread).
    """
    tuis = list(tuis)
    by_pid = {t.pid: t for t in tuis}
    found: dict[str, int] = {}
    pending: list[Thread] = []
    for thread in threads:
        holder = _holder(thread, tuis)
        if holder is not None:
            found[thread.thread_id] = holder
        else:
            pending.append(thread)
    by_id = {th.thread_id: th for th in pending}
    screens: dict[int, str] = {}
    for pid, thread_id in shows.items():
        tui, shown = by_pid.get(pid), by_id.get(thread_id)
        if tui is None or shown is None or tui.rollouts:
            continue
        if (tui.home, tui.cwd) == (shown.home, shown.cwd):
            screens[pid] = thread_id
    claimed: dict[str, list[int]] = {}
    for pid, thread_id in screens.items():
        claimed.setdefault(thread_id, []).append(pid)
    for thread_id, pids in claimed.items():
        if len(pids) == 1:
            found[thread_id] = pids[0]
    # a thread two screens show is unproved: neither those TUIs nor any other are proved
    pending = [th for th in pending if th.thread_id not in claimed]
    left_for = {
        th.thread_id: {
            pid for pid in candidates(th, tuis) if screens.get(pid, th.thread_id) == th.thread_id
        }
        for th in pending
    }
    _eliminate(pending, left_for, found)
    return found


def _eliminate(
    pending: list[Thread], may_show: Mapping[str, set[int]], found: dict[str, int]
) -> None:
    """Place ``pending`` threads (into ``found``) whose candidates, less the TUIs spent,
    leave one TUI and no newer thread with the same one."""
    # newest first: a TUI shows its newest thread, so it is spent for the older ones
    pending = sorted(pending, key=lambda th: th.opened_ms or 0, reverse=True)
    spent = set(found.values())
    progress = True
    while progress:
        progress = False
        for thread in pending:
            if thread.thread_id in found:
                continue
            left = may_show[thread.thread_id] - spent
            newer_rivals = any(
                other.thread_id not in found
                and (other.opened_ms or 0) > (thread.opened_ms or 0)
                and may_show[other.thread_id] - spent == left
                for other in pending
            )
            if len(left) == 1 and not newer_rivals:
                found[thread.thread_id] = next(iter(left))
                spent |= left
                progress = True


def _holder(thread: Thread, tuis: Sequence[Tui]) -> int | None:
    holders = [t.pid for t in tuis if thread.rollout in t.rollouts]
    return holders[0] if len(holders) == 1 else None


def proved_threads(threads: Iterable[Thread], tuis: Iterable[Tui]) -> Mapping[str, int]:
    """Thread id → the TUI that shows it by process facts alone: the one TUI holding its
    rollout open (``--no-daemon``). Under the daemon nothing proves it (see the module doc)."""
    tuis = list(tuis)
    found: dict[str, int] = {}
    for thread in threads:
        holder = _holder(thread, tuis)
        if holder is not None:
            found[thread.thread_id] = holder
    return found


def shared_folders(
    threads: Iterable[Thread], tuis: Iterable[Tui]
) -> list[tuple[list[int], list[str]]]:
    """The homes and folders where process facts cannot place rows for good: a TUI under the
    daemon (no open rollout) and two threads or more of that home and folder (a ``/new`` or
    ``/resume`` in it: which does it show now?), or two such TUIs (which shows which?). Each
    as (its TUIs' pids, its threads' ids): the screens to read and the rows to judge them
    against. Anywhere else no screen needs reading."""
    daemon_tuis: dict[tuple[str, str], list[int]] = {}
    for t in tuis:
        if not t.rollouts:
            daemon_tuis.setdefault((t.home, t.cwd), []).append(t.pid)
    found: dict[tuple[str, str], list[str]] = {}
    for th in threads:
        key = (th.home, th.cwd)
        if key in daemon_tuis:
            found.setdefault(key, []).append(th.thread_id)
    return [
        (sorted(daemon_tuis[key]), ids)
        for key, ids in found.items()
        if len(ids) >= 2 or len(daemon_tuis[key]) >= 2
    ]
