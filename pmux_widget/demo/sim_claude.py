"""A simulated Claude Code CLI: one scripted demo session as its own process, in a terminal.

``python -m pmux_widget.demo.sim_claude <config.json>`` is what each pane of the scripted demo
fleet runs (:class:`~.scripted_fleet.ScriptedFleet`). Like the real CLI (2.1.197) it

* writes its PID file ``<claude>/sessions/<pid>.json`` (``procStart``, ``status`` busy / idle /
  waiting, the session id it runs; removed when it exits), so pmux-widget can prove which
  process runs which session;
* fires its hooks itself, through the installed hook command, with its own environment: the
  ``$TMUX`` / ``$TMUX_PANE`` of its pane;
* draws what 2.1.197 draws (the prompt box when idle, "esc to interrupt" when busy, the
  permission dialog "Do you want to proceed? ❯ 1. Yes / 2. … / 3. No" when asking), and
* reads keys from its terminal (raw mode), answering as the real CLI does: ``1`` / Enter on
  "Yes" runs the tool; ``3`` / Esc on the dialog rejects it (no hook, the rejection result and
  the "for tool use" marker, idle); Esc while busy interrupts (the marker, no Stop, idle); a
  prompt typed and sent while idle is a new turn (UserPromptSubmit … Stop → review), while
  busy it is queued for after the turn.

The session follows its persona's script (:mod:`.scripts`); a key press overrides the
script's own decision, and when nobody answers a dialog the script goes on after its pause
(the script's choice, "Yes"). After a rejection or an interrupt the script starts over after
a rest. The session may go on from a backdated history seeded in the demo's process: the
process waits until its ``go`` file (that session's :meth:`SimSession.snapshot`) exists.

Without a terminal (the demo's "not in tmux" session) it runs its script the same way and
reads no keys: pmux-widget then refuses actions on it (no pane holds its process).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import random
import select
import shutil
import signal
import sys
import termios
import time
import tty
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.pidfiles import process_start_ticks

from .scripts import SCRIPTS, user_turn
from .sim_screen import dialog_rows, render, repaint, screen_size, summary
from .simulated import CLI_VERSION, InstalledHooks, SimSession

__all__ = ["LiveSession", "SimClaude", "main"]

#: Seconds (before ``speed``) a session rests after a rejection or an interrupt, before its
#: script starts over: long enough to be seen idle.
REST_S = 8.0
#: How long a lone ESC byte waits for the rest of an escape sequence (arrow keys).
ESC_WAIT_S = 0.03


def log(message: str) -> None:
    print(f"[sim-claude {os.getpid()}] {message}", file=sys.stderr, flush=True)


# ============================================================================ the session


class LiveSession(SimSession):
    """A :class:`SimSession` with what the CLI also keeps: its PID file, the status in it,
    the lines of the conversation shown on screen and the open permission dialog."""

    def __init__(
        self, hooks: InstalledHooks, claude_dir: Path, cwd: Path, model: str, rng: random.Random,
        context: int, background: str | None = None,
    ) -> None:  # fmt: skip
        # pane None: its own $TMUX_PANE reaches the hooks through the environment
        super().__init__(hooks, claude_dir, cwd, None, model, rng, context)
        self.pid = os.getpid()
        self.started_at = int(time.time() * 1000)
        self.proc_start = process_start_ticks(self.pid)
        self.pid_file = claude_dir / "sessions" / f"{self.pid}.json"
        self.status = "idle"
        self.waiting_for: str | None = None
        self.lines: list[str] = []
        #: (tool_use_id, tool name, tool input) of the permission dialog on screen.
        self.dialog: tuple[str, str, dict[str, Any]] | None = None
        self.turn_open = False
        self.compacting = False
        #: the text typed into a question's "Type something." row or a plan's feedback row
        self.field = ""
        #: what the user answered the open question with (its label, or the text typed)
        self.chosen: str | None = None
        #: a plan's "Tell Claude what to change" feedback (keep planning); None: approved
        self.feedback: str | None = None
        #: ``claude --bg --name <this>``: a background worker's PID file and job folder
        self.background = background

    # ------------------------------------------------------------------ PID file

    def write_pid_file(self) -> None:
        """The PID file as 2.1.197 writes it (same keys, same order), atomically."""
        now = int(time.time() * 1000)
        record: dict[str, Any] = {
            "pid": self.pid,
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "startedAt": self.started_at,
            "procStart": self.proc_start,
            "version": CLI_VERSION,
            "peerProtocol": 1,
            "kind": "interactive",
            "entrypoint": "cli",
            "name": f"{Path(self.cwd).name}-{self.session_id[:2]}",
            "nameSource": "derived",
            **(self._background_fields() if self.background else {}),
            "status": self.status,
            "updatedAt": now,
            "statusUpdatedAt": now,
        }
        if self.status == "waiting" and self.waiting_for:
            record["waitingFor"] = self.waiting_for
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.pid_file.with_name(f".{self.pid}.json.tmp")
        tmp.write_text(json.dumps(record, separators=(",", ":")))
        os.replace(tmp, self.pid_file)

    def _background_fields(self) -> dict[str, Any]:
        """A background worker's PID-file fields (2.1.332's: ``kind: bg``, its job id, the
        ``--name``), and its job folder (``jobs/<job>/state.json``), which tells a worker
        that runs a job from a pre-warmed spare."""
        job = self.session_id[:8]
        state = self.claude_dir / "jobs" / job / "state.json"
        if not state.exists():
            state.parent.mkdir(parents=True, exist_ok=True)
            data = {"state": "working", "name": self.background, "sessionId": self.session_id,
                    "cwd": self.cwd, "template": "bg"}  # fmt: skip
            state.write_text(json.dumps(data, indent=2))
        return {"kind": "bg", "jobId": job, "name": self.background, "nameSource": "user"}

    def remove_job(self) -> None:
        """A background session's job folder, as ``claude rm`` removes it (the demo is over):
        stopped, it would stay listed."""
        if self.background and self.session_id:
            shutil.rmtree(self.claude_dir / "jobs" / self.session_id[:8], ignore_errors=True)

    def remove_pid_file(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()

    def set_status(self, status: str, waiting_for: str | None = None) -> None:
        if (status, waiting_for) == (self.status, self.waiting_for):
            return
        self.status, self.waiting_for = status, waiting_for
        if self.live:
            self.write_pid_file()

    def show(self, *lines: str) -> None:
        self.lines.extend(lines)
        del self.lines[:-200]

    # ------------------------------------------------------------------ the CLI's actions

    def _fire(self, event: str, **kwargs: Any) -> None:
        # A fresh session (startup or /clear) names itself in the PID file before its
        # SessionStart hook, as the CLI does.
        if event == "SessionStart" and kwargs.get("source") != "compact":
            self.status, self.waiting_for = "idle", None
            self.write_pid_file()
        super()._fire(event, **kwargs)

    def start(self, source: str = "startup") -> None:
        self.dialog, self.turn_open, self.compacting = None, False, False
        self.lines = []
        super().start(source)

    def end(self, reason: str = "prompt_input_exit") -> None:
        was_live = self.live
        super().end(reason)
        self.dialog, self.turn_open, self.compacting = None, False, False
        if was_live and reason != "clear":
            self.remove_pid_file()
            self.show("", f"  (the session ended: {reason})")

    def prompt(self, text: str) -> None:
        self.show("", f"❯ {text}")
        self.turn_open = True
        super().prompt(text)
        self.set_status("busy")

    def say(self, text: str) -> None:
        self.show("", f"● {text}")
        super().say(text)

    def stream(self, text: str) -> None:
        self.show("", f"● {text}")
        super().stream(text)

    def tool(self, name: str, tool_input: dict[str, Any]) -> str:
        self.show("", f"● {name}({summary(tool_input)})")
        return super().tool(name, tool_input)

    def ask(self) -> None:
        self.dialog = self.pending[-1]
        self.field, self.chosen, self.feedback = "", None, None
        self.show("  ⎿  Waiting…")
        super().ask()
        self.set_status("waiting", "permission prompt")

    def remind(self) -> None:
        if self.dialog is not None:  # answered already: no reminder
            super().remind()

    def approve(self) -> None:
        """ "Yes": the dialog closes and the tool runs (its result comes with the script)."""
        self.dialog = None
        self.set_status("busy")

    def tool_done(self, output: str, is_error: bool = False) -> None:
        if not self.pending:
            return  # rejected or interrupted meanwhile
        if self.dialog is not None and self.dialog[0] == self.pending[0][0]:
            self.approve()  # nobody answered: the script's own choice is "Yes"
        first = output.splitlines()[0] if output else "(no output)"
        self.show(f"  ⎿  {first}")
        super().tool_done(output, is_error)

    def finish(self, text: str) -> None:
        super().finish(text)
        self.show("", f"● {text}")
        self._turn_over()

    def fail(self, error: str, text: str, status: int) -> None:
        super().fail(error, text, status)
        self.show("", f"  ⎿  {text}")
        self._turn_over()

    def reject(self) -> None:
        # The PID file turns idle before the transcript flush writes the records (measured).
        self.dialog = None
        self._turn_over()
        super().reject()
        self.show("  ⎿  Interrupted · What should Claude do instead?")

    def interrupt(self) -> None:
        self._turn_over()
        super().interrupt()
        self.show("  ⎿  Interrupted · What should Claude do instead?")

    def compact_start(self, trigger: str = "auto") -> None:
        self.compacting = True
        self.show("", "✻ Compacting conversation…")
        super().compact_start(trigger)

    def compact_end(self, trigger: str = "auto") -> None:
        super().compact_end(trigger)
        self.compacting = False
        self.show("", "✻ Conversation compacted (ctrl+o for history)")

    def agents_start(self, *agent_types: str) -> list[tuple[str, str]]:
        self.show(*(f"  ⎿  {kind} agent started" for kind in agent_types))
        return super().agents_start(*agent_types)

    def _turn_over(self) -> None:
        self.turn_open, self.compacting, self.dialog = False, False, None
        self.set_status("idle")


# ============================================================================ the process


class SimClaude:
    """The process: a :class:`LiveSession`, its script, its terminal (if any)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        claude_dir = Path(config["claude_dir"])
        self.hooks = InstalledHooks(
            claude_dir / "settings.json", Path(config["home"]), inherit_tmux=True
        )
        self.rng = random.Random(config.get("seed"))
        self.session = LiveSession(
            self.hooks,
            claude_dir=claude_dir,
            cwd=Path(config["cwd"]),
            model=config["model"],
            rng=self.rng,
            context=int(config.get("context", 30_000)),
            background=config.get("background"),
        )
        self.script = SCRIPTS[config["script"]]
        self.speed = float(config.get("speed", 1.0))
        self.stack: list[Iterator[float]] = []
        self.deadline = time.monotonic() + float(config.get("offset", 0)) / self.speed
        self.queued: list[str] = []
        self.typed = ""
        self.selected = 0
        self.stopping = False
        self.tty = sys.stdin.isatty()
        self.fd = sys.stdin.fileno()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._drawn: list[str] = []
        self._saved_tty: Any = None

    # ------------------------------------------------------------------ run

    def run(self, go_file: Path | None) -> int:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        os.set_blocking(wake_r, False)
        signal.set_wakeup_fd(wake_w)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, self._on_stop)
        signal.signal(signal.SIGWINCH, lambda *_: self._drawn.clear())
        if self.tty:
            self._saved_tty = termios.tcgetattr(self.fd)
            tty.setraw(self.fd)
            os.write(sys.stdout.fileno(), b"\x1b[?25l\x1b[H\x1b[2J")
        try:
            if go_file is not None and not self._wait_for(go_file, wake_r):
                return 0
            self._loop(wake_r)
        finally:
            with contextlib.suppress(Exception):
                self._close_all()
                self.session.end("other")
            self.session.remove_pid_file()
            self.session.remove_job()
            if self._saved_tty is not None:
                with contextlib.suppress(termios.error, OSError):
                    termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved_tty)
        return 0

    def _on_stop(self, signum: int, frame: object) -> None:
        self.stopping = True

    def _wait_for(self, go_file: Path, wake_r: int) -> bool:
        """Wait until the demo hands over the session (its seeded history) or stops."""
        while not self.stopping:
            if go_file.exists():
                state = json.loads(go_file.read_text())
                if state.get("session"):
                    self.session.restore(state["session"])
                self.rng.seed(state.get("seed"))
                self.session.context = int(state.get("context") or self.session.context)
                self.deadline = time.monotonic() + float(state.get("offset") or 0) / self.speed
                if self.session.live:
                    self.session.write_pid_file()
                return True
            select.select([wake_r], [], [], 0.05)
            _drain(wake_r)
        return False

    def _loop(self, wake_r: int) -> None:
        while not self.stopping:
            if time.monotonic() >= self.deadline:
                self._step()
            self._draw()
            timeout = min(0.5, max(0.0, self.deadline - time.monotonic()))
            fds = [wake_r, self.fd] if self.tty else [wake_r]
            ready, _, _ = select.select(fds, [], [], timeout)
            if wake_r in ready:
                _drain(wake_r)
            if self.tty and self.fd in ready:
                self._read_keys()

    def _step(self) -> None:
        s = self.session
        if self.queued and s.live and not s.turn_open and s.dialog is None:
            self.stack.append(user_turn(s, self.queued.pop(0)))
        if not self.stack:
            self.stack.append(self.script(s))
        top = self.stack[-1]
        try:
            pause = next(top)
        except StopIteration:
            self.stack.pop()
            self.deadline = time.monotonic()
            return
        except Exception as exc:  # a script bug must not end the session silently
            log(f"{exc!r}; restarting its script")
            self._close_all()
            self.deadline = time.monotonic() + 2.0
            return
        self.deadline = time.monotonic() + pause * self.rng.uniform(0.8, 1.25) / self.speed

    def _close_all(self) -> None:
        for gen in reversed(self.stack):
            with contextlib.suppress(Exception):
                gen.close()  # type: ignore[attr-defined]
        self.stack = []

    # ------------------------------------------------------------------ keys

    def _read_keys(self) -> None:
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            self.stopping = True  # the terminal is gone
            return
        if not data:
            self.stopping = True
            return
        if data.endswith(b"\x1b"):  # Esc alone, or the start of an arrow's sequence?
            more, _, _ = select.select([self.fd], [], [], ESC_WAIT_S)
            if more:
                data += os.read(self.fd, 4096)
        text = self._decoder.decode(data)
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\x1b":
                seq = text[i + 1 : i + 3]
                if seq in ("[A", "OA"):
                    self._key("up")
                    i += 3
                    continue
                if seq in ("[B", "OB"):
                    self._key("down")
                    i += 3
                    continue
                if seq[:1] in ("[", "O"):  # another sequence: skip to its final byte
                    j = i + 2
                    while j < len(text) and not ("@" <= text[j] <= "~"):
                        j += 1
                    i = j + 1
                    continue
                self._key("escape")
            elif ch in ("\r", "\n"):
                self._key("enter")
            elif ch in ("\x7f", "\x08"):
                self._key("backspace")
            elif ch == "\x03":
                self._key("ctrl-c")
            elif ch >= " ":
                self._key(ch)
            i += 1

    def _key(self, key: str) -> None:
        s = self.session
        if not s.live:
            return
        if s.dialog is not None and s.dialog[1] in ("AskUserQuestion", "ExitPlanMode"):
            self._form_key(key)
            return
        if s.dialog is not None:
            if key in ("up", "down"):
                self.selected = (self.selected + (1 if key == "down" else -1)) % 3
            elif key in ("1", "2") or (key == "enter" and self.selected in (0, 1)):
                self._answer_yes()
            elif key in ("3", "escape") or (key == "enter" and self.selected == 2):
                self._stop_turn(reject=True)
            return
        if key == "escape":
            if s.turn_open:
                self._stop_turn(reject=bool(s.pending))
        elif key == "enter":
            text, self.typed = self.typed.strip(), ""
            if text:
                self._submit(text)
        elif key == "backspace":
            self.typed = self.typed[:-1]
        elif key == "ctrl-c":
            self.typed = ""
        elif len(key) == 1:
            self.typed += key

    def _form_key(self, key: str) -> None:
        """A question or a plan: arrows move the selection through its rows; typing goes to the
        free-text row (Other, the plan's feedback) while it is selected; Enter answers with the
        selected row; Esc declines (as the permission dialog's No)."""
        s = self.session
        assert s.dialog is not None
        _, name, tool_input = s.dialog
        rows = dialog_rows(name, tool_input)
        text_row = rows - 2 if name == "AskUserQuestion" else 2
        if key in ("up", "down"):
            self.selected = max(0, min(rows - 1, self.selected + (1 if key == "down" else -1)))
        elif key == "escape":
            self._stop_turn(reject=True)
        elif key == "backspace" and self.selected == text_row:
            s.field = s.field[:-1]
        elif len(key) == 1 and self.selected == text_row:
            s.field += key
        elif key == "enter":
            if name == "AskUserQuestion":
                options = tool_input["questions"][0]["options"]
                if self.selected < len(options):
                    s.chosen = str(options[self.selected]["label"])
                elif self.selected == text_row and s.field.strip():
                    s.chosen = s.field.strip()
                else:
                    return  # "Chat about this", or Other left empty
            elif self.selected == text_row:
                if not s.field.strip():
                    return
                s.feedback = s.field.strip()
            s.field = ""
            self._answer_yes()

    def _answer_yes(self) -> None:
        self.session.approve()
        self.selected = 0
        self.deadline = time.monotonic()  # the script goes on at once: the tool runs

    def _stop_turn(self, *, reject: bool) -> None:
        if reject:
            self.session.reject()
        else:
            self.session.interrupt()
        self.selected = 0
        self._close_all()
        self.deadline = time.monotonic() + REST_S / self.speed

    def _submit(self, text: str) -> None:
        s = self.session
        if s.turn_open:
            self.queued.append(text)  # the CLI queues a prompt sent while busy
            s.show("", f"  ⎿  queued: {text[:100]}")
            return
        self.stack.append(user_turn(s, text))
        self.deadline = time.monotonic()

    # ------------------------------------------------------------------ screen

    def _draw(self) -> None:
        if not self.tty:
            return
        width, height = screen_size((160, 50))
        lines = render(self.session, self.typed, self.selected, width, height)
        if lines == self._drawn:
            return
        repaint(lines)
        self._drawn = lines


def _drain(fd: int) -> None:
    with contextlib.suppress(BlockingIOError, OSError):
        while os.read(fd, 512):
            pass


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pmux_widget.demo.sim_claude <config.json>", file=sys.stderr)
        return 2
    config = json.loads(Path(args[0]).read_text())
    go = config.get("go_file")
    return SimClaude(config).run(Path(go) if go else None)


if __name__ == "__main__":
    sys.exit(main())
