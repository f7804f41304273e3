"""What the fixtures contradict: behaviours a monitor could wrongly assume, each with the
check that finds its evidence in the recordings (:data:`CONTRADICTIONS`)."""

from __future__ import annotations

from collections.abc import Callable

from devtools.record.timelines import Tls, after_action, dedup, first_event, gap_ms, tl_of

# Each entry: (title, explanation, check). A check reads the recordings ({scenario: timeline
# info, with "_hooks" = the payloads}) and returns the evidence, or None when this recording
# does not show the behaviour any more (the doc then says so, so a new CLI version is noticed).


def _chk_marker_after_pid_idle(tls: Tls) -> str | None:
    found = []
    for name, act in (
        ("esc_stream", "Esc"),
        ("esc_dialog", "Esc"),
        ("deny", "No"),
        ("esc_during_tool", "Esc"),
    ):
        g = gap_ms(tls, name, "pid:idle", "transcript:marker", act)
        if g is not None and g > 0:
            found.append(f"`{name}` marker {g} ms after PID `idle`")
    return "; ".join(found) or None


def _chk_no_hook_after(name: str, action: str) -> Callable[[Tls], str | None]:
    def check(tls: Tls) -> str | None:
        evs = after_action(tls, name, action)
        if not evs:
            return None
        hooks = [e["what"] for e in evs if e["source"] == "hook"]
        pid = dedup([e["key"].removeprefix("pid:") for e in evs if e["source"] == "pid"])
        marker = any(e["key"] == "transcript:marker" for e in evs)
        if hooks or not marker:
            return None
        return f"`{name}`: no hook after the keystroke; PID {' → '.join(pid)}; marker written"

    return check


def _chk_pid_busy_without_turn(tls: Tls) -> str | None:
    found = []
    for name, act in (("clear", "/clear"), ("compact", "/compact")):
        evs = after_action(tls, name, act)
        pid = dedup([e["key"].removeprefix("pid:") for e in evs if e["source"] == "pid"])
        hooks = [e["what"] for e in evs if e["source"] == "hook"]
        upto = [h for h in hooks if not h.startswith(("UserPromptSubmit", "Stop"))]
        if "busy" in pid and "Stop" not in " ".join(upto):
            found.append(f"`{name}`: PID {' → '.join(pid[:3])} with hooks {', '.join(upto[:4])}")
    return "; ".join(found) or None


def _chk_compact(tls: Tls) -> str | None:
    evs = after_action(tls, "compact", "/compact")
    hooks = [e["what"] for e in evs if e["source"] == "hook"]
    if not any(h.startswith("SubagentStop") for h in hooks):
        return None
    seq = [
        e["what"] if e["source"] == "hook" else e["key"].removeprefix("transcript:")
        for e in evs
        if e["source"] == "hook"
        or e["key"] in ("transcript:system:compact_boundary", "transcript:user")
    ]
    return "`compact`: " + " → ".join(dedup(seq)[:8])


def _chk_529(tls: Tls) -> str | None:
    evs = tl_of(tls, "error_529")
    sf = next((e for e in evs if e["key"] == "hook:StopFailure"), None)
    n = sum(1 for e in evs if e["key"].startswith("request:scenario:529"))
    if not sf or "overloaded" in sf["what"]:
        return None
    return f"`error_529`: {n} attempts, then {sf['what']}"


def _chk_esc_tool_no_failure_hook(tls: Tls) -> str | None:
    evs = after_action(tls, "esc_during_tool", "Esc")
    if not evs or any(e["source"] == "hook" for e in evs):
        return None
    res = next((e["what"] for e in evs if "tool_result" in e["what"]), "?")
    return f"`esc_during_tool`: no hook; transcript {res!r}"


def _chk_partial_block_kept(tls: Tls) -> str | None:
    evs = after_action(tls, "esc_stream", "Esc")
    rec = next((e["what"] for e in evs if e["key"] == "transcript:assistant"), None)
    return f"`esc_stream`: {rec}" if rec and "id=uuid" in rec else None


def _chk_queued_prompt(tls: Tls) -> str | None:
    hooks = [h.get("hook_event_name") for h in tls.get("prompt_while_busy", {}).get("_hooks", [])]
    if not hooks or hooks.count("UserPromptSubmit") != 1:
        return None
    return (
        f"`prompt_while_busy`: hooks {', '.join(hooks)} (one UserPromptSubmit, one Stop "
        "for two prompts)"
    )


def _chk_status_before_start(tls: Tls) -> str | None:
    for name, info in tls.items():
        for p in info.get("_pid_files", []):
            if p and "statusUpdatedAt" in p and p["statusUpdatedAt"] < p["startedAt"]:
                return (
                    f"`{name}`: first status `{p['status']}` has statusUpdatedAt "
                    f"{p['statusUpdatedAt'] - p['startedAt']} ms relative to startedAt"
                )
    return None


def _chk_fields(
    event: str, present: tuple[str, ...] = (), absent: tuple[str, ...] = ()
) -> Callable[[Tls], str | None]:
    def check(tls: Tls) -> str | None:
        seen = [
            h
            for info in tls.values()
            for h in info.get("_hooks", [])
            if h.get("hook_event_name") == event
        ]
        if not seen:
            return None
        bad_p = [k for k in present if all(k in h for h in seen)]
        bad_a = [k for k in absent if all(k not in h for h in seen)]
        if len(bad_p) != len(present) or len(bad_a) != len(absent):
            return None
        bits = [f"`{k}` always present" for k in bad_p] + [f"`{k}` never present" for k in bad_a]
        return f"{len(seen)} {event} payloads: " + ", ".join(bits)

    return check


def _chk_stop_before_records(tls: Tls) -> str | None:
    late, total, worst = 0, 0, 0
    for info in tls.values():
        tl = info["timeline"]
        for i, e in enumerate(tl):
            if e["key"] != "hook:Stop":
                continue
            total += 1
            for later in tl[i + 1 :]:
                if later["source"] == "action" or later["key"] == "hook:UserPromptSubmit":
                    break
                if later["key"] == "transcript:assistant":
                    late += 1
                    worst = max(worst, later["ms"] - e["ms"])
                    break
    if not late:
        return None
    return (
        f"in {late} of {total} recorded turns the final assistant record was seen after "
        f"the Stop hook (up to {worst} ms later)"
    )


def _chk_error_record_order(tls: Tls) -> str | None:
    user_after, hook_first = [], []
    for name in ("error_429", "error_529", "error_500", "error_500_retried"):
        tl = tl_of(tls, name)
        keys = [e["key"] for e in tl if e["source"] == "transcript"]
        if "transcript:assistant:api_error" in keys:
            i = keys.index("transcript:assistant:api_error")
            if "transcript:user" in keys[i:]:
                user_after.append(f"`{name}`")
        sf = first_event(tl, "hook:StopFailure")
        rec = first_event(tl, "transcript:assistant:api_error")
        if sf and rec and rec["ms"] > sf["ms"]:
            hook_first.append(f"`{name}` {rec['ms'] - sf['ms']} ms")
    if not user_after:
        return None
    return (
        "prompt record appended after the API-error record in "
        + ", ".join(user_after)
        + "; StopFailure ahead of the API-error record in "
        + (", ".join(hook_first) or "none")
    )


def _chk_kill9(tls: Tls) -> str | None:
    info = tls.get("kill9")
    if not info or not info.get("leftover_pid_files"):
        return None
    hooks = [h.get("hook_event_name") for h in info.get("_hooks", [])]
    if "SessionEnd" in hooks:
        return None
    return (
        f"`kill9`: left {info['leftover_pid_files']} (last status "
        f"`{(info['_pid_files'][-1] or {}).get('status')}`), no SessionEnd"
    )


#: Intermittent behaviours the recorder's single runs cannot show, each seen in the real-CLI
#: end-to-end suite (tests/real_claude/) and kept as evidence where named.
SEEN_IN_E2E: list[tuple[str, str]] = [
    (
        "A session's first turn can be written before its prompt.",
        "About 1 run in 4 the assistant text and tool_use records of the first turn precede the "
        "user prompt record in the file (the prompt's timestamp is older). Evidence: "
        "`tests/fixtures/transcripts/out_of_order_first_turn.jsonl` (captured from "
        "`test_zero_install_permission_and_escape`); the tailer keeps the pending tool "
        "(`test_first_turn_written_before_its_prompt_keeps_the_pending_tool`).",
    ),
    (
        "A fast turn may leave no PID-file status at all.",
        "About 1 first turn in 10 the PID file kept its start-up `idle` through the whole turn "
        "(sampled every 10-20 ms), and a `busy` of 100-300 ms can be rewritten before a file "
        "watcher reads it. Without hooks, the transcript's finished answer decides review "
        "(`test_zero_install_permission_and_escape` records which path each run took in "
        "test-output/real_claude_timings.json).",
    ),
    (
        "After `/clear` the PID file names the new session id while `busy`.",
        "The new id appears in the PID file tens of ms before SessionStart(clear); "
        "`test_clear_starts_a_new_session` checks the new session never flashes busy.",
    ),
    (
        "Esc before the first token leaves no trace but the PID file.",
        "On both versions, Esc while the model has sent nothing yet puts the prompt back in "
        "the prompt box, fires no hook and writes no marker (the transcript ends with the "
        "prompt); only the PID file turns `idle`, 0.4-1.2 s after the key. A hooked session "
        "would stay busy for good: a hooked busy session whose PID file says idle after its "
        "last decision, once hooks had a second to land, goes idle "
        "(`test_escape_before_the_first_token`, the `slow_start` scenario).",
    ),
    (
        "2.1.332 ignores keys for a moment after it draws a dialog.",
        "An Enter sent as soon as the permission dialog was first captured was dropped 4 "
        "times in 4; 100 ms later, 2 in 4; from 200 ms on, never (12 tries); 2.1.197 took it "
        "at once every time. Actions give a dialog that asks since less than a second 300 ms "
        "before their first key, and press Enter once more only if the same dialog, selection "
        "unmoved, still shows a second later (`runtime/actions.py`, `DIALOG_INPUT_GRACE_S`).",
    ),
]

CONTRADICTIONS: list[tuple[str, str, Callable[[Tls], str | None]]] = [
    (
        "The PID file says `idle` before the interrupt marker reaches the transcript.",
        'DESIGN (PID-file rules) decides "idle after busy → review, unless the transcript '
        'ends with an interrupt marker (→ idle)" and "for `idle`: → idle (dismissed with '
        'Esc …)". After Esc or a rejection the PID file turns `idle` tens to hundreds of ms '
        "*before* the transcript flush (100 ms timer) writes the marker, so a monitor that "
        "looks at the transcript the moment the PID file changes sees no marker yet and would "
        "call an interrupt `review`. Wait for the next transcript flush (≥ 250 ms) before "
        "deciding, or let a later marker turn review → idle.",
        _chk_marker_after_pid_idle,
    ),
    (
        'Choosing "No" in a permission dialog fires no hook at all (like Esc).',
        "DESIGN only names Esc as the hook-less way out of a dialog, and facts §2.7 expects at "
        'most a PostToolUseFailure. Option "3. No" fires no PostToolUseFailure, no '
        "PermissionDenied, no Stop; the transcript gets the rejection tool_result and the "
        "`[Request interrupted by user for tool use]` marker; PID `waiting` → `idle`.",
        _chk_no_hook_after("deny", "No"),
    ),
    (
        "Esc while an approved tool runs fires no PostToolUseFailure.",
        'Facts §2.7: "At most a PostToolUseFailure with is_interrupt: true arrives"; facts '
        "§5.8 expects a cancelled shell to leave \"The user doesn't want to take this action "
        'right now…" or an "Exit code … interrupted" result. Observed for an 8 s Bash '
        "command interrupted after 1 s: no hook at all, PID `busy` → `idle`, and the "
        "tool_result is the *rejection* text plus the `…for tool use]` marker.",
        _chk_esc_tool_no_failure_hook,
    ),
    (
        "Esc during streaming keeps the partial text block.",
        'Facts §5.8: "Blocks already completed are in the file; the partial block is not." '
        "Observed: the partial text is written as a synthetic assistant record (`message.id` a "
        "UUID, `output_tokens` 0, stop_reason `stop_sequence`) right before the marker "
        "(as real-claude-offline.md says).",
        _chk_partial_block_kept,
    ),
    (
        "`/clear` and `/compact` turn the PID file `busy` → `idle` without any turn.",
        'DESIGN\'s PID rule for hook-less sessions ("idle after busy → review") would '
        "report `review` after every /clear (the PID file is busy while the old session ends "
        "and the new id is set) and every /compact. No UserPromptSubmit/Stop brackets these; "
        "with hooks, SessionStart(clear)/PostCompact arrive instead.",
        _chk_pid_busy_without_turn,
    ),
    (
        "Compaction fires SubagentStop without SubagentStart, and the hooks come before the "
        "boundary records.",
        "DESIGN counts `subagents` ±1 on SubagentStart/SubagentStop: compaction sends an "
        "unmatched SubagentStop (empty `agent_type`, `last_assistant_message` = the summary, an "
        "`agent_transcript_path` that is never written), so a running real sub-agent would be "
        "undercounted. Facts §5.9 lists boundary + summary records before "
        "SessionStart(compact) and PostCompact; in the file they appear after both hooks.",
        _chk_compact,
    ),
    (
        "Repeated 529 ends as StopFailure `error: server_error`, not `overloaded`.",
        'DESIGN\'s example errors "(rate_limit, overloaded, …)" and facts §2.7 list '
        "`overloaded`; with the default (Opus) model the CLI gives up after 3 consecutive "
        '529s ("Repeated 529 Overloaded errors") and reports `server_error`. It retries 529 '
        "even with `x-should-retry: false`.",
        _chk_529,
    ),
    (
        "A prompt typed while a tool runs fires no UserPromptSubmit.",
        "DESIGN: UserPromptSubmit sets the last user prompt. A prompt typed while the turn "
        "runs is queued (`queue-operation` enqueue), then handed to the model inside the same "
        "turn as a `queued_command` attachment: no UserPromptSubmit, a single Stop for both.",
        _chk_queued_prompt,
    ),
    (
        "The first PID-file status is stamped before `startedAt`.",
        "DESIGN orders signals by `statusUpdatedAt`. The initial `idle` carries a "
        "`statusUpdatedAt` up to a few hundred ms *earlier* than the file's own `startedAt` (and "
        "before the SessionStart hook), and the very first write has no `status` at all.",
        _chk_status_before_start,
    ),
    (
        "Hazard: the Stop hook can arrive before the turn's records are in the transcript.",
        "Not a contradiction (facts §5.2: 100 ms flush timer), but DESIGN's Stop handling "
        '("last assistant message", tokens) must not assume the transcript already holds '
        "the answer: use the Stop payload's `last_assistant_message` and let the tailer catch "
        "up. A kill -9 within ~100 ms of Stop can lose the turn's records entirely.",
        _chk_stop_before_records,
    ),
    (
        "Hazard: after an API error the transcript can end with the user prompt.",
        "Restart recovery (DESIGN step 4) and facts §5.11 read the last record: after a "
        "StopFailure the prompt's `user` record may be appended *after* the synthetic "
        'API-error assistant record, so the file looks like "prompt submitted, never '
        'answered". Look for an `isApiErrorMessage` record in the last turn, not only at '
        "the end.",
        _chk_error_record_order,
    ),
    (
        "kill -9 leaves the PID file behind with its last status (as facts §3 says).",
        'Consistent with facts §3; listed because DESIGN\'s "process gone" needs the pid '
        "check (the file alone still says `idle`/`busy`).",
        _chk_kill9,
    ),
    (
        "PermissionRequest carries no `tool_use_id`; Notification has no `permission_mode`.",
        "Consistent with facts §2.7/§2.6 (listed here because DESIGN keys the needs-input "
        "detail on the tool): match a PermissionRequest to its PreToolUse by order and "
        "`tool_input`, not by id.",
        _chk_fields(
            "PermissionRequest", present=("tool_name", "tool_input"), absent=("tool_use_id",)
        ),
    ),
]
