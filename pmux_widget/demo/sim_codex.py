"""A simulated Codex TUI: the demo's Codex session beside the Claude ones (issue 36).

``python -m pmux_widget.demo.sim_codex <config.json>`` is what the scripted fleet's Codex
window runs (:class:`~.scripted_fleet.PaneFleet`). Like the real TUI (0.171.0, with
``--no-daemon``: it runs its own turns, so its hooks carry its own pane,
``docs/codex-behaviour.md``) it

* is a process named ``codex`` (it sets its own ``comm``: the name pmux-widget finds Codex
  TUIs by) with ``CODEX_HOME`` in its environment, working in its project's folder;
* opens its thread at the first prompt: a rollout ``sessions/YYYY/MM/DD/rollout-<time>-<id>
  .jsonl`` (``session_meta`` first, ``task_started`` / ``task_complete`` / ``turn_aborted``
  events), which it keeps open, as a ``--no-daemon`` TUI does (so the row's TUI is proved
  exactly);
* fires the hooks installed in ``$CODEX_HOME/hooks.json`` (our entries: ``pmux-widget
  install`` wrote them and their trust) with Codex's payloads: SessionStart at the first
  prompt, UserPromptSubmit, PermissionRequest before an escalated command, PostToolUse after
  each tool, Stop, Interrupt (Esc, or an approval declined);
* draws what 0.171.0 draws (the composer ``› Ask Codex to do anything``, ``• Working (… esc
  to interrupt)``, the approval "Would you like to run the following command?" with its keys
  ``(y)`` / ``(p)`` / ``(esc)``, ``Worked for …``, ``■ Conversation interrupted``), and
* reads keys from its terminal: ``y`` (or Enter on "Yes") approves, Esc declines or
  interrupts, a prompt typed and sent with Enter is a new turn.

Its script loops: a prompt, a few tool calls, an escalated command that waits for approval
(nobody answers within a while: the script's user approves), the answer (review), a rest.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import random
import select
import signal
import sys
import termios
import time
import tty
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from .hook_runner import InstalledHooks
from .sim_screen import repaint, screen_size

__all__ = ["SimCodex", "main"]

CLI_VERSION = "0.171.0"
MODEL = "gpt-6.2-sol"
#: seconds (before ``speed``) between the script's steps
STEP_S = 1.5
#: how long an approval waits for a key before the script's user approves it
APPROVAL_WAIT_S = 10.0
#: the rest after a turn, before the next prompt
REST_S = 14.0
#: the rest after the user acted (a decline, an interrupt, a prompt of their own): the
#: script's next turn leaves them time to go on by hand
USER_REST_S = 40.0
#: how long a turn of the user's own thinks before it answers
THINK_S = 6.0
ESC_WAIT_S = 0.03
PLACEHOLDER = "Ask Codex to do anything"

#: (prompt, the commands it runs, the escalated command, the answer)
TURNS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    (
        "fix the flaky retry test",
        ("rg -n retry tests", "pytest -q tests/test_retry.py"),
        "pip install -e .",
        "The retry test waited on a real clock: it now uses the fake one. 14 passed.",
    ),
    (
        "bump the lockfile and run the suite",
        ("git status --short", "cat pyproject.toml"),
        "uv lock --upgrade",
        "Lockfile bumped (3 packages); the suite passes: 212 passed.",
    ),
)


def log(message: str) -> None:
    print(f"[sim-codex {os.getpid()}] {message}", file=sys.stderr, flush=True)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"


def name_process(name: str = "codex") -> None:
    """This process's ``comm`` (what ``ps`` and psutil's ``name()`` show): Codex's TUI's."""
    with contextlib.suppress(OSError), open("/proc/self/comm", "w") as comm:
        comm.write(name)


class SimCodex:
    """One simulated Codex TUI: its thread, rollout, hooks, screen and keys."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.codex_home = Path(config["codex_home"])
        self.cwd = str(config["cwd"])
        self.speed = float(config.get("speed", 1.0))
        self.rng = random.Random(config.get("seed"))
        self.hooks = InstalledHooks(self.codex_home / "hooks.json", Path(config["home"]),
                                    inherit_tmux=True)  # fmt: skip
        self.hooks.env.pop("CLAUDECODE", None)  # (Claude's mark; Codex sets none)
        self.session_id = ""
        self.rollout: TextIO | None = None
        self.turn_id = ""
        self.lines: list[str] = []
        self.typed = ""
        self.state = "idle"  # idle | busy | approval
        self.turn_started = 0.0
        self.approval: str | None = None
        self.steps: list[tuple[str, Any]] = []
        self.deadline = time.monotonic() + 2.0 / self.speed
        self.turn = 0
        self.stopping = False
        self.tty = sys.stdin.isatty()
        self._drawn: list[str] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    # ------------------------------------------------------------------ the thread

    def _payload(self, event: str, **fields: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": self.rollout.name if self.rollout else None,
            "cwd": self.cwd,
            "hook_event_name": event,
            "model": MODEL,
            "permission_mode": "default",
        }
        if event != "SessionStart":
            body["turn_id"] = self.turn_id
        body.update(fields)
        return body

    def _fire(self, event: str, **fields: Any) -> None:
        # The screen first: the TUI shows what a key did while its hooks run (a row that
        # turned idle by an Interrupt hook is then answered against the screen it shows),
        # but for PermissionRequest, which Codex fires before it draws the approval.
        self._draw()
        self.hooks.fire(self._payload(event, **fields))

    def _record(self, kind: str, payload: dict[str, Any]) -> None:
        if self.rollout is None:
            return
        now = time.time()
        self.rollout.write(json.dumps({"timestamp": _iso(now), "type": kind, "payload": payload}))
        self.rollout.write("\n")
        self.rollout.flush()

    def _open_thread(self) -> None:
        """The thread and its rollout, at the first prompt (as Codex opens them)."""
        self.session_id = str(uuid.uuid4())
        now = time.time()
        day = datetime.fromtimestamp(now)
        folder = self.codex_home / "sessions" / day.strftime("%Y/%m/%d")
        folder.mkdir(parents=True, exist_ok=True)
        name = f"rollout-{day.strftime('%Y-%m-%dT%H-%M-%S')}-{self.session_id}.jsonl"
        self.rollout = open(folder / name, "a", encoding="utf-8")  # noqa: SIM115 (held open)
        meta = {"id": self.session_id, "timestamp": _iso(now), "cwd": self.cwd,
                "originator": "codex-tui", "cli_version": CLI_VERSION, "source": "cli",
                "thread_source": "user", "model_provider": "openai"}  # fmt: skip
        self._record("session_meta", meta)
        self._fire("SessionStart", source="startup")

    # ------------------------------------------------------------------ a turn

    def _show(self, *lines: str) -> None:
        self.lines.extend(lines)
        del self.lines[:-200]

    def prompt(self, text: str) -> None:
        if not self.session_id:
            self._open_thread()
        self.turn_id = str(uuid.uuid4())
        self.turn_started = time.monotonic()
        self._show("", f"› {text}", "")
        self.state = "busy"
        self._record("event_msg", {"type": "task_started", "turn_id": self.turn_id,
                                   "model_context_window": 258400})  # fmt: skip
        self._fire("UserPromptSubmit", prompt=text)

    def run_tool(self, command: str) -> None:
        call = f"call_{self.rng.getrandbits(48):012x}"
        self._show(f"• Ran {command}", "  └ (done)", "")
        self._fire("PostToolUse", tool_name="Bash", tool_input={"command": command},
                   tool_use_id=call, tool_response="")  # fmt: skip

    def ask(self, command: str) -> None:
        """An escalated command: PermissionRequest, then the approval on screen."""
        self._show(f"• Running {command}", "")
        why = "The command needs the network, outside the sandbox"
        self._fire("PermissionRequest", tool_name="Bash",
                   tool_input={"command": command, "description": why})  # fmt: skip
        self.approval = command
        self.state = "approval"

    def approve(self) -> None:
        command, self.approval = self.approval, None
        self.state = "busy"
        if command is not None:
            self.run_tool(command)

    def answer(self, text: str) -> None:
        self._show(f"• {text}", "", f"  Worked for {self._worked()}", "")
        self._record("event_msg", {"type": "task_complete", "turn_id": self.turn_id,
                                   "last_agent_message": text})  # fmt: skip
        self.state = "idle"
        self._fire("Stop", stop_hook_active=False, last_assistant_message=text)

    def interrupt(self) -> None:
        """Esc during a turn, or an approval declined: Interrupt, no Stop."""
        self.approval = None
        self._show("■ Conversation interrupted - use /feedback if something went wrong", "")
        self._record("event_msg", {"type": "turn_aborted", "turn_id": self.turn_id,
                                   "reason": "interrupted"})  # fmt: skip
        self.state = "idle"
        self.steps = []
        self._fire("Interrupt")
        self.deadline = time.monotonic() + USER_REST_S / self.speed

    def _worked(self) -> str:
        took = time.monotonic() - self.turn_started
        return "<1s" if took < 1 else f"{took:.0f}s"

    # ------------------------------------------------------------------ the script

    def _plan(self, prompt: str | None = None) -> None:
        """The next turn's steps (a prompt typed by the user: a short turn)."""
        if prompt is not None:
            # then a rest, as after the script's own turns: the user reads the answer
            self.steps = [("prompt", prompt), ("tool", "ls"), ("think", None),
                          ("answer", "Done: see above."), ("user-rest", None)]  # fmt: skip
            return
        text, tools, escalated, answer = TURNS[self.turn % len(TURNS)]
        self.turn += 1
        self.steps = [("prompt", text), *(("tool", c) for c in tools), ("ask", escalated),
                      ("approve", None), ("answer", answer), ("rest", None)]  # fmt: skip

    def _step(self) -> None:
        if self.state == "approval":  # nobody answered: the script's user approves
            self.approve()
            self.steps = self.steps[1:] if self.steps and self.steps[0][0] == "approve" else []
            self.deadline = time.monotonic() + STEP_S / self.speed
            return
        if not self.steps:
            if self.state != "idle":
                return
            self._plan()
        kind, arg = self.steps.pop(0)
        pause = STEP_S * self.rng.uniform(0.7, 1.4)
        if kind == "prompt":
            self.prompt(arg)
        elif kind == "tool":
            self.run_tool(arg)
        elif kind == "ask":
            self.ask(arg)
            pause = APPROVAL_WAIT_S
        elif kind == "approve":
            self.approve()
        elif kind == "answer":
            self.answer(arg)
        elif kind == "rest":
            pause = REST_S
        elif kind == "user-rest":
            pause = USER_REST_S
        elif kind == "think":  # a while busy with no tool (time to press Esc)
            pause = THINK_S
        self.deadline = time.monotonic() + pause / self.speed

    # ------------------------------------------------------------------ keys

    def _read_keys(self) -> None:
        try:
            data = os.read(0, 4096)
        except OSError:
            data = b""
        if not data:
            self.stopping = True
            return
        if data.endswith(b"\x1b"):
            more, _, _ = select.select([0], [], [], ESC_WAIT_S)
            if more:
                data += os.read(0, 4096)
        text = self._decoder.decode(data)
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\x1b" and text[i + 1 : i + 2] in ("[", "O"):
                j = i + 2
                while j < len(text) and not ("@" <= text[j] <= "~"):
                    j += 1
                i = j + 1
                continue
            self._key("escape" if ch == "\x1b" else "enter" if ch in "\r\n" else ch)
            i += 1

    def _key(self, key: str) -> None:
        if self.state == "approval":
            if key in ("y", "enter"):
                self.approve()
                self.steps = [s for s in self.steps if s[0] != "approve"]
                self.deadline = time.monotonic() + STEP_S / self.speed
            elif key == "escape":
                self.interrupt()
            return
        if key == "escape":
            if self.state == "busy":
                self.interrupt()
        elif key == "enter":
            text, self.typed = self.typed.strip(), ""
            if text and self.state == "idle":
                self._plan(text)
                self.deadline = time.monotonic()
        elif key in ("\x7f", "\x08"):
            self.typed = self.typed[:-1]
        elif len(key) == 1 and key >= " ":
            self.typed += key

    # ------------------------------------------------------------------ screen

    def _screen(self, width: int, height: int) -> list[str]:
        head = ["", f"  >_ OpenAI Codex (v{CLI_VERSION})", f"     {self._home_path()}", ""]
        body = list(self.lines)
        if self.state == "busy":
            took = int(time.monotonic() - self.turn_started)
            body += [f"• Working ({took}s • esc to interrupt)", ""]
        if self.state == "approval" and self.approval is not None:
            body += [
                "",
                "  Would you like to run the following command?",
                "",
                "  Reason: The command needs the network, outside the sandbox",
                "",
                f"  $ {self.approval}",
                "",
                "",
                "› 1. Yes, proceed (y)",
                f"  2. Yes, and don't ask again for commands that start with `{self.approval}` (p)",
                "  3. No, and tell Codex what to do differently (esc)",
                "",
                "  Press enter to confirm or esc to cancel",
            ]
            foot: list[str] = []
        else:
            composer = self.typed or PLACEHOLDER
            foot = [f"› {composer}", "", "  ? for shortcuts"]
        room = max(1, height - len(head) - len(foot))
        body = body[-room:]
        lines = head + body + [""] * (room - len(body)) + foot
        return [line[:width] for line in lines]

    def _home_path(self) -> str:
        home = os.environ.get("HOME", "")
        return "~" + self.cwd[len(home) :] if home and self.cwd.startswith(home) else self.cwd

    def _draw(self) -> None:
        if not self.tty:
            return
        width, height = screen_size((120, 40))
        lines = self._screen(width, height)
        if lines == self._drawn:
            return
        repaint(lines)
        self._drawn = lines

    # ------------------------------------------------------------------ the loop

    def run(self) -> int:
        name_process()
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stopping", True))
        signal.signal(signal.SIGHUP, lambda *_: setattr(self, "stopping", True))
        saved = termios.tcgetattr(0) if self.tty else None
        try:
            if self.tty:
                tty.setraw(0)
                os.write(1, b"\x1b[?25l\x1b[2J")
            while not self.stopping:
                self._draw()
                wait = max(0.0, min(0.5, self.deadline - time.monotonic()))
                if not self.tty:
                    time.sleep(wait)
                elif select.select([0], [], [], wait)[0]:
                    self._read_keys()
                if time.monotonic() >= self.deadline:
                    try:
                        self._step()
                    except Exception as exc:  # a script bug must not end the session
                        log(f"{exc!r}; starting over")
                        self.steps, self.state = [], "idle"
                        self.deadline = time.monotonic() + REST_S / self.speed
        finally:
            if saved is not None:
                termios.tcsetattr(0, termios.TCSADRAIN, saved)
            if self.rollout is not None:
                self.rollout.close()
        return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pmux_widget.demo.sim_codex <config.json>", file=sys.stderr)
        return 2
    return SimCodex(json.loads(Path(args[0]).read_text())).run()


if __name__ == "__main__":
    sys.exit(main())
