"""The differences between CLI versions that matter to a monitor, each with the check that
finds its evidence in the recordings (:data:`DIFFERENCES`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devtools.record.timelines import Tls, Versions, dedup

# Each entry: (what is observed, the rule a monitor follows, check). A check reads the
# recordings of every version ({version: {scenario: timeline info}}) and returns the evidence
# (which versions, which scenario, what exactly), or None when no recording shows it.


def _hooks_of(info: dict[str, Any] | None, event: str) -> list[dict[str, Any]]:
    return [h for h in (info or {}).get("_hooks", []) if h.get("hook_event_name") == event]


def _where(by: Versions, pred: Callable[[str, Tls], str | None]) -> str | None:
    found = [(v, e) for v, tls in by.items() if (e := pred(v, tls))]
    if not found:
        return None
    absent = [v for v in by if v not in dict(found)]
    text = "; ".join(f"{v}: {e}" for v, e in found)
    return text + (f"; not on {', '.join(absent)}" if absent else "")


def _diff_background_agent(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("background_agent")
        stops = _hooks_of(info, "Stop")
        busy = [
            h
            for h in stops
            if any(t.get("status") == "running" for t in h.get("background_tasks") or [])
        ]
        if not busy:
            return None
        tasks = busy[0]["background_tasks"]
        pids = dedup([p.get("status") for p in (info or {}).get("_pid_files", []) if p])
        return (
            f"`background_agent`: Stop with background_tasks "
            f"{[(t.get('type'), t.get('status')) for t in tasks]}, PID statuses {pids}"
        )

    return _where(by, pred)


def _diff_task_notification(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        ups = [
            h
            for h in _hooks_of(tls.get("background_agent"), "UserPromptSubmit")
            if str(h.get("prompt", "")).startswith("<task-notification>")
        ]
        if not ups:
            return None
        return f"`background_agent`: UserPromptSubmit prompt {ups[0]['prompt'][:90]!r}…"

    return _where(by, pred)


def _diff_final_stop(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        stops = _hooks_of(tls.get("background_agent"), "Stop")
        if len(stops) < 2:
            return None
        last = stops[-1].get("background_tasks")
        return f"`background_agent`: last Stop's background_tasks = {last!r}"

    return _where(by, pred)


def _diff_background_shell(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("background_shell")
        stops = _hooks_of(info, "Stop")
        shells = [
            t for h in stops for t in h.get("background_tasks") or [] if t.get("type") == "shell"
        ]
        statuses = dedup([p.get("status") for p in (info or {}).get("_pid_files", []) if p])
        if not shells and "shell" not in statuses:
            return None
        return (
            f"`background_shell`: Stop background_tasks "
            f"{[(t.get('type'), t.get('status')) for t in shells]}, PID statuses {statuses}"
        )

    return _where(by, pred)


def _diff_subagent_stop_repeats(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        out = []
        for name in ("background_agent", "subagent"):
            ids = [h.get("agent_id") for h in _hooks_of(tls.get(name), "SubagentStop")]
            rep = {i: ids.count(i) for i in ids if ids.count(i) > 1}
            if rep:
                out.append(f"`{name}`: SubagentStop ×{max(rep.values())} for one agent_id")
        return ", ".join(out) or None

    return _where(by, pred)


def _diff_agent_needs_input(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("auto_blocked")
        if not info:
            return None
        notes = [h.get("notification_type") for h in _hooks_of(info, "Notification")]
        waits = dedup(
            [
                f"{p.get('status')}({p.get('waitingFor')})"
                for p in info.get("_pid_files", [])
                if p and p.get("waitingFor")
            ]
        )
        perm = len(_hooks_of(info, "PermissionRequest"))
        return (
            f"`auto_blocked`: Notifications {notes}, PID waits {waits}, PermissionRequest ×{perm}"
        )

    return _where(by, pred)


def _diff_no_first(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        notes = [n for n in (tls.get("auto_blocked") or {}).get("notes", []) if "options" in n]
        return f"`auto_blocked`: {notes[0]}" if notes else None

    return _where(by, pred)


def _diff_auto_safe(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("auto_safe")
        if not info:
            return None
        hooks = [h.get("hook_event_name") for h in info.get("_hooks", [])]
        modes = sorted(
            {
                str(h.get("permission_mode"))
                for h in info.get("_hooks", [])
                if "permission_mode" in h
            }
        )
        return f"`auto_safe`: hooks {hooks}, permission_mode {modes}"

    return _where(by, pred)


def _diff_api_error(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        out = []
        for name in sorted(n for n in tls if n.startswith("error_")):
            info = tls[name]
            ends = [
                h.get("hook_event_name")
                for h in info.get("_hooks", [])
                if h.get("hook_event_name") in ("Stop", "StopFailure")
            ]
            api = any(e["key"].endswith(":api_error") for e in info["timeline"])
            out.append(
                f"`{name}` → {'/'.join(ends) or 'no end hook'}"
                + (" + isApiErrorMessage record" if api else "")
            )
        return ", ".join(out) or None

    return _where(by, pred)


def _diff_pid_fields(by: Versions) -> str | None:
    keys = {
        v: sorted({k for info in tls.values() for p in info.get("_pid_files", []) if p for k in p})
        for v, tls in by.items()
    }
    if len(keys) < 2:
        return None
    versions = list(keys)
    added = sorted(set(keys[versions[-1]]) - set(keys[versions[0]]))
    removed = sorted(set(keys[versions[0]]) - set(keys[versions[-1]]))
    statuses = {
        v: sorted(
            {
                str(p.get("status"))
                for info in tls.values()
                for p in info.get("_pid_files", [])
                if p and "status" in p
            }
        )
        for v, tls in by.items()
    }
    return (
        f"{versions[-1]} adds {added}"
        + (f", drops {removed}" if removed else "")
        + "; statuses seen: "
        + "; ".join(f"{v}: {st}" for v, st in statuses.items())
    )


def _diff_hook_events(by: Versions) -> str | None:
    events = {
        v: sorted(
            {str(h.get("hook_event_name")) for info in tls.values() for h in info.get("_hooks", [])}
        )
        for v, tls in by.items()
    }
    if len(events) < 2:
        return None
    versions = list(events)
    new = sorted(set(events[versions[-1]]) - set(events[versions[0]]))
    gone = sorted(set(events[versions[0]]) - set(events[versions[-1]]))
    notes = {
        v: sorted(
            {
                str(h.get("notification_type"))
                for info in tls.values()
                for h in _hooks_of(info, "Notification")
            }
        )
        for v, tls in by.items()
    }
    return (
        f"events only on {versions[-1]}: {new or 'none'}; only on {versions[0]}: {gone or 'none'}; "
        "notification types: " + "; ".join(f"{v}: {n}" for v, n in notes.items())
    )


def _diff_startup_dialog(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("startup_dialog")
        if not info:
            return None
        waits = dedup(
            [f"{p.get('status')}({p.get('waitingFor')})" for p in info.get("_pid_files", []) if p]
        )
        return f"`startup_dialog`: PID {waits}"

    return _where(by, pred)


def _diff_sessions(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        out = []
        for name in ("clear", "resume", "fork"):
            info = tls.get(name)
            if not info:
                continue
            starts = [
                f"{h.get('hook_event_name')}({h.get('source') or h.get('reason')})"
                for h in info.get("_hooks", [])
                if h.get("hook_event_name") in ("SessionStart", "SessionEnd")
            ]
            sids = dedup([str(h.get("session_id"))[:8] for h in info.get("_hooks", [])])
            waits = dedup(
                [
                    str(p.get("waitingFor"))
                    for p in info.get("_pid_files", [])
                    if p and p.get("waitingFor")
                ]
            )
            out.append(
                f"`{name}`: {' → '.join(starts)}, session ids {sids}"
                + (f", PID waits {waits}" if waits else "")
            )
        return "; ".join(out) or None

    return _where(by, pred)


def _diff_queued_prompt(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("prompt_while_busy")
        if not info:
            return None
        names = [str(h.get("hook_event_name")) for h in info.get("_hooks", [])]
        keep = ("UserPromptSubmit", "PostToolUse", "Stop")
        return "`prompt_while_busy`: " + " → ".join(n for n in names if n in keep)

    return _where(by, pred)


DIFFERENCES: list[tuple[str, str, Callable[[Versions], str | None]]] = [
    (
        "`Stop` whose `background_tasks` holds a running `subagent`; the PID file stays `busy`",
        "still busy: no review, no notification; show the answer so far and the running agents",
        _diff_background_agent,
    ),
    (
        "`UserPromptSubmit` whose prompt is a `<task-notification>` block (the CLI wakes itself)",
        "busy, not a user prompt (`last_prompt` keeps the user's); a background task finished",
        _diff_task_notification,
    ),
    (
        "the last `Stop` after the background agent ended",
        "`background_tasks` empty (or only shells): review, notify once",
        _diff_final_stop,
    ),
    (
        '`Stop` with a running `shell` task; PID `status: "shell"`',
        "review as usual, plus the running shells (a dev server may run for hours)",
        _diff_background_shell,
    ),
    (
        "`SubagentStop` repeated for one `agent_id`",
        "count sub-agents by id, never by SubagentStop events",
        _diff_subagent_stop_repeats,
    ),
    (
        "auto mode's \"can't check\" dialog and its permission dialog",
        "needs-input from the PID file's `waiting` (`dialog open` / `permission prompt`) and "
        "Notification `agent_needs_input`: no PermissionRequest comes for these dialogs",
        _diff_agent_needs_input,
    ),
    (
        "the order of a permission dialog's options",
        "actions choose by label, never by position or a bare Enter",
        _diff_no_first,
    ),
    (
        "auto mode runs a call it deems safe without a dialog",
        "nothing new: busy → review; `permission_mode` in payloads is informative only",
        _diff_auto_safe,
    ),
    (
        "how an API error ends the turn",
        "`StopFailure`, or a `Stop` whose turn ended in an `isApiErrorMessage` record: review "
        "with the error",
        _diff_api_error,
    ),
    (
        "the startup dialog (2.1.332 in manual mode, auto-mode nudge not seen)",
        "needs-input from the PID file (`waiting`, `dialog open`) even before any hook of a turn",
        _diff_startup_dialog,
    ),
    (
        "`/clear`, `/resume`, a fork: session ids and SessionStart/SessionEnd sources",
        "a new session id in the same process replaces the old row (`clear`/`resume`); a fork "
        "is a new session; the /resume picker is a dialog (PID `waiting`, `dialog open`)",
        _diff_sessions,
    ),
    (
        "a prompt typed while a tool runs (queued)",
        "a UserPromptSubmit inside a busy turn keeps it busy; the turn's one Stop ends both",
        _diff_queued_prompt,
    ),
    (
        "PID-file fields and statuses",
        "unknown fields are ignored safely; `shell` means the turn ended with shells still "
        "running (see the shell row)",
        _diff_pid_fields,
    ),
    (
        "hook events and notification types",
        "unknown events and notification types are ignored safely",
        _diff_hook_events,
    ),
]


def render_differences(by: Versions) -> list[str]:
    """The "differences that matter to a monitor" table: observed → evidence → rule."""
    lines = [
        "## Differences that matter to a monitor",
        "",
        "Computed from the recordings below (" + ", ".join(by) + "). *not recorded* = no "
        "recording shows it (re-record, or the scenario does not exist on that version).",
        "",
        "| Observed | Evidence (recorded) | Rule we follow |",
        "|---|---|---|",
    ]
    for observed, rule, check in DIFFERENCES:
        try:
            evidence = check(by)
        except Exception as exc:  # a malformed recording must not hide the rest
            evidence = f"check failed: {exc!r}"
        cell = (evidence or "*not recorded*").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {observed} | {cell} | {rule} |")
    return [*lines, ""]
