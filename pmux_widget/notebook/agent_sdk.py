"""Agent SDK runs answered from pmux-widget: ``can_use_tool`` and ``agent_options``.

```python
from claude_agent_sdk import query
import pmux_widget
async for message in query(prompt="...", options=pmux_widget.agent_options(cwd="...")):
    ...
```

The SDK drives its CLI with no terminal and asks each permission of ``can_use_tool``. Ours
registers the call with a hub as a pending decision (``runtime.decisions``) and waits: the row
is needs-input with what is asked, and approve / deny / answer / interrupt on it — from the
widget, the panel, ``Session.*``, the CLI, HTTP, the fleet or a phone — resolve it. The hub is
this process's when it runs one (``pmux_widget.start()``), else another process's on this
machine (the Jupyter server's, ``pmux-widget serve``) over loopback HTTP with our token; with
none, the call is refused as the SDK's default would (said once), never left hanging. A hub
that goes away while a call waits hands it to another live hub, or refuses it.

``claude_agent_sdk`` is the user's to install; it is imported only when a call comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Mapping
from typing import Any

from pmux_widget.hooks.hubs import live_hubs
from pmux_widget.runtime.decisions import Decision, Decisions, HubGone, find_session
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.home import PmuxHome

__all__ = ["agent_options", "can_use_tool", "decide"]

log = logging.getLogger("pmux_widget")

#: How long a call may look for its session in this process's hub (see server.SESSION_WAIT_S).
SESSION_WAIT_S = 3.0
_warned_no_hub = False


async def can_use_tool(tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
    """``ClaudeAgentOptions(can_use_tool=pmux_widget.can_use_tool)``: wait for the decision of
    whoever answers the row (see the module doc); a ``PermissionResultAllow`` or
    ``PermissionResultDeny``."""
    from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, PermissionUpdate

    tool_use_id = getattr(context, "tool_use_id", None) or ""
    decision = await decide(tool_name, tool_input, tool_use_id)
    if decision.behavior == "allow":
        updates = None
        if decision.mode:
            updates = [PermissionUpdate(type="setMode", mode=decision.mode, destination="session")]  # type: ignore[arg-type]
        return PermissionResultAllow(
            updated_input=decision.updated_input, updated_permissions=updates
        )
    return PermissionResultDeny(message=decision.message, interrupt=decision.interrupt)


def agent_options(**kw: Any) -> Any:
    """``ClaudeAgentOptions(**kw)`` with ``can_use_tool`` set to ours (unless ``kw`` sets one)."""
    from claude_agent_sdk import ClaudeAgentOptions

    kw.setdefault("can_use_tool", can_use_tool)
    return ClaudeAgentOptions(**kw)


async def decide(tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str) -> Decision:
    """The decision for one call: from this process's hub, else another live hub's; with no
    hub, refused (the SDK's own default)."""
    from pmux_widget.notebook import api

    own = api._hub if api._hub is not None and api._hub.running else None
    home = own.home if own is not None else PmuxHome.resolve()
    tried: set[int] = set()
    for _ in range(3):  # a hub that stops while the call waits hands it to the next one
        if own is not None and own.port not in tried:
            tried.add(own.port)
            decision = await _in_process(own, tool_name, tool_input, tool_use_id)
            if decision is not None:
                return decision
            continue
        others = [h for h in live_hubs(home) if h.port not in tried]
        if not others:
            break
        for info in others:
            tried.add(info.port)
            decision = await _over_http(info.port, home, tool_name, tool_input, tool_use_id)
            if decision is not None:
                return decision
    return _no_hub(tool_name)


def _no_hub(tool_name: str) -> Decision:
    global _warned_no_hub
    if not _warned_no_hub:
        _warned_no_hub = True
        log.warning(
            "pmux-widget: no hub runs here to ask for permissions (pmux_widget.start(), the "
            "Jupyter server's extension or `pmux-widget serve`): tool calls that need one are "
            "refused, as the SDK does with no can_use_tool"
        )
    return Decision(
        "deny",
        message=f"{tool_name} needs approval, and no pmux-widget hub runs to ask for it",
        by="pmux-widget (no hub)",
    )


async def _in_process(
    hub: Hub, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str
) -> Decision | None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SESSION_WAIT_S
    pid = os.getpid()
    while True:
        sid = await loop.run_in_executor(None, find_session, hub.fleet, pid, tool_use_id)
        if sid is not None or loop.time() >= deadline:
            break
        await asyncio.sleep(0.05)
    if sid is None:
        return None
    registry: Decisions = hub.decisions
    try:
        pending = registry.register(sid, tool_use_id, tool_name, tool_input)
    except HubGone:
        return None
    try:
        return await asyncio.wrap_future(pending.future)
    except HubGone:
        return None
    except asyncio.CancelledError:
        registry.drop(pending)  # the run ended or the cell was interrupted: no dialog left
        raise


async def _over_http(
    port: int, home: PmuxHome, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str
) -> Decision | None:
    """``POST /api/decisions`` to the hub on ``port`` and wait for its answer (a long poll; a
    plain socket, so that a cancelled call closes it at once and the hub drops the call).
    None: that hub knows no session of ours, stopped, or is gone."""
    body = json.dumps(
        {
            "pid": os.getpid(),
            "tool_use_id": tool_use_id,
            "tool_name": tool_name,
            "input": dict(tool_input),
        }
    ).encode()
    try:
        token = home.token_file.read_text().strip()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return None
    try:
        head = (
            f"POST /api/decisions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"X-Pmux-Token: {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        writer.write(head.encode() + body)
        await writer.drain()
        raw = await reader.read()  # until the hub closes: its answer, or nothing (gone)
    except OSError:
        return None
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    status, _, payload = raw.partition(b"\r\n\r\n")
    if not status.startswith(b"HTTP/1.1 200"):
        return None
    try:
        return Decision.from_json(json.loads(_unchunked(status, payload)))
    except ValueError:
        return None


def _unchunked(head: bytes, payload: bytes) -> bytes:
    """The body of a response, chunked transfer encoding undone (Tornado chunks a body it
    finishes without a Content-Length only when the client speaks HTTP/1.1 keep-alive)."""
    if b"transfer-encoding: chunked" not in head.lower():
        return payload
    out, rest = b"", payload
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2 :]
    return out
