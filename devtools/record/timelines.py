"""Reading the fixtures back: each scenario's timeline info, with its hook payloads and PID
files (:data:`Tls`, per version :data:`Versions`), and the lookups the checks and the doc share."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from devtools.record.scenarios import SCENARIOS
from pmux_widget.demo.claude_env import read_jsonl

Tls = dict[str, dict[str, Any]]


def tl_of(tls: Tls, name: str) -> list[dict[str, Any]]:
    return tls.get(name, {}).get("timeline", [])


def after_action(tls: Tls, name: str, text: str) -> list[dict[str, Any]]:
    """Events after the first action containing ``text``, up to the next action."""
    tl = tl_of(tls, name)
    act = first_event(tl, "action", pred=lambda e: text in e["what"])
    if act is None:
        return []
    out = []
    for e in tl[tl.index(act) + 1 :]:
        if e["source"] == "action":
            break
        out.append(e)
    return out


def gap_ms(tls: Tls, name: str, a: str, b: str, after: str) -> int | None:
    """ms from the first ``a`` to the first later ``b`` (keys, or ``action``) after an action.

    ``a == "action"`` measures from the action itself.
    """
    tl = tl_of(tls, name)
    act = first_event(tl, "action", pred=lambda e: after in e["what"])
    if act is None:
        return None
    evs = [act, *after_action(tls, name, after)]
    ea = act if a == "action" else next((e for e in evs if e["key"] == a), None)
    if ea is None:
        return None
    rest = tl[tl.index(ea) + 1 :] if ea in tl else evs  # ``b`` may come after the next action
    eb = next((e for e in rest if e["key"] == b), None)
    return eb["ms"] - ea["ms"] if eb else None


def load_timelines(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for name in SCENARIOS:
        f = out / name / "timeline.json"
        if f.exists():
            info = json.loads(f.read_text())
            info["_hooks"] = [h for h in read_jsonl(out / name / "hooks.jsonl") if h]
            info["_pid_files"] = read_jsonl(out / name / "pid-files.jsonl")
            found[name] = info
    return found


def first_event(
    tl: list[dict[str, Any]],
    key: str,
    after: int = -(10**9),
    pred: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any] | None:
    for e in tl:
        if e["ms"] >= after and e["key"] == key and (pred is None or pred(e)):
            return e
    return None


def dedup(seq: list[str]) -> list[str]:
    out: list[str] = []
    for x in seq:
        if not out or out[-1] != x:
            out.append(x)
    return out


Versions = dict[str, Tls]
