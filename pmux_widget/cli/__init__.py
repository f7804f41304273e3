"""The terminal's front door: the ``pmux-widget`` command.

commands.py  the parser and the commands (install, status, serve, demo, doctor, the actions);
             :func:`main` is the console script's entry point (``pmux_widget.cli:main``) and
             ``python -m pmux_widget``'s
table.py     the sessions table ``status`` prints (and the widget's text form)
fleet.py     the fleet commands: ``status --fleet``, ``serve --fleet``, ``fleet forget``
notify.py    ``pmux-widget notify``: where notifications go, and their settings

Above the runtime, beside ``jupyter/`` and ``notebook/`` (import-linter's layers contract in
pyproject.toml).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pmux_widget.cli.commands import main


def __getattr__(name: str) -> object:
    # Imported when first called: a module that needs only the table does not load the parser
    # and every command's imports.
    if name == "main":
        from pmux_widget.cli.commands import main

        return main
    raise AttributeError(f"module 'pmux_widget.cli' has no attribute {name!r}")


__all__ = ["main"]
