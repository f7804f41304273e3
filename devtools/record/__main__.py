"""``python -m devtools.record``: record real Claude Code runs (see the package docstring)."""

import sys

from devtools.record.cli import main

sys.exit(main())
