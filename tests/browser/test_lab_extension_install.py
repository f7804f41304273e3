"""The wheel installs both extensions enabled, with nothing to build or enable by hand.

The wheel is built from this checkout (its front-ends already built) and pip-installed into a
fresh venv (which sees the project venv's packages, Jupyter among them, through a .pth file),
with empty user dirs. ``jupyter server extension list`` and ``jupyter labextension list`` then
say both are enabled and OK, and print no error line (a "Fail to get yarn configuration" there
reads as broken to a user).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.browser


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (argv, result.stdout[-2000:], result.stderr[-2000:])
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the wheel installed, over the project venv's other packages."""
    if not (ROOT / "pmux_widget" / "labextension" / "package.json").is_file():
        pytest.fail("the labextension is not built: make js")
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(out)], ROOT)
    [wheel] = out.glob("pmux_widget-*.whl")
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], ROOT)
    [site] = venv.glob("lib/python*/site-packages")
    outer = [p for p in sys.path if p.endswith("site-packages")]
    (site / "project-venv.pth").write_text("\n".join(outer) + "\n")
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "--no-deps", "-q", str(wheel)], ROOT)
    return venv


def test_pip_install_enables_both_extensions_without_an_error_line(
    venv: Path, tmp_path: Path
) -> None:
    [site] = venv.glob("lib/python*/site-packages")
    python = str(venv / "bin" / "python")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("JUPYTER") and key not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
    )
    # the module Jupyter imports is the installed wheel's, not this checkout's
    where = _run(
        [python, "-c", "import pmux_widget.jupyter as m; print(m.__file__)"], tmp_path, env
    )
    assert str(site) in where, where
    assert (venv / "share/jupyter/labextensions/pmux-widget/package.json").is_file()
    assert (venv / "etc/jupyter/jupyter_server_config.d/pmux_widget.json").is_file()
    # `jupyter server extension list` and `jupyter labextension list`, by their modules (the
    # `jupyter-*` scripts are the project venv's, bound to its python)
    servers = _run([python, "-m", "jupyter_server", "extension", "list"], tmp_path, env)
    labs = _run([python, "-m", "jupyterlab.labextensions", "list"], tmp_path, env)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", servers + labs)
    assert re.search(r"pmux_widget\.jupyter\s+enabled", plain), plain
    assert re.search(
        r"- Validating pmux_widget\.jupyter\.\.\.\s*\n\s*pmux_widget\.jupyter .*OK", plain
    ), plain
    assert re.search(r"pmux-widget v[\d.]+ enabled OK \(python, pmux-widget\)", plain), plain
    errors = [
        line
        for line in plain.splitlines()
        if re.search(r"\b(error|fail|failed|traceback|exception|warning)\b", line, re.I)
    ]
    assert errors == [], "\n".join(errors)
