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

from ._version import __version__
from .api import (
    Wait,
    counts,
    history,
    hub,
    on,
    session,
    sessions,
    show,
    sidebar,
    start,
    stop,
    to_dataframe,
    wait_for,
    widget,
)
from .model import Session, State, Transition

__all__ = [
    "Session",
    "State",
    "Transition",
    "Wait",
    "__version__",
    "counts",
    "history",
    "hub",
    "on",
    "session",
    "sessions",
    "show",
    "sidebar",
    "start",
    "stop",
    "to_dataframe",
    "wait_for",
    "widget",
]
