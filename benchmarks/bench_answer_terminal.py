"""P20 through JupyterLab terminals: an answer → the real Claude Code CLI reacted.

As P12's terminal rows (``bench_terminal_actions``): the real CLI (the newest pin) runs in real
JupyterLab terminals of a Jupyter server with the extension (created through ``POST
api/terminals``, typed into through their websockets, as the browser does), against the
scripted model: one asks, one (``--permission-mode plan``) offers plans. Each answer is an
HTTP request to the server's ``POST pmux/api/actions`` (every check; the screen read from the
extension's emulator, each key written to the PTY once the screen shows the last one's
effect). Latency = from the request to the CLI's PID file leaving ``waiting`` or the page's
screen no longer showing the dialog, whichever comes first, both sampled every 10 ms. The
answer comes 1.2 s after the dialog is drawn. Cases as in tmux: one question, a multi-select
(two ticks, the review page's Submit), a plan approved. Budget: p95 ≤ 300 ms (n=10;
``--quick``: 2).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._util import Row, log, percentile, wait_until
from benchmarks.bench_terminal_actions import READ_S, PageScreen, PidStatus, _prompt, _state
from pmux_widget import hooks as pmux_hooks
from pmux_widget.agents.claude.screen import Screen
from pmux_widget.demo.claude_env import ClaudeEnv, CliUnavailable, ensure_cli
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.system.home import PmuxHome
from tests.jupyter_ext import LabServer
from tests.lab_terminal import LabTerminal, claude_command

__all__ = ["measure"]

BUDGET_MS = 300.0
NAME = "P20 answer via a JupyterLab terminal"


class SessionPid(PidStatus):
    """The PID file status of one session (two CLIs share the sessions dir)."""

    def __init__(self, sessions_dir: Path, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(sessions_dir)

    def status(self) -> str | None:
        for path in self.dir.glob("*.json"):
            try:
                info = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if info.get("sessionId") == self.session_id:
                return str(info.get("status"))
        return None


def _new_sid(server: LabServer, known: set[str]) -> str:
    rows = server.get("pmux/api/sessions").json()["sessions"]
    found = [
        str(r["session_id"])
        for r in rows
        if r.get("terminal") and r["running"] and r["session_id"] not in known
    ]
    return found[0] if found else ""


def _new_sid_of(server: LabServer, known: set[str]) -> Callable[[], str]:
    return lambda: _new_sid(server, known)


def _asked(server: LabServer, sid: str, kind: str) -> None:
    def ready() -> bool:
        rows = server.get("pmux/api/sessions").json()["sessions"]
        row = next((r for r in rows if r["session_id"] == sid), None)
        q = row.get("question") if row else None
        return bool(row and row["state"] == "needs-input" and q and q.get("kind") == kind)

    wait_until(ready, 60, f"{sid[:8]} asking ({kind})")


def _gone(kind: str) -> Callable[[Screen], bool]:
    if kind == "plan":
        return lambda s: s.plan is None
    return lambda s: s.question is None


def _one(
    server: LabServer, pid: SessionPid, page: PageScreen, sid: str, kind: str, body: dict[str, Any]
) -> float:
    """ms from the request to the first sign the CLI took the answer."""
    was = pid.status()
    t0 = time.monotonic()
    answer = server.post("pmux/api/actions", {"session_id": sid, **body})
    returned = (time.monotonic() - t0) * 1000
    if answer.status_code != 202:
        raise RuntimeError(f"{body}: HTTP {answer.status_code} {answer.text}")
    by_pid = pid.changed_after(t0, was)
    total = min(by_pid, page.shows_after(t0, _gone(kind), 0.0))
    steps = ", ".join(f"{what} {ms:.0f}" for what, ms in _steps(page, t0))
    log(f"[bench] P20 terminal {body.get('options') or kind}: reacted {total:.0f} ms; "
        f"the page showed {steps}; the POST returned at {returned:.0f}")  # fmt: skip
    return total


def _steps(page: PageScreen, t0: float) -> list[tuple[str, float]]:
    """When the page first showed each new look of the dialog after ``t0`` (ms): a box
    ticked, the review page, the dialog gone. Where an answer's time went, key by key (each
    look follows one key: ours to type it once the last look was seen, the CLI's to draw)."""
    steps: list[tuple[str, float]] = []
    last: str | None = None
    for t, screen in list(page.samples):
        if t <= t0:
            continue
        q = screen.question
        if q is None:
            look = "gone" if screen.plan is None else "plan"
        elif q.kind == "review":
            look = "review"
        else:
            look = "ticked " + ("+".join(o.label for o in q.options if o.checked) or "none")
        if look != last:
            steps.append((look, (t - t0) * 1000))
            last = look
        if look == "gone":
            break
    return steps


def _plan_mode(term: LabTerminal) -> None:
    """shift+tab cycles the permission modes: until the footer says plan mode."""
    for _ in range(6):
        term.type("\x1b[Z")
        try:
            term.wait_for("plan mode on", 2)
            return
        except TimeoutError:
            continue
    raise TimeoutError("shift+tab never reached plan mode")


def measure(quick: bool = False, rounds: int | None = None) -> list[Row]:
    n = rounds or (2 if quick else 10)
    try:
        cli = ensure_cli()
    except CliUnavailable as exc:
        return [(NAME, f"unavailable: {exc}", f"<= {BUDGET_MS:.0f} ms", False)]
    samples: dict[str, list[float]] = {"question": [], "multi": [], "plan": []}
    with tempfile.TemporaryDirectory(prefix="pmux-bench-ask-") as root, ScriptedModel() as model:
        tmp = Path(root)
        pmux = PmuxHome(tmp / "pmux")
        env = ClaudeEnv(
            model.base_url, root=tmp / "claude", extra_env={"PMUX_WIDGET_HOME": str(pmux.root)}
        )
        pmux_hooks.install(env.settings_file, pmux)
        server = LabServer(tmp, claude=env.config_dir, pmux=pmux.root).start()
        closing: list[Callable[[], object]] = [server.stop]
        try:
            terms: dict[str, tuple[LabTerminal, str, SessionPid, PageScreen]] = {}
            for role, args in (("asker", ()), ("planner", ("--permission-mode", "plan"))):
                term = LabTerminal(server, cwd=env.cwd)
                closing.append(term.close)
                term.type(claude_command(env, cli, args) + "\r")
                term.wait_for(r"for shortcuts|auto mode on|plan mode on", 90)
                known = {sid for _, sid, _, _ in terms.values()}
                sid = wait_until(_new_sid_of(server, known), 60, f"the {role}'s session")
                pid, page = SessionPid(env.sessions_dir, sid), PageScreen(term)
                closing += [pid.stop, page.stop]
                terms[role] = (term, sid, pid, page)
            for i in range(n):
                cases: list[tuple[str, str, str, dict[str, Any]]] = [
                    ("question", "asker", "ask me a question",
                     {"action": "answer", "options": ["Amber" if i % 2 else "Purple"]}),
                    ("multi", "asker", "ask me to pick several",
                     {"action": "answer", "options": ["Lint", "Tests"]}),
                    ("plan", "planner", "make a plan", {"action": "approve"}),
                ]  # fmt: skip
                for case, role, prompt, body in cases:
                    term, sid, pid, page = terms[role]
                    kind = "plan" if case == "plan" else "question"
                    _prompt(term, f"{prompt} ({case} {i})")
                    _asked(server, sid, kind)
                    time.sleep(READ_S)  # a person reads the dialog first
                    samples[case].append(_one(server, pid, page, sid, kind, body))
                    _state(server, sid, "review")
                _plan_mode(terms["planner"][0])  # an approved plan left plan mode
                if i == 0 or (i + 1) % 5 == 0:
                    log(f"{NAME}: round {i + 1}/{n}")
        finally:
            for close in reversed(closing):
                close()
    rows: list[Row] = []
    for kind, values in samples.items():
        p95 = percentile(values, 95)
        rows.append(
            (
                f"P20 {kind} answered via a JupyterLab terminal → CLI reacted, p95 ms "
                f"(n={len(values)})",
                f"{p95:.1f} (median {percentile(values, 50):.1f})",
                f"<= {BUDGET_MS:.0f}",
                p95 <= BUDGET_MS,
            )
        )
    return rows
