"""Actions on a session whose JupyterLab terminal belongs to another process's Jupyter server:
asked of that server's hub (its HTTP action route), which runs every check again on its side."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping, Sequence

from pmux_widget.core.model import ActionName, Session
from pmux_widget.system import jupyter_terminals
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.json_post import HttpRefused, post_json

from .action_outcome import ActionError, ActionResult

__all__ = ["FORWARD_TIMEOUT_S", "InAnotherProcess", "actions_request", "forward"]


class InAnotherProcess(Exception):
    """The session's Claude runs in a JupyterLab terminal of another process's server."""

    def __init__(self, server: jupyter_terminals.ServerTerminals, terminal: str) -> None:
        super().__init__(terminal)
        self.server = server
        self.terminal = terminal


#: How long a forwarded action may take (it waits for the screen, as a local one does).
FORWARD_TIMEOUT_S = 30.0


def forward(
    view: object,
    elsewhere: InAnotherProcess,
    session: Session,
    action: ActionName,
    text: str | None,
    dialog: str | None,
    token: str | None,
    *,
    options: Sequence[str] | None = None,
    mode: str | None = None,
) -> ActionResult:
    """Ask the hub of the Jupyter server that holds the terminal to act (its HTTP action
    route: token, loopback); its answer is ours, its refusal our refusal."""
    where = f"JupyterLab terminal {elsewhere.terminal}"
    port = elsewhere.server.hub_port
    if port is None:
        raise ActionError(
            f"{session.name} runs in {where}, and that Jupyter server runs no pmux-widget hub "
            "to type into it (c.PmuxWidget.hub = False or PMUX_WIDGET_SERVER_HUB=0)"
        )
    home = getattr(view, "home", None)
    home = home if isinstance(home, PmuxHome) else PmuxHome.resolve()
    body = {
        "action": action,
        "text": text,
        "dialog": dialog,
        "token": token,
        "options": list(options) if options else None,
        "mode": mode,
    }
    try:
        answer = post_json(
            actions_request(port, session.session_id, body, home), timeout=FORWARD_TIMEOUT_S
        )
    except HttpRefused as refused:
        raise ActionError(
            str(refused.reason or f"the Jupyter server's hub answered HTTP {refused.code}"),
            unknown=refused.code == 404,
        ) from None
    except (OSError, ValueError) as exc:
        raise ActionError(
            f"{session.name} runs in {where}; its Jupyter server's hub did not answer ({exc})"
        ) from None
    return ActionResult(
        session.session_id,
        action,
        (),
        queued=bool(answer.get("queued")) if isinstance(answer, dict) else False,
        dialog=answer.get("dialog") if isinstance(answer, dict) else None,
    )


def actions_request(
    port: int, session_id: str, body: Mapping[str, object], home: PmuxHome
) -> urllib.request.Request:
    """A POST of ``body`` (its None fields left out) to the actions route of the hub on
    ``port`` (one of this machine's, so ``home``'s token is its token)."""
    return urllib.request.Request(
        f"http://127.0.0.1:{port}/api/sessions/{session_id}/actions",
        data=json.dumps({k: v for k, v in body.items() if v is not None}).encode(),
        method="POST",
        headers={"X-Pmux-Token": home.token(), "Content-Type": "application/json"},
    )
