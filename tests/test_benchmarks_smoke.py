"""The benchmark runner works (``python -m benchmarks --quick --only hooks``).

No timing is asserted: budgets are ``make bench``'s business, and a loaded machine may miss
them. This only checks that the runner runs a module, prints the combined table, writes it
where asked and exits 0 or 1 (2 would mean a module crashed).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(120)
def test_runner_quick_hooks(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "hooks", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "crashed" not in proc.stdout
    for budget in ("P1 hook / bare curl", "P2 hook, hub hung", "P2 hook, no hub"):
        assert budget in proc.stdout
    text = out.read_text()
    assert text.startswith("# Benchmark results")
    assert "| benchmark | value | budget | result |" in text
    assert "P1 hook runs accepted by the live hub" in text


def test_every_registered_module_imports() -> None:
    """Each module ``make bench`` runs imports (a name moved elsewhere crashed the smoke run in
    CI, after the whole suite had passed)."""
    code = (
        "import importlib\n"
        "from benchmarks.__main__ import MODULES\n"
        "for _, name in MODULES:\n"
        "    importlib.import_module(name)\n"
        "print(len(MODULES))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=110
    )
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.strip()) >= 10
