"""The sessions table that ``pmux-widget status`` prints (and the widget's text form):
shared by the façades, so none of them imports another for it."""

from __future__ import annotations

from typing import Any

from pmux_widget.system.clock import now_ms

__all__ = ["age", "format_table", "kilo"]


def age(since_ms: int, now: int) -> str:
    seconds = max(0, (now - since_ms) // 1000)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}"
    return f"{seconds // 86400}d"


def kilo(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def format_table(snapshot: dict[str, Any], now: int | None = None) -> str:
    """A readable table of the snapshot (what ``status`` prints)."""
    now = now_ms() if now is None else now
    sessions = snapshot.get("sessions", [])
    counts = snapshot.get("counts", {})
    header = (
        f"{counts.get('attention', 0)} need you · {counts.get('needs-input', 0)} needs-input · "
        f"{counts.get('review', 0)} review · {counts.get('busy', 0)} busy · "
        f"{counts.get('unknown', 0)} unknown · {counts.get('idle', 0)} idle"
    )
    if not sessions:
        return header + "\nNo sessions yet."
    rows = [("STATE", "FOR", "SESSION", "PROJECT", "DOING / LAST", "TOKENS", "WHY")]
    for s in sessions:
        state = s["state"] + ("" if s.get("running") else " (ended)")
        if s.get("error"):
            doing = f"error: {s['error']}"
        elif s.get("tool_summary") or s.get("current_tool"):
            doing = s.get("tool_summary") or s.get("current_tool")
        else:
            doing = s.get("last_assistant") or s.get("last_prompt") or ""
        if s.get("compacting"):
            doing = "[compacting] " + doing
        if s.get("subagents"):
            doing = f"[{s['subagents']} sub-agents] " + doing
        tokens = s.get("tokens") or {}
        total_in = tokens.get("input", 0) + tokens.get("cache_read", 0)
        total_in += tokens.get("cache_creation", 0)
        token_text = f"{kilo(total_in)}/{kilo(tokens.get('output', 0))}"
        if s.get("context_tokens"):
            token_text += f" ctx {kilo(s['context_tokens'])}"
        tmux = s.get("tmux")
        project = s.get("project") or ""
        if tmux:
            project += f" {tmux.get('session')}:{tmux.get('window')}.{tmux.get('pane')}"
        rows.append(
            (
                state,
                age(s.get("state_since") or now, now),
                s["session_id"][:8],
                project,
                doing[:60],
                token_text,
                s.get("source", ""),
            )
        )
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return header + "\n" + "\n".join(line.rstrip() for line in lines)
