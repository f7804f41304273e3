"""Writing the document: docs/claude-code-behaviour.md from the fixtures of every version
(:func:`render_doc`)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from devtools.background_acting_notes import ACTING_ON_BACKGROUND
from devtools.background_notes import BACKGROUND_SESSIONS
from devtools.question_notes import QUESTIONS_AND_PLANS
from devtools.record.contradictions import CONTRADICTIONS, SEEN_IN_E2E
from devtools.record.differences import render_differences
from devtools.record.observer import PLACEHOLDER_PID
from devtools.record.timelines import Tls, dedup, first_event, gap_ms, load_timelines, tl_of
from pmux_widget.demo.claude_env import (
    version_key,
)

_META_TYPES = {
    "transcript:mode",
    "transcript:permission-mode",
    "transcript:file-history-snapshot",
    "transcript:attachment",
    "transcript:queue-operation",
    "transcript:last-prompt",
    "transcript:ai-title",
    "transcript:custom-title",
    "transcript:sub:attachment",
}


def _cell(items: list[str]) -> str:
    return " → ".join(items).replace("|", "\\|") or "—"


def summary_row(info: dict[str, Any]) -> tuple[str, str, str, str]:
    """(hooks, PID statuses, transcript records, model requests) of one scenario."""
    tl = info["timeline"]
    hooks = [e["what"] for e in tl if e["source"] == "hook"]
    pid = dedup([e["what"].removeprefix("status=") for e in tl if e["source"] == "pid"])
    tr = dedup(
        [
            e["key"].removeprefix("transcript:")
            for e in tl
            if e["source"] == "transcript" and e["key"] not in _META_TYPES
        ]
    )
    reqs = [
        e["key"].removeprefix("request:")
        for e in tl
        if e["source"] == "request" and e["key"] != "request:/:404"
    ]
    return _cell(hooks), _cell(pid), _cell(tr), _cell(_dedup_count(reqs))


def _dedup_count(seq: list[str]) -> list[str]:
    out: list[list[Any]] = []
    for x in seq:
        if out and out[-1][0] == x:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return [f"{x} ×{n}" if n > 1 else x for x, n in out]


MEASUREMENTS: list[tuple[str, str, str, str, str]] = [
    # (scenario, after action containing, from key, to key, label)
    (
        "approve",
        "please run",
        "hook:PermissionRequest",
        "pid:waiting",
        "PermissionRequest hook → PID `waiting`",
    ),
    (
        "approve",
        "please run",
        "hook:PermissionRequest",
        "transcript:assistant",
        "PermissionRequest hook → the tool_use record in the transcript",
    ),
    ("approve", "1. Yes", "action", "pid:busy", "approval keystroke → PID `busy`"),
    ("approve", "1. Yes", "action", "hook:PostToolUse", "approval keystroke → PostToolUse"),
    ("approve", "1. Yes", "hook:Stop", "pid:idle", "Stop hook → PID `idle`"),
    ("long_command", "1. Yes", "action", "pid:busy", "approval keystroke → PID `busy`"),
    (
        "long_command",
        "1. Yes",
        "action",
        "hook:PostToolUse",
        "approval keystroke → PostToolUse (8 s command)",
    ),
    (
        "approve_after_notification",
        "please run",
        "hook:PermissionRequest",
        "hook:Notification",
        "PermissionRequest → Notification(permission_prompt)",
    ),
    ("esc_stream", "Esc", "action", "pid:idle", "Esc → PID `idle`"),
    ("esc_stream", "Esc", "pid:idle", "transcript:marker", "PID `idle` → interrupt marker seen"),
    ("esc_dialog", "Esc", "action", "pid:idle", "Esc → PID `idle`"),
    ("esc_dialog", "Esc", "pid:idle", "transcript:marker", "PID `idle` → interrupt marker seen"),
    ("deny", "No", "action", "pid:idle", '"No" → PID `idle`'),
    ("deny", "No", "pid:idle", "transcript:marker", "PID `idle` → interrupt marker seen"),
    ("esc_during_tool", "Esc", "action", "pid:idle", "Esc → PID `idle`"),
    (
        "esc_during_tool",
        "Esc",
        "pid:idle",
        "transcript:marker",
        "PID `idle` → interrupt marker seen",
    ),
    (
        "plain",
        "say hi",
        "hook:Stop",
        "transcript:assistant",
        "Stop hook → assistant record seen (negative: seen before Stop)",
    ),
    (
        "clear",
        "/clear",
        "hook:SessionEnd",
        "hook:SessionStart",
        "SessionEnd(clear) → SessionStart(clear)",
    ),
    ("start_exit", "/exit", "pid:removed", "hook:SessionEnd", "PID file removed → SessionEnd"),
]


def measurements(tls: Tls) -> list[tuple[str, str]]:
    """Timings computed from the recordings: (what, measured value)."""
    rows: list[tuple[str, str]] = []
    for name, after, a, b, label in MEASUREMENTS:
        if name not in tls:
            continue
        g = gap_ms(tls, name, a, b, after)
        rows.append((f"`{name}`: {label}", f"{g:+d} ms" if g is not None else "not seen"))
    for name in ("error_429", "error_529", "error_500", "error_500_retried"):
        t = tl_of(tls, name)
        errs = [e for e in t if e["source"] == "request" and e["key"].startswith("request:scen")]
        stop = first_event(t, "hook:StopFailure")
        if errs:
            span = errs[-1]["ms"] - errs[0]["ms"]
            gaps = [b["ms"] - a["ms"] for a, b in itertools.pairwise(errs)]
            fail = f"; StopFailure {stop['ms'] - errs[0]['ms']} ms after the first" if stop else ""
            more = f" (gaps {', '.join(str(g) for g in gaps)} ms)" if gaps else ""
            rows.append((f"`{name}`: attempts", f"{len(errs)} over {span} ms{more}{fail}"))
    return rows


def version_dirs(out: Path) -> list[Path]:
    """The per-version fixture folders under ``out`` (``<out>/<x.y.z>/``), oldest first."""
    if not out.is_dir():
        return []
    found = [d for d in out.iterdir() if d.is_dir() and re.fullmatch(r"\d+\.\d+\.\d+", d.name)]
    return sorted(found, key=lambda d: version_key(d.name))


def render_doc(out: Path) -> str:
    """The markdown of docs/claude-code-behaviour.md, from the fixtures under ``out``
    (``<out>/<version>/<scenario>/``): the differences between versions that matter to a
    monitor, then a section per version."""
    by_version = {d.name: load_timelines(d) for d in version_dirs(out)}
    lines = [
        "# What the real Claude Code CLI does, per user action",
        "",
        "<!-- GENERATED by `python -m devtools.record --doc …`: do not edit by"
        " hand; edit DIFFERENCES / CONTRADICTIONS / SCENARIOS in devtools/record/. -->",
        "",
        "Claude Code ("
        + ", ".join(f"**{v}**" for v in by_version)
        + ", `@anthropic-ai/claude-code`), run interactively in tmux (print mode for `print`) "
        "against the scripted model (`pmux_widget.demo.scripted_model`). Every row below was "
        "observed, not inferred: hooks by a recorder hook registered for all events (receive "
        "time = when the hook process started), PID files and transcripts by polling every "
        "20 ms (time = when the change was seen), model requests by the server. Runs use manual "
        "permission mode (2.1.332: settings `permissions.defaultMode: default`) unless the "
        "scenario says auto mode.",
        "",
        "Refresh (re-records the scenarios with the real CLI, a few minutes per version):",
        "",
        "```sh",
        ".venv/bin/python -m devtools.record --version all --out tests/fixtures/real \\",
        "    --doc docs/claude-code-behaviour.md     # or --version X.Y.Z, or name scenarios",
        ".venv/bin/python -m devtools.record --doc-only \\",
        "    --out tests/fixtures/real --doc docs/claude-code-behaviour.md   # doc only",
        "```",
        "",
        "Fixtures: `tests/fixtures/real/<version>/<scenario>/` holds `hooks.jsonl` (payloads as "
        "Claude wrote them), `pid-files.jsonl` (each distinct PID-file content; `null` = "
        "removed), `transcripts/` (final transcript files), `requests.jsonl` and "
        "`timeline.json`. Temp paths are replaced by `/home/dev` (HOME), `/home/dev/.claude` "
        "(CLAUDE_CONFIG_DIR), `/home/dev/project` (cwd); the CLI pid by "
        f"`{PLACEHOLDER_PID}`.",
        "",
    ]
    lines += render_differences(by_version)
    lines += BACKGROUND_SESSIONS
    lines += ACTING_ON_BACKGROUND
    lines += QUESTIONS_AND_PLANS
    for version, tls in by_version.items():
        lines += _render_version(version, tls)
    return "\n".join(lines)


def _render_version(version: str, tls: Tls) -> list[str]:
    recorded = sorted({i["recorded_at"][:10] for i in tls.values()})
    lines = [
        f"## Claude Code {version}",
        "",
        f"Recorded on {', '.join(recorded)}.",
        "",
        "### Summary",
        "",
        "| Scenario | Hooks, in order | PID-file `status` | Transcript records (metadata "
        "records omitted) | Model requests |",
        "|---|---|---|---|---|",
    ]
    for name, info in tls.items():
        h, p, t, q = summary_row(info)
        flag = " **(recording failed)**" if info.get("error") else ""
        lines.append(f"| `{name}`: {info['description']}{flag} | {h} | {p} | {t} | {q} |")
    lines += ["", "### Measured timings", "", "| What | Measured |", "|---|---|"]
    for what, val in measurements(tls):
        lines.append(f"| {what} | {val} |")
    lines += [
        "",
        "### Hook payload fields (all recordings)",
        "",
        "Keys in every payload of the event; *italic* = only in some payloads.",
        "",
        "| Event | Fields |",
        "|---|---|",
    ]
    by_event: dict[str, list[dict[str, Any]]] = {}
    for info in tls.values():
        for h in info.get("_hooks", []):
            by_event.setdefault(str(h.get("hook_event_name")), []).append(h)
    for event in sorted(by_event):
        payloads = by_event[event]
        keys = sorted({k for h in payloads for k in h})
        cells = [k if all(k in h for h in payloads) else f"*{k}*" for k in keys]
        lines.append(f"| {event} ({len(payloads)}) | {', '.join(cells)} |")
    lines += ["", "### Contradictions with DESIGN.md and the facts file", ""]
    for title, body, check in CONTRADICTIONS:
        evidence = check(tls)
        status = evidence if evidence else "*(not reproduced in this recording: re-check)*"
        lines += [f"- **{title}** {body} Evidence: {status}", ""]
    lines += ["#### Also seen in the end-to-end tests", ""]
    lines += [f"- **{title}** {body}" for title, body in SEEN_IN_E2E]
    lines += [""]
    lines += [
        "### Timelines",
        "",
        "ms since the scenario started; `action` = keystroke sent by the driver.",
        "",
    ]
    for name, info in tls.items():
        lines += [f"#### `{name}` ({version})", "", info["description"], ""]
        if info.get("error"):
            lines += [f"Recording failed: `{info['error'].splitlines()[0]}`", ""]
        for note in info.get("notes", []):
            if not note.startswith("screen at failure"):
                lines += [f"Note: {note}", ""]
        if info.get("leftover_pid_files"):
            lines += [
                "PID files left behind after the run: "
                + ", ".join(f"`{x}`" for x in info["leftover_pid_files"]),
                "",
            ]
        lines += ["| ms | source | event |", "|---:|---|---|"]
        for e in info["timeline"]:
            if e["key"] in _META_TYPES:
                continue
            what = e["what"].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {e['ms']} | {e['source']} | {what} |")
        lines.append("")
    return lines
