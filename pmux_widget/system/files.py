"""Atomic file writes: the one implementation used for the hook script, the spool, settings
backups, a hub's runtime file and the token, so a reader never sees half a file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes,
    mode: int = 0o600,
    *,
    exclusive: bool = False,
    before_replace: Callable[[], None] | None = None,
) -> bool:
    """Write ``data`` to ``path`` through a temp file in the same directory (fsync'd, given
    ``mode`` whatever the umask), then move it into place.

    ``exclusive``: only create ``path`` (``os.link``, which fails if it exists: a concurrent
    writer's file wins and ``False`` is returned); otherwise ``os.replace`` it. Returns True
    when ``path`` now holds ``data``. ``before_replace`` runs once the temp file is complete,
    just before the move; raising there leaves ``path`` untouched (optimistic checks).
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)  # os.open's mode is filtered by the umask
        if before_replace is not None:
            before_replace()
        if not exclusive:
            os.replace(tmp, target)
            return True
        try:
            os.link(tmp, target)
        except FileExistsError:
            return False
        return True
    finally:
        tmp.unlink(missing_ok=True)
