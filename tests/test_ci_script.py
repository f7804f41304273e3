"""`.ci/run` calls into the package by name; a rename must fail here, not only on CI."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

CI_RUN = Path(__file__).resolve().parent.parent / ".ci" / "run"


def test_ci_run_imports_exist() -> None:
    imports = re.findall(r"from ([\w.]+) import ([\w, ]+?);", CI_RUN.read_text())
    assert imports, "expected .ci/run to import from the package"
    for module_name, names in imports:
        module = importlib.import_module(module_name)
        for name in (n.strip() for n in names.split(",")):
            assert hasattr(module, name), f".ci/run imports {name} from {module_name}: missing"
