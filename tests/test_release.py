"""Release-ready (issue 30 item 6): ``python -m build`` makes an sdist and a wheel that
``twine check`` passes, with the licence, the classifiers and the project URLs of a JupyterLab
extension; the sdist, unpacked where there is no npm and no checkout, builds a wheel that
carries the prebuilt labextension and the widget bundle.

Slow (~1 min: two isolated builds); needs the front-end built (``make js``) and the build
backend from the package index (pip's cache), as ``make test`` has.
"""

from __future__ import annotations

import email.parser
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from pmux_widget._version import __version__

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent

pytestmark = pytest.mark.slow

#: What a wheel must carry so that `pip install` gives both extensions, enabled, built.
WHEEL_HAS = (
    "pmux_widget/static/widget.js",
    "pmux_widget/static/widget.css",
    "{data}share/jupyter/labextensions/pmux-widget/package.json",
    "{data}share/jupyter/labextensions/pmux-widget/install.json",
    "{data}share/jupyter/labextensions/pmux-widget/static/style.js",
    "{data}share/jupyter/labextensions/pmux-widget/schemas/pmux-widget/plugin.json",
    "{data}etc/jupyter/jupyter_server_config.d/pmux_widget.json",
    "pmux_widget-{version}.dist-info/licenses/LICENSE",
)
CLASSIFIERS = (
    "Framework :: Jupyter :: JupyterLab :: 4",
    "Framework :: Jupyter :: JupyterLab :: Extensions",
    "Framework :: Jupyter :: JupyterLab :: Extensions :: Prebuilt",
    "License :: OSI Approved :: MIT License",
    "Programming Language :: Python :: 3.10",
)


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args,
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


def _check_wheel(wheel: Path) -> email.message.Message:
    names = set(zipfile.ZipFile(wheel).namelist())
    data = f"pmux_widget-{__version__}.data/data/"
    wanted = {n.format(data=data, version=__version__) for n in WHEEL_HAS}
    assert not wanted - names, f"{wheel.name} lacks {sorted(wanted - names)}"
    assert not [n for n in names if n.startswith("pmux_widget/labextension/")], (
        "the labextension belongs in share/jupyter only"
    )
    meta = zipfile.ZipFile(wheel).read(f"pmux_widget-{__version__}.dist-info/METADATA")
    return email.parser.BytesParser().parsebytes(meta)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ROOT / "pmux_widget" / "labextension" / "package.json").exists():
        pytest.fail("the front-end is not built: make js", pytrace=False)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], ROOT)
    return out


def test_build_makes_an_sdist_and_a_wheel_that_twine_passes(dist: Path) -> None:
    [sdist] = dist.glob("*.tar.gz")
    [wheel] = dist.glob("*.whl")
    assert sdist.name == f"pmux_widget-{__version__}.tar.gz"
    checked = _run(
        [sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)], ROOT
    )
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    meta = _check_wheel(wheel)
    assert set(CLASSIFIERS) <= set(meta.get_all("Classifier") or []), meta.get_all("Classifier")
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Source", "Issues", "Changelog"} <= set(urls), urls
    assert meta["License"] == "MIT" and meta["Version"] == __version__
    with tarfile.open(sdist) as archive:
        names = set(archive.getnames())
    top = f"pmux_widget-{__version__}/"
    for kept in ("LICENSE", "CHANGELOG.md", "pmux_widget/static/widget.js",
                 "pmux_widget/labextension/package.json", "js/lab/package.json"):  # fmt: skip
        assert top + kept in names, kept
    assert not [n for n in names if "/node_modules/" in n or n.startswith(top + ".venv")]


def test_the_sdist_unpacked_without_npm_builds_a_complete_wheel(dist: Path, tmp_path: Path) -> None:
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data")
    unpacked = tmp_path / f"pmux_widget-{__version__}"
    out = tmp_path / "out"
    # PATH holds this venv's bin only: no npm, no node, no git; a checkout is nowhere near.
    built = _run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(unpacked)],
        tmp_path,
        PATH=str(VENV_BIN),
    )
    assert "Skipping build" in built.stdout + built.stderr  # the prebuilt assets were used
    [wheel] = out.glob("*.whl")
    _check_wheel(wheel)


def test_changelog_and_licence() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, re.M)
    assert versions and versions[0] == __version__, "CHANGELOG.md's newest entry is not ours"
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "pmux-widget contributors" in licence
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text()


def test_install_json_comes_with_the_labextension_folder() -> None:
    """One shared-data folder: ``make js`` puts install.json inside the labextension. Mapped as
    a file of its own, an editable install (``make install`` after ``make js``) wrote a copy
    there through the venv's link to the folder, and the next wheel held two files at one
    path (hatch refused to build it)."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    shared = pyproject.split("[tool.hatch.build.targets.wheel.shared-data]")[1].split("\n[")[0]
    assert re.findall(r'= "(share/jupyter/labextensions/[^"]*)"', shared) == [
        "share/jupyter/labextensions/pmux-widget"
    ]
    built = ROOT / "pmux_widget" / "labextension" / "install.json"
    assert built.read_text() == (ROOT / "install.json").read_text(), "make js"
