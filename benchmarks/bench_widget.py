"""Widget budget P9: bytes sent to the front-end per single-session change, at 10 and 500
sessions (same, ≤ 2 KB).

A :class:`~pmux_widget.runtime.hub.Hub` (no sources) is filled with 10 or 500 sessions through real
hook signals (each session a few steps into a realistic turn), then a
:class:`~pmux_widget.notebook.widget.StatusWidget` is built in this process (no kernel: ipywidgets
gives it a ``DummyComm``). Its comm's ``send`` is wrapped to record every message that would
go to the browser (the ipywidgets envelope ``{"method": "custom", "content": …}`` as compact
JSON; the Jupyter message header around it is constant and not counted). One session then
gets one hook (a new tool; a permission request, which also notifies; a Stop, which notifies
too), the widget's coalescing flush runs on the hub loop, and the bytes of what it sent for
that change are summed. The widget's own ``bytes_sent`` counter is reported beside it.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import (
    Row,
    log,
    run_alone,
    session_cycle,
    session_start,
    temp_homes,
    wait_until,
)
from pmux_widget.core.signals import parse_hook
from pmux_widget.notebook.feed import MIN_PATCH_INTERVAL
from pmux_widget.notebook.widget import StatusWidget
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

__all__ = ["main"]

P9_MAX_BYTES = 2048
TARGET = 3  # the session that changes (present at both sizes, same history)
#: The changes measured, as indexes into the target's turn (see ``session_cycle``).
CHANGES = {"new tool (PreToolUse Bash)": 3, "permission (→ needs-input)": 4, "Stop (→ review)": 9}


def _sid(k: int) -> str:
    return str(uuid.UUID(int=(9 << 96) | (k * 2654435761)))


def _cwd(k: int) -> str:
    return f"/home/dev/projects/service-{k:03d}"


def _size(message: Any) -> int:
    return len(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode())


def _without_counts(message: Any) -> Any:
    """The message minus the patch's ``counts`` (the only part that depends on the fleet)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, dict) and "counts" in content:
        return {**message, "content": {k: v for k, v in content.items() if k != "counts"}}
    return message


def _measure(size: int) -> dict[str, Any]:
    """Bytes per change (name → (wire bytes, bytes_sent delta, messages)) at ``size``."""
    with temp_homes("p9") as homes:  # same path length at both sizes
        hub = Hub(home=homes.pmux.root, claude_home=homes.claude, port=0).start()
        try:

            def turn(k: int) -> list[dict[str, Any]]:
                sid, cwd = _sid(k), _cwd(k)
                return session_cycle(sid, cwd, str(homes.transcript_path(cwd, sid)), seed=k)

            def fill() -> None:
                for k in range(size):
                    sid, cwd = _sid(k), _cwd(k)
                    start = session_start(sid, cwd, str(homes.transcript_path(cwd, sid)))
                    steps = [start, *turn(k)[: 1 + (k % 7 if k != TARGET else 2)]]
                    for payload in steps:
                        hub.apply(parse_hook(payload, at=now_ms()))  # type: ignore[arg-type]

            hub.call(fill, timeout=120)
            widget = StatusWidget(hub)
            sent: list[Any] = []
            comm: Any = widget.comm
            original = comm.send

            def spy(data: Any = None, metadata: Any = None, buffers: Any = None) -> Any:
                sent.append(json.loads(json.dumps(data)))
                return original(data=data, metadata=metadata, buffers=buffers)

            comm.send = spy
            snapshot_bytes = len(json.dumps(widget.snapshot, separators=(",", ":")))
            time.sleep(MIN_PATCH_INTERVAL * 3)
            result: dict[str, Any] = {}
            target = turn(TARGET)
            for name, index in CHANGES.items():
                sent.clear()
                bytes_before, patches_before = widget.bytes_sent, widget.patches_sent
                signal = parse_hook(target[index], at=now_ms())
                hub.call(lambda signal=signal: hub.apply(signal))  # type: ignore[misc]
                wait_until(lambda p=patches_before: widget.patches_sent > p, 5, "the patch")
                time.sleep(MIN_PATCH_INTERVAL * 3)  # a notify message follows its patch
                wire = sum(_size(message) for message in sent)
                bare = sum(_size(_without_counts(message)) for message in sent)
                result[name] = (wire, widget.bytes_sent - bytes_before, len(sent), bare)
            result["_snapshot"] = snapshot_bytes
            result["_fleet"] = len(hub.fleet)
            widget.close()
        finally:
            hub.stop()
    return result


def main(quick: bool = False) -> list[Row]:
    """P9 at 10 and 500 sessions; returns the table rows."""
    sizes = (10, 500)
    results = {}
    for size in sizes:
        log(f"P9: widget with {size} sessions")
        results[size] = _measure(size)
    rows: list[Row] = []
    for size in sizes:
        res = results[size]
        per = {name: res[name] for name in CHANGES}
        worst = max(wire for wire, *_ in per.values())
        detail = ", ".join(
            f"{name.split(' (')[0]} {w} B/{m} msg" for name, (w, _, m, _) in per.items()
        )
        rows.append(
            (
                f"P9 bytes to the front-end per single-session change, {res['_fleet']} sessions",
                f"max {worst} B ({detail})",
                f"<= {P9_MAX_BYTES} B",
                worst <= P9_MAX_BYTES,
            )
        )
        counter = ", ".join(str(c) for _, c, *_ in per.values())
        rows.append(
            (
                f"P9 {size} sessions: widget bytes_sent per change; initial snapshot",
                f"{counter} B; {res['_snapshot']:,} B (sent once per view)",
                "info",
                True,
            )
        )
    small, big = results[sizes[0]], results[sizes[1]]
    diffs = [big[name][0] - small[name][0] for name in CHANGES]
    # A patch's "counts" (e.g. "idle":3 vs "idle":150) is the only part that may depend on
    # the fleet: without it the messages must be byte-for-byte the same size.
    bare = [big[name][3] - small[name][3] for name in CHANGES]
    rows.append(
        (
            "P9 same bytes at 10 and 500 sessions: difference per change (without counts)",
            ", ".join(f"{d:+d} B ({b:+d} B)" for d, b in zip(diffs, bare, strict=True)),
            "equal apart from the counts' digits",
            all(b == 0 for b in bare),
        )
    )
    return rows


if __name__ == "__main__":
    run_alone(main)
