"""Exactly once with the real hubs: the Jupyter server extension's hub and ``pmux-widget
serve`` on one home, two Apprise ``json://`` channels added with ``pmux-widget notify add``
while both run, a moment before a session's turn ends. The review reaches each channel once.

Each run starts afresh (its own home, server, ``serve`` and channels): what is under test is
the first moments of a channel, in both hubs. The hooks are the installed command run by
``sh -c`` as Claude Code runs it; local HTTP servers stand in for the channels.

``PMUX_ONCE_HUBS_ITERATIONS`` sets the number of runs (``make stress``: 100).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmux_widget.notify.delivery import failing, read_health

from .helpers import wait_until
from .jupyter_ext import Hooks, LabServer
from .notify_servers import Recorder, Request

STRESS = os.environ.get("PMUX_STRESS") == "1"
ITERATIONS = int(os.environ.get("PMUX_ONCE_HUBS_ITERATIONS") or (100 if STRESS else 2))


#: the server runs our extension only (JupyterLab's, the LSP's, ... make no difference here and
#: double the start-up on a loaded machine)
ONLY_OURS = (
    "--ServerApp.jpserver_extensions={'jupyterlab': False, 'jupyter_lsp': False,"
    " 'notebook': False, 'notebook_shim': False, 'jupyter_server_terminals': False}"
)


@pytest.fixture
def http() -> Iterator[Recorder]:
    server = Recorder().start()
    yield server
    server.stop()


def _cli(env: dict[str, str], *argv: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pmux_widget", *argv], env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done


def _claims(home: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(f"file:{home / 'notify.db'}?mode=ro", uri=True)
    try:
        return [(str(k), str(d), str(h)) for k, d, h in
                db.execute("SELECT key, dest, hub FROM sent ORDER BY rowid")]  # fmt: skip
    finally:
        db.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def one_run(tmp: Path, http: Recorder, n: int) -> None:
    """Run ``n``: the first channel is added before ``serve`` starts on odd runs (then both
    hubs run a notifier), once both run on even ones (then ``serve`` runs none: nothing was
    configured when it started); the second channel always once both run. Every fourth run
    the second channel answers after the hubs stopped waiting (a slow service on a loaded
    machine), while the first one's send ends: the message may have arrived, so it is never
    sent again."""
    sid = f"6c1d0a9e-0000-4000-8000-{n:012d}"
    server = LabServer(tmp, env={"PMUX_WIDGET_NOTIFY_DELAY": "0"}, args=(ONLY_OURS,))
    env = server.env
    first, second = f"/{n}/first", f"/{n}/second"
    # every fourth run, the second channel answers too late, and the first one only once the
    # second one's request came (so the first send ends while the second waits): the late one
    # is never sent again (issue 37)
    slow = n % 4 == 3
    if slow:
        http.delay[second] = 12.0
        second_in = threading.Event()

        def gate(req: Request) -> None:
            if req.path == first:
                second_in.wait(60)
            elif req.path == second:
                second_in.set()

        http.inspect = gate
    _cli(env, "notify", "settings", "cooldown_s=0")
    if n % 2:
        _cli(env, "notify", "add", f"json://127.0.0.1:{http.port}{first}")
    with (tmp / "serve.log").open("wb") as log:
        serve = subprocess.Popen(
            [sys.executable, "-m", "pmux_widget", "serve"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        server.start()
        hooks = Hooks(server)
        # a deadline for two starts on a loaded machine (run ~70 of 100 took over 60 s at
        # load ~15): the failure says which hub is missing, with serve's log
        wait_until(
            lambda: len(server.runtime_files()) == 2,
            180,
            what=lambda: (
                f"run {n}: two hubs; running: {server.runtime_files()}; serve's log: "
                f"{(tmp / 'serve.log').read_text(errors='replace')[-2000:]}"
            ),
        )
        hooks.fire("UserPromptSubmit", sid, prompt="run the tests")
        for path in (first, second)[n % 2 :]:
            _cli(env, "notify", "add", f"json://127.0.0.1:{http.port}{path}")
        hooks.fire("Stop", sid)
        wait_until(lambda: http.count(first) and http.count(second), 60, what="the review")
        if slow:  # its sender gave up waiting for the answer (a hub's timeout is 10 s)
            marker = f":{http.port}{second}?"  # in the channel's masked name
            wait_until(
                lambda: [e for e in failing(server.pmux) if marker in str(e.get("label"))],
                60,
                what=lambda: f"the slow channel's failure: {read_health(server.pmux)}",
            )
    finally:
        # a clean stop lets each hub's senders finish what they queued
        _stop(serve)
        server.stop()
        http.inspect = None
    got = {path: [r.json()["title"] for r in http.requests if r.path == path]
           for path in (first, second)}  # fmt: skip
    assert got == {first: ["Done · acme-api"], second: ["Done · acme-api"]}, (
        f"run {n}: {got}; the claims: {_claims(server.pmux.root)}"
    )


@pytest.mark.timeout(120 * ITERATIONS)  # a run takes 15-45 s on a loaded 2-core machine
def test_a_review_reaches_each_channel_added_while_two_hubs_run_once(
    tmp_path: Path, http: Recorder
) -> None:
    for n in range(ITERATIONS):
        one_run(tmp_path / f"run-{n}", http, n)
