"""`.ci/run` and `make test` on a fresh machine.

- `.ci/run` and the Makefile call into the package by name: a rename must fail here, not
  only on CI.
- `make test` installs the pinned Claude Code CLIs (`make clis`) before pytest starts, with
  retries and npm's error shown; a CLI that cannot be had is one line with its fix (and a
  failure with CI set).
- pytest ends with one line per part it could not have, its reason and its fix; CI fails
  on them (tests/skip_summary.py): never a silent skip.
"""

from __future__ import annotations

import importlib
import os
import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pmux_widget.demo.claude_env import CLI_VERSIONS, SDK_BUNDLED, CliUnavailable, ensure_cli
from pmux_widget.demo.codex_env import CODEX_VERSION, ensure_codex

from .skip_summary import classify

ROOT = Path(__file__).resolve().parent.parent
#: the pins npm installs (the newest comes from the Agent SDK's wheel)
NPM_VERSIONS = [v for v in CLI_VERSIONS if v not in SDK_BUNDLED]
CI_RUN = ROOT / ".ci" / "run"
MAKEFILE = ROOT / "Makefile"


def test_ci_run_and_makefile_name_modules_that_exist() -> None:
    for script in (CI_RUN, MAKEFILE):
        text = script.read_text()
        for module_name, names in re.findall(r"from ([\w.]+) import ([\w, ]+?);", text):
            module = importlib.import_module(module_name)
            for name in (n.strip() for n in names.split(",")):
                assert hasattr(module, name), f"{script.name} imports {name} from {module_name}"
        for module_name in re.findall(r"\$\(PY\) -m ([\w.]+)|python -m ([\w.]+)", text):
            name = next(n for n in module_name if n)
            assert importlib.util.find_spec(name), f"{script.name} runs -m {name}: missing"
    assert "CI=1" in CI_RUN.read_text()  # CI fails instead of skipping
    assert re.search(r"^make test$", CI_RUN.read_text(), re.M)


def test_make_test_installs_the_clis_before_pytest() -> None:
    dry = subprocess.run(
        ["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()
    clis = next(i for i, line in enumerate(dry) if "devtools.install_clis" in line)
    pytest_at = next(
        i for i, line in enumerate(dry) if re.search(r"bin/pytest\b|devtools\.test_shards", line)
    )
    assert clis < pytest_at, dry


def _install_clis(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PMUX_CLAUDE_CLI", "CI"))}
    return subprocess.run(
        [sys.executable, "-m", "devtools.install_clis", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_without_npm_one_line_per_cli_says_how_to_get_it(tmp_path: Path) -> None:
    # a PATH with python's own directory only: no npm, no node
    env = {
        "PATH": str(Path(sys.executable).parent),
        "PMUX_CLAUDE_CACHE": str(tmp_path),
        "PMUX_CODEX_CACHE": str(tmp_path / "codex"),
    }
    done = _install_clis(env)
    assert done.returncode == 0, done.stderr  # without CI the run goes on
    lines = [line for line in done.stderr.splitlines() if "MISSING" in line]
    # the CLI the Agent SDK bundles comes from its wheel (the test extra installs it): no npm
    assert [line.split(":")[1].strip() for line in lines] == [
        *(f"MISSING Claude Code CLI {v}" for v in NPM_VERSIONS),
        f"MISSING Codex CLI {CODEX_VERSION}",
    ]
    for line in lines:
        assert "npm is not on PATH" in line
        assert line.endswith("-> fix: sudo apt-get install nodejs npm && make clis"), line
    assert "attempt 1/3" in done.stdout and "attempt 2/3" not in done.stdout  # no npm: no retry
    assert _install_clis({**env, "CI": "1"}).returncode == 1  # CI: the step fails


def test_a_registry_that_refuses_is_retried_and_npm_says_why(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on: the registry is down
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        "PMUX_CLAUDE_CACHE": str(tmp_path / "clis"),
        "npm_config_registry": f"http://127.0.0.1:{port}/",
        "npm_config_cache": str(tmp_path / "npm-cache"),  # no stale copy of the package
        "npm_config_fetch_retries": "0",
        "npm_config_fetch_timeout": "10000",
    }
    done = _install_clis(env, "--attempts", "2", "--pause", "0.1", NPM_VERSIONS[-1])
    assert "attempt 1/2 failed: npm install failed" in done.stdout, done.stdout
    assert "attempt 2/2 failed" in done.stdout
    assert "ECONNREFUSED" in done.stdout  # npm's own words reach the user
    [line] = [line for line in done.stderr.splitlines() if "MISSING" in line]
    assert line.endswith("-> fix: make clis"), line


def test_installed_clis_answer_at_once() -> None:
    try:
        for version in CLI_VERSIONS:
            ensure_cli(version)
    except CliUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"real Claude Code CLI unavailable: {exc}")
    try:
        ensure_codex()
    except CliUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"real Codex CLI unavailable: {exc}")
    done = _install_clis({})
    assert done.returncode == 0, done.stderr
    assert [line.split(" (")[0] for line in done.stdout.splitlines()] == [
        *(f"clis: claude {v} ready" for v in CLI_VERSIONS),
        f"clis: codex {CODEX_VERSION} ready",
    ]


# ---------------------------------------------------------------- the end of a pytest run

SKIPPING = """
    import pytest

    @pytest.mark.parametrize("cli_version", ["2.1.197", "2.1.332"])
    def test_cli(cli_version):
        if cli_version == "2.1.332":
            pytest.skip("real Claude Code CLI unavailable: npm install failed: npm error 503")
        pytest.skip("CLI 2.1.197: does not apply to this CLI version")

    @pytest.mark.parametrize("n", range(3))
    def test_browser(n):
        pytest.skip("browser tests need Chromium + JupyterLab: /usr/bin/chromium not found "
                    "(Debian package `chromium`)")

    @pytest.mark.skipif(True, reason="needs tmux")
    def test_tmux():
        pass

    def test_shell():
        pytest.skip("yash not installed")

    def test_odd():
        pytest.skip("the moon is in the wrong phase")

    def test_runs():
        pass
"""


def _run_skipping(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        "from tests.skip_summary import pytest_sessionfinish, pytest_terminal_summary  # noqa\n"
    )
    (tmp_path / "test_parts.py").write_text(textwrap.dedent(SKIPPING))
    base = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rN", str(tmp_path)],
        cwd=tmp_path,
        env={**base, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_run_ends_with_one_line_per_missing_part_and_its_fix(tmp_path: Path) -> None:
    done = _run_skipping(tmp_path)
    assert done.returncode == 0, done.stdout
    lines = [line for line in done.stdout.splitlines() if line.startswith("NOT RUN ")]
    assert lines == [
        "NOT RUN browser suites (Chromium + JupyterLab) (3 tests): /usr/bin/chromium not found "
        "(Debian package `chromium`) -> fix: sudo apt-get install chromium   (the tests use "
        "/usr/bin/chromium)",
        "NOT RUN other /bin/sh shells (hook script) (1 test): yash not installed -> fix: "
        "sudo apt-get install busybox ksh mksh yash zsh dash",
        "NOT RUN real Claude Code CLI 2.1.332 (1 test): npm install failed: npm error 503 -> "
        "fix: make clis   (the pinned CLIs, into .cache/claude-code/; or PMUX_CLAUDE_CLI=<binary>)",
        "NOT RUN the moon is in the wrong phase (1 test): the moon is in the wrong phase -> "
        "fix: see the reason (no known fix)",
        "NOT RUN tmux (1 test): needs tmux -> fix: sudo apt-get install tmux",
    ], done.stdout
    assert "skipped by design: 1 test" in done.stdout


def test_with_ci_a_missing_part_fails_the_run(tmp_path: Path) -> None:
    done = _run_skipping(tmp_path, CI="1")
    assert done.returncode == 1, done.stdout
    assert "CI is set: every part must run, so this run fails" in done.stdout


@pytest.mark.parametrize(
    ("reason", "nodeid", "part"),
    [
        ("real Claude Code CLI required (CI / PMUX_REQUIRE_CLAUDE): x", "t.py::a[2.1.197]",
         "real Claude Code CLI 2.1.197"),
        ("/usr/bin/chromium is missing (apt-get install chromium); set CI=1 to fail instead",
         "t.py::b", "browser suites (Chromium + JupyterLab)"),
        ("nats-server not installed", "t.py::c", "nats-server and nats-py (fleet suites)"),
        ("could not import 'grimp': No module named 'grimp'", "t.py::d", "Python package grimp"),
        ("Notebook 7 is not installed", "t.py::e", "Notebook 7"),
    ],
)  # fmt: skip
def test_the_suites_own_skip_reasons_are_known_parts(reason: str, nodeid: str, part: str) -> None:
    assert classify(reason, nodeid)[0] == part
    assert classify(reason, nodeid)[2] != "see the reason (no known fix)"
