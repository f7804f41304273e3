"""Record what the real Codex CLI does with our hooks installed (issue 36), for
``docs/codex-behaviour.md``: every hook payload per event, the hooks' environment and parent,
the rollout's records, the daemon's processes and files, and a few latencies.

    python -m devtools.record_codex [--out test-output/codex-record.json]

Runs the pinned Codex (``make clis``) in private tmux servers against the scripted Responses
API, in a temp dir; ends every process it started. Prints a summary; the JSON has it all.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil

from pmux_widget import hooks
from pmux_widget.demo.claude_env import read_jsonl, wait_until
from pmux_widget.demo.codex_cli import APPROVAL, QUESTION, TmuxCodex, codex_processes
from pmux_widget.demo.codex_env import CODEX_EVENTS, CodexEnv, ensure_codex
from pmux_widget.demo.scripted_responses import HELLO, ScriptedResponses
from pmux_widget.system.home import PmuxHome

# Like the harness's recorder, plus the names of the hook's environment variables and the
# values that could tell which TUI a hook belongs to.
RECORDER = r"""#!/bin/sh
t=$(date +%s%3N)
p=$(cat)
[ -n "$p" ] || p=null
names=$(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/"\1"/p' | sort | paste -sd, -)
printf '{"t":%s,"ppid":%s,"pane":"%s","env":[%s],"payload":%s}\n' \
  "$t" "$PPID" "$TMUX_PANE" "$names" "$p" >> "$1"
exit 0
"""


def _env(root: Path, server: ScriptedResponses, name: str) -> CodexEnv:
    env = CodexEnv(server.base_url, root=root / name)
    script = env.root / "recorder.sh"
    script.write_text(RECORDER)
    script.chmod(0o755)
    env.hooks_log = env.root / "hooks.jsonl"
    env.hooks_log.touch()
    env.add_hook(CODEX_EVENTS, f"/bin/sh {shlex.quote(str(script))} {env.hooks_log}")
    hooks.install_codex(env.codex_home, PmuxHome(env.root / "pmux"))
    return env


def _proc(pid: int) -> dict[str, Any]:
    try:
        p = psutil.Process(pid)
        return {"pid": pid, "ppid": p.ppid(), "argv": p.cmdline()[1:6], "name": p.name()}
    except psutil.Error:
        return {"pid": pid, "gone": True}


def _stop_seen(env: CodexEnv, count: int = 1) -> bool:
    return env.hook_events().count("Stop") >= count


def scenario(codex: Path, root: Path, server: ScriptedResponses, name: str) -> dict[str, Any]:
    env = _env(root, server, name)
    tc = TmuxCodex(env, codex)
    out: dict[str, Any] = {"name": name}
    t0 = time.monotonic()
    try:
        tc.start(timeout=90)
        out["tui_ready_s"] = round(time.monotonic() - t0, 2)
        if name == "plain":
            tc.type_prompt("hello there")
            tc.wait_for_screen(HELLO)
            wait_until(lambda: _stop_seen(env), 20, what="Stop")
        elif name in ("approve", "deny"):
            tc.type_prompt("please SHELL now")
            seen = time.time() * 1000
            tc.wait_for_screen(APPROVAL)
            seen = time.time() * 1000
            asked = next(
                h for h in env.hooks() if h["payload"].get("hook_event_name") == "PermissionRequest"
            )
            out["permission_hook_before_screen_ms"] = round(seen - asked["t"])
            tc.send_keys("y" if name == "approve" else "Escape")
            last = "Stop" if name == "approve" else "Interrupt"
            wait_until(lambda: last in env.hook_events(), 20, what=last)
        elif name == "question":
            tc.plan_mode()
            tc.type_prompt("please ASK me")
            tc.wait_for_screen(QUESTION)
            out["question_screen"] = tc.screen()
            tc.send_keys("Enter")
            wait_until(lambda: _stop_seen(env), 20, what="Stop")
        elif name == "two-tuis":
            tc.open_another()
            tc.type_prompt("hello from the first", pane=tc.panes[0])
            tc.wait_for_screen(HELLO, pane=tc.panes[0])
            wait_until(lambda: _stop_seen(env), 20, what="Stop 1")
            tc.type_prompt("hello from the second", pane=tc.panes[1])
            tc.wait_for_screen(HELLO, pane=tc.panes[1])
            wait_until(lambda: _stop_seen(env, 2), 20, what="Stop 2")
            out["panes"] = tc.panes
            out["tui_pids"] = tc.pids
        elif name == "no-daemon":
            tc.open_another(["--no-daemon"])
            tc.type_prompt("hello without a daemon", pane=tc.pane)
            tc.wait_for_screen(HELLO, pane=tc.pane)
            wait_until(lambda: _stop_seen(env), 20, what="Stop")
            out["panes"] = tc.panes
            out["tui_pids"] = tc.pids
        elif name == "slow-esc":
            tc.type_prompt("a SLOW answer")
            tc.wait_for_screen("This answer")  # streaming (an Esc during the hooks cancels them)
            tc.send_keys("Escape")
            wait_until(lambda: "Interrupt" in env.hook_events(), 20, what="Interrupt")
        time.sleep(1.0)  # late hooks (none expected): recorded, not waited for
        out["processes"] = [_proc(p.pid) for p in codex_processes(env)]
        out["daemon"] = env.daemon_info()
        out["hooks"] = env.hooks()
        out["spooled"] = [
            {"agent": e.agent, "event": json.loads(e.payload_bytes).get("hook_event_name")}
            for e in hooks.read_spool(PmuxHome(env.root / "pmux"))
        ]
        out["rollouts"] = [
            {"path": str(p.relative_to(env.codex_home.root)), "records": read_jsonl(p)}
            for p in env.rollouts()
        ]
        out["requests"] = [
            {
                "tools": r.tool_names(),
                "input_types": [i.get("type") or i.get("role") for i in r.body.get("input", [])],
            }
            for r in server.responses()
        ]
        out["codex_home_files"] = sorted(
            str(p.relative_to(env.codex_home.root)) for p in env.codex_home.root.iterdir()
        )
        out["screen"] = tc.screen()
    finally:
        out["ended"] = tc.close()
        out["left"] = [p.pid for p in codex_processes(env)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="test-output/codex-record.json")
    parser.add_argument(
        "scenarios",
        nargs="*",
        default=["plain", "approve", "deny", "question", "two-tuis", "no-daemon", "slow-esc"],
    )
    args = parser.parse_args(argv)
    codex = ensure_codex()
    runs = []
    with tempfile.TemporaryDirectory(prefix="pmux-codex-record-") as tmp:
        for name in args.scenarios:
            server = ScriptedResponses(slow_interval=0.5)
            server.start()
            try:
                runs.append(scenario(codex, Path(tmp), server, name))
            finally:
                server.stop()
            run = runs[-1]
            events = [h["payload"].get("hook_event_name") for h in run["hooks"]]
            print(f"{name}: {events}  spooled agents {Counter(s['agent'] for s in run['spooled'])}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(runs, indent=1, default=str))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
