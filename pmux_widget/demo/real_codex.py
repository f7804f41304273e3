"""The ``--real`` demo's Codex session (issue 36): the real Codex TUI (the pinned
``@openai/codex``, :func:`~.codex_env.ensure_codex`) in a private tmux server, offline against
the scripted Responses API (:mod:`.scripted_responses`), with our hooks installed and trusted
in its own sealed ``CODEX_HOME`` (posting into the demo's pmux home), driven by keystrokes:
a prompt answered at once (review), then an escalated command whose approval waits for you
(approve or deny it from the widget; nobody does within :data:`APPROVAL_HOLD_S`: ``y``),
then a rest. Every process it starts (the TUI, Codex's shared daemon and its helper, the
scripted server's thread) ends with :meth:`RealCodex.stop`, by pid.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from .simulated import log

__all__ = ["APPROVAL_HOLD_S", "RealCodex"]

#: How long the approval is left for you before the script answers it.
APPROVAL_HOLD_S = 30.0
#: The rest between two rounds, and the budget of a wait for the screen.
REST_S = 20.0
WAIT_S = 120.0
#: What the round types (the scripted server's keywords: an answer; an escalated command).
PROMPTS = ("hello from the demo", "please SHELL now")


class RealCodex:
    """One real Codex TUI for the demo. ``start()`` raises ``CliUnavailable`` or ``OSError``
    when Codex or tmux cannot be had (the rest of the demo runs without it)."""

    def __init__(self, home: Path, work_dir: Path) -> None:
        self.home = Path(home)
        self.root = Path(work_dir) / ".codex-env"
        self.server: object | None = None
        #: the sealed Codex environment (``codex_env.CodexEnv``) and its TUI (``TmuxCodex``)
        self.env: object | None = None
        self.tc: object | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def describe(self) -> str:
        where = getattr(self.tc, "pane", "?")
        return (
            f"{'codex':<14} real codex in tmux  pane {where}: a prompt, then an approval left "
            f"for you {APPROVAL_HOLD_S:.0f} s (approve / deny from the widget), a rest"
        )

    def start(self) -> None:
        import shutil

        from pmux_widget import hooks
        from pmux_widget.system.home import PmuxHome

        from .claude_env import CliUnavailable
        from .codex_cli import TmuxCodex
        from .codex_env import CodexEnv, ensure_codex
        from .scripted_responses import ScriptedResponses

        if shutil.which("tmux") is None:
            raise CliUnavailable("tmux is not installed")
        codex = ensure_codex(timeout=300)
        server = ScriptedResponses()
        server.start()
        self.server = server
        try:
            env = CodexEnv(server.base_url, root=self.root)
            self.env = env
            hooks.install_codex(env.codex_home, PmuxHome(self.home))
            env.extra_env["PMUX_WIDGET_HOME"] = str(self.home)
            tc = TmuxCodex(env, codex)
            self.tc = tc
            tc.start(timeout=180)  # a home's first daemon copies Codex's binary: seconds
        except Exception:
            self.stop()
            raise
        self._thread = threading.Thread(target=self._run, name="demo-real-codex", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from .codex_cli import APPROVAL, TmuxCodex

        tc = self.tc
        assert isinstance(tc, TmuxCodex)
        while not self._stop.is_set():
            try:
                tc.type_prompt(PROMPTS[0], WAIT_S)
                tc.wait_for_screen("Worked for", WAIT_S)
                if self._stop.wait(REST_S / 2):
                    return
                tc.type_prompt(PROMPTS[1], WAIT_S)
                tc.wait_for_screen(APPROVAL, WAIT_S)
                if self._stop.wait(APPROVAL_HOLD_S):
                    return
                if APPROVAL.search(tc.screen()):  # nobody answered it: the script does
                    tc.send_keys("y")
            except Exception as exc:
                if self._stop.is_set():
                    return
                log(f"codex: a step failed ({exc.__class__.__name__}); going on")
                with contextlib.suppress(Exception):
                    tc.send_keys("Escape")
            if self._stop.wait(REST_S):
                return

    def stop(self) -> None:
        """End the driver, the TUI and every process of its home (by pid), the server."""
        from .codex_cli import TmuxCodex
        from .scripted_responses import ScriptedResponses

        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if isinstance(self.tc, TmuxCodex):
            with contextlib.suppress(Exception):
                self.tc.close()
        if isinstance(self.server, ScriptedResponses):
            self.server.stop()
        self.tc, self.server, self._thread = None, None, None
