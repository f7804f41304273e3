"""The notebook's front door: what ``import pmux_widget`` gives a cell.

api.py           the Python API (one hub per process; sessions, wait_for, on, show, sidebar,
                 to_dataframe, ...), re-exported lazily by ``pmux_widget/__init__.py``
widget.py        StatusWidget, the anywidget: one transport of a Feed
feed.py          Feed: what a status view is sent and may ask, whatever carries it (the
                 widget's traits, or the Jupyter server extension's websocket)
feed_history.py  the ``history`` value a feed keeps
frames.py        the history as pandas DataFrames (timeline, stats, to_dataframe)
waiting.py       Wait and Ask: awaiting sessions from cells
starting.py      new_session: a Claude Code session in a new terminal or tmux window

Above the runtime (it starts a hub and listens to it), beside ``jupyter/`` and ``cli/``
(import-linter's layers contract in pyproject.toml).
"""
