"""Recording: one scenario against a fresh environment (:func:`record_scenario`), then
the raw recording normalized (placeholders for temp paths and the pid) into the fixtures
(:func:`write_fixtures`)."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from devtools.record.observer import PLACEHOLDER_HOME, PLACEHOLDER_PID, Observer, Run, _now_ms
from devtools.record.scenarios import ENV_OPTIONS, SCENARIOS, _is_marker
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import (
    NEWEST,
    OLDEST,
    ClaudeEnv,
    encode_project_dir,
    read_jsonl,
)
from pmux_widget.demo.scenario_plans import system_text
from pmux_widget.demo.scripted_model import ScriptedModel


def record_scenario(
    name: str,
    cli: Path,
    workdir: Path,
    model: ScriptedModel | None = None,
    version: str = NEWEST,
) -> dict[str, Any]:
    """Drive one scenario against a fresh env for CLI ``version``; return the raw
    (un-normalized) recording."""
    driver = SCENARIOS[name]
    own_model = model is None
    model = model or ScriptedModel()
    model.start()
    first_request = len(model.requests)
    root = workdir / name
    shutil.rmtree(root, ignore_errors=True)
    env = ClaudeEnv(model.base_url, root=root, version=version, **ENV_OPTIONS.get(name, {}))
    env.add_recorder_hooks()
    observer = Observer(env).start()
    tmux = None if name == "print" else TmuxClaude(env, cli)
    run = Run(name, env, model, tmux, observer, _now_ms(), cli=cli)
    error: str | None = None
    try:
        if tmux is not None:
            ready = name != "startup_dialog"  # its dialog hides the prompt
            run.act("start claude in tmux", lambda: tmux.start(wait_ready=ready))
            run.wait_hook("SessionStart")
        driver(run)
        run.settle()
    except Exception as exc:  # keep what was recorded; report the failure
        error = f"{type(exc).__name__}: {exc}"
        if tmux is not None:
            with contextlib.suppress(Exception):
                run.notes.append("screen at failure:\n" + tmux.screen())
    finally:
        tmux = run.tmux  # a driver may have started another CLI (fork)
        pid = tmux._pid if tmux else None
        # PID files still there once the scenario itself ended the CLI (exit, kill -9, -p);
        # None when the CLI was still running (the recorder kills it: not a finding).
        ended = tmux is None or not tmux.alive()
        leftover = (
            sorted(p.name for p in env.sessions_dir.glob("*.json"))
            if ended and env.sessions_dir.is_dir()
            else []
            if ended
            else None
        )
        if tmux is not None:
            tmux.close()
        observer.stop()
        if own_model:
            model.stop()
    return {
        "name": name,
        "version": version,
        "doc": (driver.__doc__ or "").strip(),
        "root": str(env.root),
        "config_dir": str(env.config_dir),
        "cwd": str(env.cwd),
        "pid": pid,
        "started_ms": run.started_ms,
        "error": error,
        "notes": run.notes,
        "hooks": env.hooks(),
        "actions": run.actions,
        "observed": observer.events,
        "requests": [_request_summary(r) for r in model.requests[first_request:]],
        "transcripts": {
            str(p.relative_to(env.config_dir)): read_jsonl(p)
            for p in sorted((env.config_dir / "projects").rglob("*.jsonl"))
        }
        if (env.config_dir / "projects").is_dir()
        else {},
        "meta_files": {
            str(p.relative_to(env.config_dir)): json.loads(p.read_text())
            for p in sorted((env.config_dir / "projects").rglob("*.meta.json"))
        }
        if (env.config_dir / "projects").is_dir()
        else {},
        "leftover_pid_files": leftover,
    }


def _request_summary(r: Any) -> dict[str, Any]:
    body = r.body if isinstance(r.body, dict) else {}
    return {
        "t": int(r.received_at * 1000),
        "t_end": int(r.finished_at * 1000) if r.finished_at else None,
        "method": r.method,
        "path": r.path,
        "kind": r.kind,
        "scenario": r.scenario,
        "step": r.plan.step if r.plan else None,
        "status": r.status,
        "completed": r.completed,
        "request_id": r.request_id,
        "message_id": r.message_id,
        "usage": r.usage,
        "retry_count": r.headers.get("x-stainless-retry-count"),
        "model": body.get("model"),
        "n_tools": len(body.get("tools") or []),
        "n_messages": len(body.get("messages") or []),
        "system_head": _system_head(body),
    }


def _system_head(body: dict[str, Any]) -> str:
    text = system_text(body)
    text = re.sub(r"^x-anthropic-billing-header:[^\n]*\n?", "", text)
    return text.strip()[:80]


# --------------------------------------------------------------------------- normalization


def normalizer(rec: dict[str, Any]) -> Callable[[Any], Any]:
    """A function that replaces this run's temp paths and pid by placeholders, recursively."""
    root = rec["root"]
    home = root + "/home"
    pairs = [
        (home + "/.claude", PLACEHOLDER_HOME + "/.claude"),
        (home + "/project", PLACEHOLDER_HOME + "/project"),
        (home, PLACEHOLDER_HOME),
        (root, PLACEHOLDER_HOME + "/.sim"),
        (encode_project_dir(home + "/project"), encode_project_dir(PLACEHOLDER_HOME + "/project")),
        (encode_project_dir(home), encode_project_dir(PLACEHOLDER_HOME)),
    ]
    pid = rec.get("pid")

    def fix_str(s: str) -> str:
        for a, b in pairs:
            s = s.replace(a, b)
        if pid:
            s = re.sub(rf"\b{pid}\.json\b", f"{PLACEHOLDER_PID}.json", s)
        return s

    def fix(v: Any, key: str | None = None) -> Any:
        if isinstance(v, str):
            return fix_str(v)
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, dict):
            return {fix_str(k): fix(x, k) for k, x in v.items()}
        if pid and key == "pid" and v == pid:
            return PLACEHOLDER_PID
        return v

    return fix


def _summarize(ev: dict[str, Any]) -> str:
    """A one-line description of a timeline event."""
    src = ev["source"]
    if src == "action":
        return ev["action"]
    if src == "hook":
        p = ev["payload"] or {}
        name = p.get("hook_event_name", "?")
        bits = []
        for k in (
            "source",
            "reason",
            "tool_name",
            "notification_type",
            "error",
            "trigger",
            "agent_type",
            "agent_id",
            "is_interrupt",
        ):
            if k in p:
                val = p[k]
                if k == "agent_id":
                    val = "…" + str(val)[-4:]
                bits.append(f"{k}={val}")
        if p.get("permission_mode") not in (None, "default"):
            bits.append(f"permission_mode={p['permission_mode']}")
        if "background_tasks" in p:
            tasks = p["background_tasks"] or []
            bits.append(
                "background_tasks=["
                + ", ".join(f"{t.get('type')}:{t.get('status')}" for t in tasks)
                + "]"
            )
        if name == "UserPromptSubmit" and str(p.get("prompt", "")).startswith("<task-notif"):
            bits.append("prompt=<task-notification>")
        if name == "Notification":
            bits.append(repr(p.get("message")))
        return f"{name}({', '.join(bits)})" if bits else name
    if src == "pid":
        d = ev["data"]
        if d is None:
            return "PID file removed"
        s = d.get("status", "(no status)")
        if d.get("waitingFor"):
            s += f" ({d['waitingFor']})"
        return f"status={s}"
    if src == "transcript":
        return _summarize_record(ev["record"], ev["file"])
    if src == "request":
        u = ev.get("usage") or {}
        what = ev.get("kind") or ev["path"]
        if ev.get("scenario"):
            what += f" {ev['scenario']}#{ev['step']}"
        status = ev["status"] or "-"
        end = "" if ev["completed"] else " (client went away)"
        return f"{ev['method']} {ev['path']} → {status} [{what}]{end}" + (
            f" out={u.get('output_tokens')}" if u else ""
        )
    return src


def _content_desc(content: Any) -> str:
    if isinstance(content, str):
        return "text " + repr(content[:60])
    parts = []
    for b in content or []:
        t = b.get("type")
        if t == "text":
            parts.append("text " + repr(str(b.get("text"))[:60]))
        elif t == "tool_use":
            parts.append(f"tool_use {b.get('name')}")
        elif t == "tool_result":
            c = b.get("content")
            if isinstance(c, list):
                c = " ".join(str(x.get("text", "")) for x in c if isinstance(x, dict))
            err = " is_error" if b.get("is_error") else ""
            parts.append(f"tool_result{err} {str(c)[:60]!r}")
        else:
            parts.append(str(t))
    return " + ".join(parts)


def _summarize_record(r: dict[str, Any], file: str) -> str:
    t = r.get("type")
    where = " [sub-agent file]" if "/subagents/" in file else ""
    if t == "assistant":
        m = r.get("message", {})
        u = m.get("usage", {})
        mid = str(m.get("id", ""))
        mid = mid[:8] + "…" if mid.startswith("msg_") else "uuid " + mid[:8] + "…"
        return (
            f"assistant {_content_desc(m.get('content'))} stop={m.get('stop_reason')} "
            f"out={u.get('output_tokens')} id={mid}{where}"
        )
    if t == "user":
        m = r.get("message", {})
        flags = [f for f in ("isMeta", "isCompactSummary") if r.get(f)]
        return (
            f"user {_content_desc(m.get('content'))}{' ' + ','.join(flags) if flags else ''}{where}"
        )
    if t == "system":
        return f"system {r.get('subtype')}{where}"
    return f"{t}{where}"


def timeline(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """All events of a recording, ordered by time, each with ``ms`` since the start.

    Times: actions when the keystroke was sent; hooks when the recorder hook started; model
    requests when received; transcript records when the poller saw them; PID-file changes at
    the file's own ``statusUpdatedAt`` when that changed (the CLI's write time; the poller can
    lag under load), else when the poller saw them.
    """
    evs: list[dict[str, Any]] = []
    evs.extend(rec["actions"])
    for h in rec["hooks"]:
        evs.append({"t": h["t"], "source": "hook", "payload": h["payload"]})
    last_stamp: dict[str, Any] = {}
    for e in rec["observed"]:
        if e["source"] == "pid" and e["data"]:
            stamp = e["data"].get("statusUpdatedAt")
            if stamp is not None and stamp != last_stamp.get(e["file"]):
                last_stamp[e["file"]] = stamp
                e = {**e, "t": int(stamp), "seen": e["t"]}
        evs.append(e)
    for q in rec["requests"]:
        evs.append({**q, "source": "request"})
    order = {"action": 0, "request": 1, "hook": 2, "pid": 3, "transcript": 4}
    evs.sort(key=lambda e: (e["t"], order.get(e["source"], 9)))
    t0 = rec["started_ms"]
    return [
        {"ms": e["t"] - t0, "source": e["source"], "key": _key(e), "what": _summarize(e)}
        for e in evs
    ]


def _key(ev: dict[str, Any]) -> str:
    """A short machine-readable label of a timeline event (used by the doc's measurements).

    ``hook:<Event>``, ``pid:<status>`` / ``pid:removed`` / ``pid:none``,
    ``transcript:<type>[:<subtype>]`` (``transcript:marker`` for interrupt markers,
    ``transcript:sub:…`` in sub-agent files), ``request:<kind>:<status>``, ``action``.
    """
    src = ev["source"]
    if src == "hook":
        return "hook:" + str((ev["payload"] or {}).get("hook_event_name"))
    if src == "pid":
        d = ev["data"]
        return "pid:removed" if d is None else "pid:" + str(d.get("status", "none"))
    if src == "transcript":
        r = ev["record"]
        sub = "sub:" if "/subagents/" in ev["file"] else ""
        if _is_marker(r):
            return f"transcript:{sub}marker"
        t = str(r.get("type"))
        if t == "system":
            t += ":" + str(r.get("subtype"))
        elif t == "assistant" and r.get("isApiErrorMessage"):
            t += ":api_error"
        return f"transcript:{sub}{t}"
    if src == "request":
        return f"request:{ev.get('kind') or ev['path']}:{ev['status']}"
    return src


def write_fixtures(rec: dict[str, Any], out: Path) -> None:
    """Write one recording as normalized golden fixtures under ``out/<name>/``."""
    fix = normalizer(rec)
    d = out / rec["name"]
    shutil.rmtree(d, ignore_errors=True)
    (d / "transcripts").mkdir(parents=True)
    with open(d / "hooks.jsonl", "w") as fh:
        for h in rec["hooks"]:
            fh.write(json.dumps(fix(h["payload"]), separators=(",", ":")) + "\n")
    with open(d / "pid-files.jsonl", "w") as fh:
        for e in rec["observed"]:
            if e["source"] == "pid":
                fh.write(json.dumps(fix(e["data"]), separators=(",", ":")) + "\n")
    for rel, records in rec["transcripts"].items():
        rel_fixed = fix(rel).removeprefix("projects/")
        rel_fixed = rel_fixed.split("/", 1)[1] if "/" in rel_fixed else rel_fixed
        p = d / "transcripts" / rel_fixed
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "w") as fh:
            for r in records:
                fh.write(json.dumps(fix(r), separators=(",", ":"), ensure_ascii=False) + "\n")
    for rel, meta in rec["meta_files"].items():
        rel_fixed = fix(rel).removeprefix("projects/").split("/", 1)[1]
        p = d / "transcripts" / rel_fixed
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(fix(meta), indent=1) + "\n")
    with open(d / "requests.jsonl", "w") as fh:
        for q in rec["requests"]:
            fh.write(json.dumps(fix(q), separators=(",", ":")) + "\n")
    info = {
        "scenario": rec["name"],
        "description": rec["doc"],
        "cli_version": rec.get("version", OLDEST),
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(rec["started_ms"] / 1000)),
        "error": rec["error"],
        "notes": fix(rec["notes"]),
        "leftover_pid_files": fix(rec["leftover_pid_files"]),  # None: CLI still ran
        "timeline": fix(timeline(rec)),
    }
    (d / "timeline.json").write_text(json.dumps(info, indent=1, ensure_ascii=False) + "\n")
