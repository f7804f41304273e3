"""The shared claims (notify/claims.py) on a real SQLite file: several hubs' stores decide the
same transitions, in any order (hypothesis) and concurrently (threads): each (transition,
destination) is claimed once, and the cap holds across hubs because the rules run inside the
claim's transaction."""

from __future__ import annotations

import threading
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmux_widget.core.notify_rules import NotifyEvent, NotifySettings, Presence, check
from pmux_widget.notify.claims import NotifyStore

T0 = 1_800_000_000_000
DESTS = ["channel:a", "push:b"]


def decide(store: NotifyStore, event: NotifyEvent, s: NotifySettings, now: int) -> list[str]:
    def rules(sent, presences: list[Presence]):  # type: ignore[no-untyped-def]
        return check(event, s, now=now, still_waiting=True, looking=0, sent=sent, local_minute=600)

    claim = store.decide(event, DESTS, rules, now)
    return claim.dests if claim.decision.verdict == "send" else []


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    order=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 7)), min_size=1, max_size=40),
    cap=st.integers(1, 4),
)
def test_any_interleaving_of_three_hubs_claims_once_and_keeps_the_cap(
    tmp_path: Path, order: list[tuple[int, int]], cap: int
) -> None:
    db = tmp_path / f"notify-{abs(hash((tuple(order), cap)))}.db"
    stores = [NotifyStore(db, f"hub-{i}") for i in range(3)]
    try:
        s = NotifySettings(cooldown_s=0, cap=cap, cap_window_s=300)
        events = [NotifyEvent("h", f"s{k}", "needs-input", T0 + k * 10_000) for k in range(8)]
        claimed: list[tuple[str, str]] = []
        for step, (hub, k) in enumerate(order):
            now = T0 + 100_000 + step
            for dest in decide(stores[hub], events[k], s, now):
                claimed.append((events[k].key, dest))
        assert len(claimed) == len(set(claimed)), "a destination got a transition twice"
        sent_keys = {key for key, _ in claimed}
        assert len(sent_keys) <= cap, "the cap was exceeded across hubs"
        rows = [(k, d) for k, d, _ in stores[0].deliveries() if not k.startswith("digest/")]
        assert sorted(set(rows) - {(k, "*") for k, _ in rows}) == sorted(claimed)
    finally:
        for store in stores:
            store.close()


def test_concurrent_hubs_claim_each_transition_once(tmp_path: Path) -> None:
    db = tmp_path / "notify.db"
    s = NotifySettings(cooldown_s=0, cap=10_000)
    events = [NotifyEvent("h", f"s{k}", "review", T0 + k) for k in range(60)]
    results: list[tuple[str, str, str]] = []
    lock = threading.Lock()

    def hub(i: int) -> None:
        store = NotifyStore(db, f"hub-{i}")
        try:
            for n, event in enumerate(events):
                for dest in decide(store, event, s, T0 + 100_000 + n):
                    with lock:
                        results.append((event.key, dest, f"hub-{i}"))
        finally:
            store.close()

    threads = [threading.Thread(target=hub, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    pairs = [(k, d) for k, d, _ in results]
    assert len(pairs) == len(set(pairs)) == len(events) * len(DESTS)
