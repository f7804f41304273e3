"""``python -m pmux_widget.demo``: the `make demo` launcher."""

import sys

from .launcher import main

sys.exit(main())
