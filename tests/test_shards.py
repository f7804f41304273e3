"""`make test`'s shards (devtools/test_shards.py): together the whole suite, each test once;
the real agent CLIs in one shard; the closing line counts every shard."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from devtools import test_shards

ROOT = Path(__file__).resolve().parent.parent


def test_every_test_folder_is_in_exactly_one_shard() -> None:
    agents = dict(test_shards.SHARDS)["agents"]
    rest = dict(test_shards.SHARDS)["rest"]
    for suite in test_shards.AGENT_SUITES:
        assert suite in agents and f"--ignore={suite}" in rest
    for test_dir in (ROOT / "tests").iterdir():
        if test_dir.is_dir() and any(test_dir.glob("test_*.py")):
            name = f"tests/{test_dir.name}"
            in_agents = name in agents
            in_rest = f"--ignore={name}" not in rest
            assert in_agents != in_rest, f"{name} must be in exactly one shard"


def test_the_closing_line_adds_up_the_shards(tmp_path: Path, capsys) -> None:
    logs = {
        "agents": "x.py ..\n===== 2 failed, 80 passed, 3 skipped in 600.00s =====\n",
        "rest": "a.py ....\n===== 1040 passed, 1 skipped in 900.12s (0:15:00) =====\n",
    }
    shards = []
    for i, (name, text) in enumerate(logs.items()):
        log = tmp_path / f"{name}.log"
        log.write_text(text)
        shard = test_shards.Shard(name, (), log, started=10.0 * i)
        shard.proc = subprocess.Popen([sys.executable, "-c", f"raise SystemExit({1 - i})"])
        shard.proc.wait()
        shard.finish()
        shards.append(shard)
    status = test_shards.summarize(shards)
    out = capsys.readouterr().out
    assert status == 1
    assert "shard agents: 2 failed, 80 passed, 3 skipped" in out
    last = out.strip().splitlines()[-1]
    assert "1120 passed, 2 failed, 4 skipped in" in last, last


def test_args_that_name_tests_run_one_plain_pytest(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text(
        textwrap.dedent(
            """
            def test_one():
                assert True
            """
        )
    )
    code = test_shards.main([str(tmp_path / "test_one.py"), "-q", "-p", "no:cacheprovider"])
    assert code == 0
