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

from pmux_widget._version import __version__
from pmux_widget.api import (
    ActionError,
    Answer,
    Ask,
    Wait,
    counts,
    history,
    hub,
    new_session,
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
from pmux_widget.core.model import Session, State, Transition


def __getattr__(name: str) -> object:
    # The anywidget class loads ipywidgets: only when asked for, so `import pmux_widget` in a
    # plain script (or `pmux-widget status`) stays light.
    if name == "StatusWidget":
        from pmux_widget.widget import StatusWidget

        return StatusWidget
    raise AttributeError(f"module 'pmux_widget' has no attribute {name!r}")


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
    "counts",
    "history",
    "hub",
    "new_session",
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
