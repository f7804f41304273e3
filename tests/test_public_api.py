"""The public face does not move when the package's rooms do: every name of DESIGN.md's Python
API under ``import pmux_widget``, the ``pmux-widget`` command (its console-script entry point,
as installed) and ``python -m pmux_widget``.

Nothing here names a module inside the package: the tests pass the same before and after a
module moves (issue 27's move of the notebook and terminal sides into their folders).
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import pmux_widget

# DESIGN.md "Python API", plus what the README and docs/usage.md show of it.
PUBLIC = {
    "start",
    "stop",
    "show",
    "sidebar",
    "sessions",
    "session",
    "counts",
    "wait_for",
    "on",
    "to_dataframe",
    "history",
    "timeline",
    "stats",
    "new_session",
    "notify_settings",
    "status_widget",
    "hub",
    "Session",
    "State",
    "Transition",
    "ActionError",
    "StatusWidget",
    "Answer",
    "Ask",
    "Wait",
    "__version__",
    "can_use_tool",
    "agent_options",
}
SESSION_ACTIONS = ("dismiss", "approve", "deny", "interrupt", "send", "ask")
SUBCOMMANDS = ("install", "uninstall", "status", "serve", "demo", "doctor", "approve", "deny")


def test_every_public_name_is_exported_and_resolves():
    assert set(pmux_widget.__all__) >= PUBLIC
    assert set(dir(pmux_widget)) >= PUBLIC
    for name in pmux_widget.__all__:
        assert getattr(pmux_widget, name) is not None, name
    with pytest.raises(AttributeError):
        _ = pmux_widget.no_such_name


def test_the_names_are_what_design_md_says():
    for name in ("start", "stop", "show", "sidebar", "sessions", "session", "counts", "on"):
        assert callable(getattr(pmux_widget, name)), name
    assert "session_id" in inspect.signature(pmux_widget.wait_for).parameters
    assert issubclass(pmux_widget.ActionError, Exception)
    for action in SESSION_ACTIONS:
        assert callable(getattr(pmux_widget.Session, action)), action
    import anywidget

    assert issubclass(pmux_widget.StatusWidget, anywidget.AnyWidget)


def test_import_stays_light():
    """``import pmux_widget`` (which the Jupyter server does to load its extension) loads
    neither the runtime's libraries nor the widget's: the API is imported when first used."""
    code = (
        "import sys, pmux_widget; "
        "print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('libtmux', 'ipywidgets', 'anywidget', 'tornado')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def _help(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_python_dash_m_pmux_widget_help():
    out = _help([sys.executable, "-m", "pmux_widget", "--help"])
    assert out.startswith("usage: pmux-widget")
    for command in SUBCOMMANDS:
        assert command in out, command


def test_the_console_script_entry_point_loads_and_runs():
    (ep,) = [e for e in entry_points(group="console_scripts") if e.name == "pmux-widget"]
    main = ep.load()
    assert callable(main)
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    script = Path(sys.executable).parent / "pmux-widget"
    if not script.exists():
        pytest.skip(f"no installed {script} (not a venv install)")
    assert _help([str(script), "--help"]) == _help([sys.executable, "-m", "pmux_widget", "--help"])


def test_the_package_top_holds_only_its_faces():
    """Every other module lives in a layer's folder (docs/architecture.md, "The house")."""
    top = Path(pmux_widget.__file__).parent
    loose = sorted(p.name for p in top.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "_version.py"]
