"""A tool call's two hooks, paired by ``tool_use_id`` (issue 28).

PreToolUse and PostToolUse are installed ``"async": true`` (Claude Code does not wait for
them), so their scripts race and the PostToolUse of a fast tool can reach the hub first, or
carry an earlier ``X-Pmux-Sent``. A PreToolUse whose PostToolUse was already seen describes a
tool call that is over: it may not bring its tool back, nor move the state.
"""

from __future__ import annotations

from . import signals as sig
from .tracking import Tracking

#: How many finished tool calls a session remembers. An async PreToolUse can trail its
#: PostToolUse by up to the script's 1 s on a loaded machine, and fast tools (Read) run 25
#: to 30 a second: 8 was too few (a Pre held back 0.3 s by the real-CLI test trails 7 to 10
#: tool calls, and at times came back as the current tool on CI).
KEEP = 64


def overtaken(tracking: Tracking, signal: sig.HookSignal) -> bool:
    """Is ``signal`` a PreToolUse whose tool call already finished (its PostToolUse seen)?"""
    return (
        isinstance(signal, sig.PreToolUse)
        and signal.tool_use_id is not None
        and signal.tool_use_id in tracking.tools_done
    )


def remember(tracking: Tracking, signal: sig.HookSignal) -> Tracking:
    """``tracking`` with a PostToolUse's tool call noted as finished."""
    if not isinstance(signal, sig.PostToolUse) or signal.tool_use_id is None:
        return tracking
    if signal.tool_use_id in tracking.tools_done:
        return tracking
    return tracking.replace(tools_done=(*tracking.tools_done[-(KEEP - 1) :], signal.tool_use_id))
