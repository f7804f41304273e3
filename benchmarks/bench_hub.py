"""Hub budgets: P3 (hook → state latency under load), P7 (idle CPU), P8 (memory).

P3: a :class:`~pmux_widget.runtime.hub.Hub` (sources on, default poll) runs in this process;
a driver subprocess plays 200 sessions, each with its own fake Claude process (a sleeping
process named ``claude``, sent as ``X-Pmux-Ppid``) and a small real transcript: a paced
SessionStart round,
then a realistic cycle per session (prompt, Read, Bash with a permission request and its
notification, Edit, Stop, …) at a paced 200 events/s in total, one new connection per event as curl
does. Latency = from ``time.monotonic_ns()`` taken in the driver just before it opens the
connection, to the moment a listener on the hub thread is called with that hook's change
(``hub.fleet``, hence ``sessions()``, already holds it; the listener runs after the change's SQLite
commit). Both clocks are CLOCK_MONOTONIC, shared by the processes. A hook's change is recognised
exactly by (session id, ``last_hook_at`` == the ``X-Pmux-Sent`` it was sent with). The full run
lasts 60 s, one period of the 60 s poller (200 sessions), so exactly one poll happens inside it, as
it would in any minute of real use.

P7: 50 sessions (sleeping ``claude`` processes with PID files whose ``procStart`` matches, and
transcripts under ``projects/``), ``python -m pmux_widget serve`` in a subprocess with the
default poll (``PMUX_WIDGET_POLL_SECONDS`` unset). Once it has read every transcript and
settled, its CPU time (user + system, all threads) is sampled every second for 60 s. The window
holds exactly one poll (the first comes 60 s after start with > 20 sessions).

P8: the same ``serve`` subprocess; RSS before any session, then 200 sessions made known by
hooks (SessionStart with ``transcript_path``) whose transcripts total 2 GiB (200 × 10 MiB of
realistic JSONL, 4 generated files copied); RSS once ``/api/sessions`` shows tokens for all of
them (every transcript read), after a short settle.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._gen_transcript import generate
from benchmarks._util import (
    Homes,
    Row,
    ServeProcess,
    Sleepers,
    get_json,
    log,
    percentile,
    post_hook,
    run_alone,
    session_cycle,
    session_start,
    summary_ms,
    temp_homes,
    wait_until,
    write_pid_file,
)
from pmux_widget.runtime.assemble import make_hub

__all__ = ["main"]

P3_P99_MS = 5.0
P7_MAX_PCT = 0.5
P8_MAX_MB = 60.0
MB = 1 << 20


def _sid(prefix: int, k: int) -> str:
    return str(uuid.UUID(int=(prefix << 96) | (k * 2654435761)))


def _cwd(k: int) -> str:
    return f"/home/dev/projects/service-{k:03d}"


def _place_transcripts(
    homes: Homes, sessions: list[tuple[str, str]], size: int, distinct: int
) -> int:
    """Generate ``distinct`` transcripts of ``size`` bytes, copy them to every session's
    ``projects/<cwd>/<id>.jsonl``; returns the total bytes placed."""
    seeds = []
    for i in range(min(distinct, len(sessions))):
        path = homes.root / f"seed-{i}.jsonl"
        generate(path, size, seed=100 + i)
        seeds.append(path)
    total = 0
    for k, (sid, cwd) in enumerate(sessions):
        target = homes.transcript_path(cwd, sid)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(seeds[k % len(seeds)], target)
        total += target.stat().st_size
    for path in seeds:
        path.unlink()
    return total


def _thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of this process's named threads, by thread name."""
    import threading

    import psutil

    names = {t.native_id: t.name for t in threading.enumerate()}
    cpu: dict[str, float] = {}
    for thread in psutil.Process().threads():
        name = names.get(thread.id, "other")
        cpu[name] = cpu.get(name, 0.0) + thread.user_time + thread.system_time
    return cpu


class _CpuSampler:
    """Samples :func:`_thread_cpu` every ``interval`` s on a thread, with monotonic times."""

    def __init__(self, interval: float = 0.5) -> None:
        import threading

        self.samples: list[tuple[int, dict[str, float]]] = []
        self.interval = interval
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="bench-sampler", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop_event.wait(self.interval):
            self.samples.append((time.monotonic_ns(), _thread_cpu()))

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join()

    def between(self, start_ns: int, end_ns: int) -> tuple[float, dict[str, float]]:
        """(seconds covered, CPU per thread name) between the samples inside the interval."""
        inside = [s for s in self.samples if start_ns <= s[0] <= end_ns]
        if len(inside) < 2:
            return 0.0, {}
        (t_a, a), (t_b, b) = inside[0], inside[-1]
        return (t_b - t_a) / 1e9, {name: b[name] - a.get(name, 0.0) for name in b}


@contextlib.contextmanager
def _default_poll() -> Iterator[None]:
    """The in-process hub must use the default poll interval (tests set an override)."""
    saved = os.environ.pop("PMUX_WIDGET_POLL_SECONDS", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["PMUX_WIDGET_POLL_SECONDS"] = saved


# ---------------------------------------------------------------------------- P3 driver


async def _p3_client(config: dict[str, Any]) -> list[list[Any]]:
    port, token, rate = config["port"], config["token"], config["rate"]
    sessions = config["sessions"]  # [sid, cwd, transcript, ppid]
    count = len(sessions)
    starts = [json.dumps(session_start(s, c, t)).encode() for s, c, t, _ in sessions]
    cycles = [
        [json.dumps(p).encode() for p in session_cycle(s, c, t, seed=k)]
        for k, (s, c, t, _) in enumerate(sessions)
    ]
    records: list[list[Any]] = []

    async def send(k: int, phase: str, body: bytes) -> None:
        sent_ms = time.time_ns() // 1_000_000
        head = (
            f"POST /api/hook HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Pmux-Token: {token}\r\n"
            "Content-Type: application/json\r\nX-Pmux-Pane: \r\n"
            f"X-Pmux-Ppid: {sessions[k][3]}\r\nX-Pmux-Sent: {sent_ms}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        t0 = time.monotonic_ns()
        status = 0
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(head + body)
            data = await reader.read()
            writer.close()
            if data.startswith(b"HTTP/"):
                status = int(data[9:12])
        except OSError:
            pass
        records.append([k, phase, sent_ms, t0, time.monotonic_ns(), status])

    async def paced(plan: list[tuple[int, str, bytes]]) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time() + 0.05
        tasks = []
        for i, (k, phase, body) in enumerate(plan):
            delay = start + i / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.ensure_future(send(k, phase, body)))
        await asyncio.gather(*tasks)

    await paced([(k, "start", starts[k]) for k in range(count)])
    await asyncio.sleep(config["pause"])
    total = int(rate * config["duration"])
    plan = []
    for i in range(total):
        k = i % count
        cycle = cycles[k]
        plan.append((k, "run", cycle[(i // count) % len(cycle)]))
    await paced(plan)
    return records


def _p3_driver() -> None:
    config = json.load(sys.stdin)
    json.dump(asyncio.run(_p3_client(config)), sys.stdout)


# ---------------------------------------------------------------------------------- P3


def p3(quick: bool, attach: Any = None) -> list[Row]:
    """``attach(hub) -> detach``, if given, runs once the hub is up (bench_fleet attaches the
    fleet publisher to measure its cost on this very path)."""
    count, rate = 200, 200
    duration = 5 if quick else 60
    rows: list[Row] = []
    with temp_homes("p3") as homes, Sleepers(homes.root, count) as sleepers, _default_poll():
        sessions = [(_sid(3, k), _cwd(k)) for k in range(count)]
        _place_transcripts(homes, sessions, 40_000, 4)
        hub = make_hub(home=homes.pmux.root, claude_home=homes.claude, port=0).start()
        detach = attach(hub) if attach is not None else None
        seen: dict[tuple[str, int], int] = {}
        polls: list[tuple[int, int]] = []
        try:

            def listener(changes: list[Any], fleet: dict[str, Any]) -> None:
                now = time.monotonic_ns()
                for change in changes:
                    at = change.after.tracking.last_hook_at
                    if change.before is None or change.before.tracking.last_hook_at != at:
                        seen.setdefault((change.session_id, at), now)

            hub.call(lambda: hub.add_listener(listener))
            for source in hub.sources:  # time the poller's runs (instance attribute only)
                if not hasattr(source, "poll_once"):  # the file watchers, the warm attaches
                    continue
                original = source.poll_once

                async def timed(original: Any = original) -> None:
                    t0 = time.monotonic_ns()
                    try:
                        await original()
                    finally:
                        polls.append((t0, time.monotonic_ns()))

                source.poll_once = timed
            config = {
                "port": hub.port,
                "token": hub.token,
                "rate": rate,
                "duration": duration,
                "pause": 1.0 if quick else 3.0,
                "sessions": [
                    [sid, cwd, str(homes.transcript_path(cwd, sid)), pid]
                    for (sid, cwd), pid in zip(sessions, sleepers.pids, strict=True)
                ],
            }
            log(f"P3: {count} sessions, {rate} events/s for {duration} s (in-process hub)")
            sampler = _CpuSampler()
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.bench_hub", "--p3-driver"],
                input=json.dumps(config).encode(),
                capture_output=True,
                env=homes.env(),
                check=True,
                timeout=duration + 300,
            )
            records = json.loads(out.stdout)
            sampler.stop()
            time.sleep(0.2)
            fleet_size = len(hub.sessions())
        finally:
            if detach is not None:
                detach()
            hub.stop()
    run = [r for r in records if r[1] == "run"]
    latencies, client, unmatched, errors = [], [], 0, 0
    in_poll: list[float] = []
    outside: list[float] = []
    per_event: list[float | None] = []
    for k, _, sent_ms, t0, t1, status in run:
        errors += status != 204
        client.append((t1 - t0) / 1e6)
        seen_at = seen.get((sessions[k][0], sent_ms))
        per_event.append(None if seen_at is None else (seen_at - t0) / 1e6)
        if seen_at is None:
            unmatched += 1
            continue
        latency = (seen_at - t0) / 1e6
        latencies.append(latency)
        (in_poll if any(a <= t0 <= b for a, b in polls) else outside).append(latency)
    span = (max(r[3] for r in run) - min(r[3] for r in run)) / 1e9
    achieved = len(run) / span if span else 0.0
    if not latencies:
        return [("P3 hook → state visible", "no change matched a request", "", False)]
    stats = summary_ms(latencies)
    rows.append(
        (
            f"P3 hook sent → state in the fleet, p99 ({len(latencies)} events, "
            f"{count} sessions, {achieved:.0f}/s, {span:.0f} s)",
            f"{stats['p99']:.2f} ms (p50 {stats['p50']:.2f}, p95 {stats['p95']:.2f}, "
            f"max {stats['max']:.1f})",
            f"<= {P3_P99_MS:g} ms",
            stats["p99"] <= P3_P99_MS and unmatched == 0 and errors == 0,
        )
    )
    poll_text = ", ".join(f"{(b - a) / 1e6:.0f} ms" for a, b in polls) or "none"
    if outside and polls:
        rows.append(
            (
                "P3 p99 outside / during the poller's runs (poll durations)",
                f"{percentile(outside, 99):.2f} ms / "
                f"{percentile(in_poll, 99) if in_poll else 0:.1f} ms "
                f"({len(in_poll)} events; polls: {poll_text})",
                "info",
                True,
            )
        )
    first, last = min(r[3] for r in run), max(r[3] for r in run)
    covered, threads = sampler.between(first, last)
    hub_cpu = threads.pop("pmux-hub", 0.0)
    busy = sorted(threads.items(), key=lambda item: -item[1])
    others = ", ".join(f"{name} {cpu:.1f} s" for name, cpu in busy if cpu >= 0.1)
    if covered:
        rows.append(
            (
                "P3 hub-thread CPU per event during the run; other threads' CPU",
                f"{hub_cpu / max(1.0, achieved * covered) * 1000:.2f} ms "
                f"({hub_cpu / covered * 100:.0f} % of a core); {others or 'none'}",
                "info",
                True,
            )
        )
    buckets: dict[int, list[float]] = {}
    for r, latency in zip(run, per_event, strict=True):
        if latency is not None:
            buckets.setdefault(int((r[3] - first) / 10e9), []).append(latency)
    p99s = [percentile(v, 99) for _, v in sorted(buckets.items()) if len(v) >= 100]
    if len(p99s) > 1:
        rows.append(
            (
                "P3 p99 per 10 s of the run",
                ", ".join(f"{x:.1f}" if x < 100 else f"{x:.0f}" for x in p99s) + " ms",
                "info",
                True,
            )
        )
    client_stats = summary_ms(client)
    rows.append(
        (
            "P3 client-side request time (connect → response read), p50 / p99",
            f"{client_stats['p50']:.2f} / {client_stats['p99']:.2f} ms",
            "info",
            True,
        )
    )
    rows.append(
        (
            "P3 requests answered 204 and matched to their change; fleet size",
            f"{len(run) - errors}/{len(run)} answered, {unmatched} unmatched; {fleet_size}",
            f"all, 0, {count}",
            errors == 0 and unmatched == 0 and fleet_size == count,
        )
    )
    return rows


# ---------------------------------------------------------------------------------- P7


def _all_read(hub: ServeProcess, count: int) -> bool:
    sessions = get_json(hub.port, hub.token, "/api/sessions")["sessions"]
    read = [s for s in sessions if sum(s["tokens"].values()) > 0]
    return len(sessions) >= count and len(read) >= count


def p7(quick: bool) -> list[Row]:
    count = 50
    window = 10 if quick else 60
    statuses = ["idle"] * 35 + ["busy"] * 10 + ["waiting"] * 5
    with temp_homes("p7") as homes, Sleepers(homes.root, count) as sleepers:
        sessions = [(_sid(7, k), _cwd(k)) for k in range(count)]
        _place_transcripts(homes, sessions, 300_000, 4)
        now = time.time_ns() // 1_000_000
        for (sid, cwd), pid, status in zip(sessions, sleepers.pids, statuses, strict=True):
            write_pid_file(homes, pid, sid, cwd, status, now)
        with ServeProcess(homes) as hub:
            started = time.monotonic()
            wait_until(lambda: _all_read(hub, count), 120, "the hub to read 50 transcripts", 0.5)
            ready = time.monotonic() - started
            time.sleep(2 if quick else 5)
            log(f"P7: idle hub with {count} sessions, CPU over {window} s")
            assert hub.ps is not None
            t_start = time.monotonic()
            c_start = hub.cpu_seconds()
            children_start = hub.ps.cpu_times()
            samples = []
            last = c_start
            for i in range(window):
                time.sleep(max(0.0, t_start + i + 1 - time.monotonic()))
                cpu = hub.cpu_seconds()
                samples.append(cpu - last)
                last = cpu
            wall = time.monotonic() - t_start
            children_end = hub.ps.cpu_times()
            threads = hub.ps.num_threads()
            final = _all_read(hub, count)
    used = last - c_start
    children = (
        children_end.children_user
        + children_end.children_system
        - children_start.children_user
        - children_start.children_system
    )
    pct = used / wall * 100
    worst = max(samples)
    rest = (used - worst) / (wall - 1) * 100
    return [
        (
            f"P7 idle hub CPU, {count} live sessions, {wall:.0f} s (% of one core)",
            f"{pct:.3f} % ({used * 1000:.0f} ms CPU)",
            f"<= {P7_MAX_PCT} %",
            pct <= P7_MAX_PCT and final,
        ),
        (
            "P7 busiest second (the poll) / the other seconds / subprocesses",
            f"{worst * 1000:.0f} ms / {rest:.3f} % / {children * 1000:.0f} ms "
            f"({threads} threads; all read {ready:.1f} s after start)",
            "info",
            True,
        ),
    ]


# ---------------------------------------------------------------------------------- P8


def p8(quick: bool) -> list[Row]:
    count, size = (20, MB) if quick else (200, 10 * MB)
    with temp_homes("p8") as homes, Sleepers(homes.root, count) as sleepers:
        sessions = [(_sid(8, k), _cwd(k)) for k in range(count)]
        log(f"P8: generating {count} x {size // MB} MiB of transcripts")
        total = _place_transcripts(homes, sessions, size, 4)
        with ServeProcess(homes) as hub:
            get_json(hub.port, hub.token, "/api/sessions")
            time.sleep(2)
            before = hub.rss()
            log(f"P8: {count} sessions by hooks, {total / MB:.0f} MiB of transcripts")
            t0 = time.monotonic()
            for (sid, cwd), pid in zip(sessions, sleepers.pids, strict=True):
                payload = session_start(sid, cwd, str(homes.transcript_path(cwd, sid)))
                post_hook(hub.port, hub.token, payload, ppid=pid)
            wait_until(lambda: _all_read(hub, count), 900, "every transcript read", 0.5)
            read_s = time.monotonic() - t0
            time.sleep(3)
            after = hub.rss()
            peak = hub.peak_rss()
    delta = (after - before) / MB
    return [
        (
            f"P8 hub RSS growth, {count} sessions, {total / 2**30:.2f} GiB of transcripts",
            f"+{delta:.1f} MiB ({before / MB:.0f} → {after / MB:.0f} MiB)",
            f"<= +{P8_MAX_MB:g} MB",
            delta <= P8_MAX_MB,
        ),
        (
            "P8 peak RSS (VmHWM) growth; time to read every transcript",
            f"+{(peak - before) / MB:.1f} MiB; {read_s:.1f} s ({total / MB / read_s:.0f} MiB/s)",
            "info",
            True,
        ),
    ]


def main(quick: bool = False) -> list[Row]:
    """P3, P7 and P8; returns the table rows."""
    return p3(quick) + p7(quick) + p8(quick)


if __name__ == "__main__":
    if "--p3-driver" in sys.argv:
        _p3_driver()
    else:
        run_alone(main)
