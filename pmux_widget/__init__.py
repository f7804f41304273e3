"""pmux-widget: live status of every Claude Code session on this machine, inside Jupyter.

```python
import pmux_widget
pmux_widget.show()                      # the widget, live, in this cell
pmux_widget.sidebar()                   # ... or docked in JupyterLab's right sidebar
pmux_widget.sessions()                  # every live session, most urgent first
await pmux_widget.wait_for(sid, "review")
pmux_widget.on("needs-input", lambda s: print(s.name, "needs you"))
```
"""

from typing import TYPE_CHECKING

from pmux_widget._version import __version__

if TYPE_CHECKING:
    from pmux_widget.core.model import Session, State, Transition
    from pmux_widget.notebook.agent_sdk import agent_options, can_use_tool
    from pmux_widget.notebook.api import (
        ActionError,
        Answer,
        Ask,
        Wait,
        counts,
        history,
        hub,
        new_session,
        notify_settings,
        on,
        session,
        sessions,
        show,
        sidebar,
        start,
        stats,
        status_widget,
        stop,
        timeline,
        to_dataframe,
        wait_for,
    )
    from pmux_widget.notebook.widget import StatusWidget

# Imported when first used (PEP 562): the Jupyter server imports this package to load its
# extension (pmux_widget.jupyter), and the API's imports (the runtime, libtmux) cost it
# 0.2-0.8 s, printed as "took 0.2s to import" by `jupyter server extension list`. The anywidget
# class loads ipywidgets: a plain script (or `pmux-widget status`) never pays for it.
_LAZY = {
    **dict.fromkeys(
        [
            "ActionError",
            "Answer",
            "Ask",
            "Wait",
            "counts",
            "history",
            "hub",
            "new_session",
            "notify_settings",
            "on",
            "session",
            "sessions",
            "show",
            "sidebar",
            "start",
            "stats",
            "status_widget",
            "stop",
            "timeline",
            "to_dataframe",
            "wait_for",
        ],
        "pmux_widget.notebook.api",
    ),
    **dict.fromkeys(("Session", "State", "Transition"), "pmux_widget.core.model"),
    "StatusWidget": "pmux_widget.notebook.widget",
    # the Claude Agent SDK's permission handler (claude_agent_sdk is imported when called)
    **dict.fromkeys(("can_use_tool", "agent_options"), "pmux_widget.notebook.agent_sdk"),
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pmux_widget' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ActionError",
    "Answer",
    "Ask",
    "Session",
    "State",
    "StatusWidget",
    "Transition",
    "Wait",
    "__version__",
    "agent_options",
    "can_use_tool",
    "counts",
    "history",
    "hub",
    "new_session",
    "notify_settings",
    "on",
    "session",
    "sessions",
    "show",
    "sidebar",
    "start",
    "stats",
    "status_widget",
    "stop",
    "timeline",
    "to_dataframe",
    "wait_for",
]
