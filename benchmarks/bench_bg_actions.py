"""P19: an action on a Claude Code background session (``claude --bg``) → the CLI reacted.

Both pinned CLIs, each in a sealed env against the scripted model, with our hooks and a real
Hub; one background session per CLI, answered through ``runtime.actions.act`` with every check:
through the hub's warm ``claude attach <job>`` (``runtime.warm_attach``: started when the
dialog asks, kept LINGER_S after an action through it) or, when none is held, one started on
a private tmux server of ours; its screen must show what the action answers, the keys go.
Latency = from the call to the first sign the CLI reacted to the decisive key (the last key
typed: Enter of a choice, Esc, the Enter after a prompt): the worker's PID file changed status
(sampled every 10 ms), or the attach's screen, as the action itself reads it after that key,
changed from what it showed just before (every ``keys.capture`` and ``keys.send_keys`` is
timed). A cold attach comes first, so the budget is twice P12's: p95 ≤ 600 ms per CLI, over 8
actions of each kind (``--quick``: 2). Approve and deny come 1.2 s after the dialog asks, as a
click after reading it does; interrupt 1 s after the answer began to stream.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from benchmarks._util import (
    Row,
    hooked_claude,
    log,
    percentile,
    rows_or_failure,
    run_alone,
    temp_homes,
    wait_until,
)
from pmux_widget.agents.claude.screen import parse_screen
from pmux_widget.core.model import State
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.demo.claude_env import CLI_VERSIONS, CliUnavailable, ensure_cli
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.runtime.actions import act
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system import keys

__all__ = ["main"]

BUDGET_MS = 600.0
READ_S = 1.2
STREAM_READ_S = 1.0
NAME = "P19 background action → CLI reacted"
KINDS = ("approve", "deny", "interrupt", "send")


class Clock:
    """Times every key sent and every screen read (``system.keys``: what actions go through)."""

    def __init__(self) -> None:
        self.sent: list[float] = []
        self.detaches: list[float] = []
        self.reads: list[tuple[float, object]] = []
        self._send = keys.send_keys
        self._capture = keys.capture

    def __enter__(self) -> Clock:
        send, capture = self._send, self._capture

        def timed_send(*args: Any, **kwargs: Any) -> None:
            send(*args, **kwargs)
            (self.detaches if args[1:] == ("C-z",) else self.sent).append(time.monotonic())

        def timed_capture(*args: Any, **kwargs: Any) -> str:
            text = capture(*args, **kwargs)
            parsed = parse_screen(text)
            dialog = parsed.dialog
            view = (
                dialog.fingerprint if dialog else None,
                dialog.selected.label if dialog and dialog.selected else None,
                parsed.busy,
                parsed.prompt_text,
            )
            self.reads.append((time.monotonic(), view))
            return text

        keys.send_keys = timed_send  # type: ignore[assignment]
        keys.capture = timed_capture  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        keys.send_keys = self._send  # type: ignore[assignment]
        keys.capture = self._capture  # type: ignore[assignment]


class Statuses:
    """The worker's PID file status, sampled every 10 ms on a thread."""

    def __init__(self, bg: BgClaude, job: str) -> None:
        self.bg, self.job = bg, job
        self.samples: list[tuple[float, str | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def now(self) -> str | None:
        found = self.bg.worker(self.job)
        return str(found[1].get("status")) if found else None

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic(), self.now()))
            time.sleep(0.01)

    def changed_after(self, t_key: float) -> float | None:
        before = [s for t, s in self.samples if t <= t_key]
        if not before:
            return None
        return next((t for t, s in self.samples if t > t_key and s != before[-1]), None)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)


def _one(
    hub: Hub, sid: str, clock: Clock, statuses: Statuses, action: str, **kw: Any
) -> tuple[float, float]:
    """ms from the call to the CLI's first reaction to the decisive key, and from the call to
    the attach's screen first showing the session (the CLI's start, ours to wait out)."""
    clock.sent.clear()
    clock.detaches.clear()
    clock.reads.clear()
    t0 = time.monotonic()
    act(hub, sid, action, **kw)
    # the decisive key is the last one typed (a cold attach's detach, Ctrl+Z, is not counted;
    # a warm attach is not detached by the action)
    if not clock.sent:
        raise RuntimeError(f"{action} typed nothing")
    t_key = clock.sent[-1]
    before = [v for t, v in clock.reads if t <= t_key]
    screen = next((t for t, v in clock.reads if t > t_key and before and v != before[-1]), None)
    deadline = time.monotonic() + 10
    status = statuses.changed_after(t_key)
    while screen is None and status is None and time.monotonic() < deadline:
        time.sleep(0.01)
        status = statuses.changed_after(t_key)
    found = [t for t in (screen, status) if t is not None]
    if not found:
        raise TimeoutError(f"{action}: the CLI did not react")
    drawn = next((t for t, v in clock.reads if v != (None, None, False, None)), t0)
    return (min(found) - t0) * 1000, (drawn - t0) * 1000


_ANSI = re.compile(r"\x1b\[[0-9;?<>]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")


def _streaming(bg: BgClaude, job: str, round_: int) -> bool:
    """Round ``round_``'s slow answer has begun (``claude logs``: the session's screen)."""
    # the TUI moves the cursor between words: each escape counts as a space
    screen = " ".join(_ANSI.sub(" ", bg.run("logs", job).stdout).split())
    return "line 1 of the slow answer" in screen.split(f"({round_})")[-1]


def _state(hub: Hub, sid: str, *states: State, timeout: float = 60.0) -> None:
    wait_until(
        lambda: hub.fleet[sid].state in states and hub.fleet[sid].running,
        timeout,
        f"{sid[:8]} in {[s.value for s in states]}",
    )


def _start(bg: BgClaude, hub: Hub) -> tuple[str, str]:
    """A background session the hub knows: (job, session id). 2.1.197's first ``--bg`` (the
    one that starts the daemon) can stay "starting…" for good on a loaded machine (its spare
    was claimed before it listened): then that job is removed and another started."""
    for attempt in range(3):
        job = bg.start("run the command", f"p19-{attempt}")
        try:
            sid = wait_until(
                lambda job=job: next((s for s in hub.fleet if s.startswith(job)), None),
                30,
                "the hub",
            )
            return job, str(sid)
        except TimeoutError:
            log(f"P19: job {job} did not start; removed, another one")
            bg.rm(job)
    raise TimeoutError("no background session started")


def _version(version: str, n: int) -> dict[str, list[tuple[float, float]]]:
    samples: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
    cli = ensure_cli(version)
    with temp_homes(f"bg-{version}") as homes, ScriptedModel() as model:
        pmux_home, env = hooked_claude(homes.root, "bg", model.base_url, version=version)
        bg = BgClaude(env, cli)
        hub = make_hub(home=pmux_home.root, claude_home=env.config_dir).start()
        statuses: Statuses | None = None
        try:
            job, sid = _start(bg, hub)
            statuses = Statuses(bg, job)
            with Clock() as clock:
                for i in range(n):
                    for answer in ("approve", "deny"):
                        if i or answer == "deny":
                            _state(hub, sid, State.IDLE, State.REVIEW)
                            act(hub, sid, "send", text=f"run the command ({answer} {i})")
                        _state(hub, sid, State.NEEDS_INPUT)
                        wait_until(lambda: statuses.now() == "waiting", 30, "waiting")  # type: ignore[union-attr]
                        time.sleep(READ_S)
                        samples[answer].append(_one(hub, sid, clock, statuses, answer))
                    _state(hub, sid, State.IDLE, State.REVIEW)
                    samples["send"].append(
                        _one(hub, sid, clock, statuses, "send", text=f"stream slowly ({i})")
                    )
                    _state(hub, sid, State.BUSY)
                    # the answer streams (an Esc before its first token puts the prompt back
                    # in the box instead): read from the CLI's own log of the screen
                    wait_until(lambda i=i: _streaming(bg, job, i), 60, "the answer streams")
                    # a person's Esc comes after reading a bit; one ~0.1 s after the first
                    # line (a warm attach) put the prompt back in the box on 2.1.197, and
                    # the next send was refused ("holds unsent text")
                    time.sleep(STREAM_READ_S)
                    samples["interrupt"].append(_one(hub, sid, clock, statuses, "interrupt"))
                    log(f"P19 {version} round {i + 1}/{n}")
        finally:
            if statuses is not None:
                statuses.stop()
            hub.stop()
            bg.close()
    return samples


def _measure(quick: bool = False) -> list[Row]:
    n = 2 if quick else 8
    rows: list[Row] = []
    for version in CLI_VERSIONS:
        try:
            samples = _version(version, n)
        except CliUnavailable as exc:
            rows.append((f"{NAME} ({version})", f"unavailable: {exc}", "<= 600 ms", False))
            continue
        for kind, pairs in samples.items():
            values = [total for total, _ in pairs]
            p95 = percentile(values, 95)
            drawn = percentile([d for _, d in pairs], 50)
            rows.append(
                (
                    f"P19 {kind} → CLI reacted ({version}), p95 ms (n={len(values)})",
                    f"{p95:.1f} (median {percentile(values, 50):.1f}; the attach drawn at "
                    f"{drawn:.0f})",
                    f"<= {BUDGET_MS:.0f}",
                    p95 <= BUDGET_MS,
                )
            )
    return rows


def main(quick: bool = False) -> list[Row]:
    return rows_or_failure(_measure, quick, NAME, "<= 600 ms")


if __name__ == "__main__":
    run_alone(main)
