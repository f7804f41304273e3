"""Wall-clock time in epoch milliseconds: the unit of every event time in the contract.

The tracker never reads a clock; the runtime and the doors above it pass it this one.
"""

import time

__all__ = ["now_ms"]


def now_ms() -> int:
    return time.time_ns() // 1_000_000
