"""docs/reliability.md names, for every promise, the tests that prove it: each one named there
must exist (a renamed or deleted test would otherwise leave a promise unproved, silently)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "reliability.md"


def named_tests() -> list[tuple[str, str]]:
    found = []
    for line in DOC.read_text().splitlines():
        current = None
        for path, name in re.findall(r"`(tests/[\w/]+\.py)?(?:::(\w+))?`", line):
            current = path or current
            if name:
                assert current, f"{name} names no file: {line}"
                found.append((current, name))
    return found


def test_every_promise_has_tests_and_every_named_test_exists():
    rows = [line for line in DOC.read_text().splitlines() if re.match(r"\| (R\d|\d+) \|", line)]
    numbers = [line.split("|")[1].strip() for line in rows]
    assert numbers[:8] == [f"R{n}" for n in range(1, 9)]
    assert {"4", "8", "12", "13", "14", "15"} <= set(numbers)
    assert all("tests/" in line for line in rows)
    named = named_tests()
    assert len(named) > 40
    for path, name in named:
        source = (ROOT / path).read_text()
        assert re.search(rf"^(async )?def {name}\(", source, re.M), f"{path}::{name} not found"
