"""Atomic file writes: the one implementation used for the hook script, the spool, settings
backups, a hub's runtime file and the token, so a reader never sees half a file.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "exchange", "json_objects", "port_or_none"]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc: ctypes.CDLL | None = None


def exchange(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``). False where the
    kernel, libc or file system cannot (nothing was changed then); raises other OSErrors."""
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    renameat2 = getattr(_libc, "renameat2", None)
    if renameat2 is None:
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    renameat2.argtypes += [ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), os.fspath(b))


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes,
    mode: int = 0o600,
    *,
    exclusive: bool = False,
    before_replace: Callable[[], None] | None = None,
    replace: Callable[[Path, Path], None] = os.replace,
) -> bool:
    """Write ``data`` to ``path`` through a temp file in the same directory (fsync'd, given
    ``mode`` whatever the umask), then move it into place.

    ``exclusive``: only create ``path`` (``os.link``, which fails if it exists: a concurrent
    writer's file wins and ``False`` is returned); otherwise ``os.replace`` it. Returns True
    when ``path`` now holds ``data``. ``before_replace`` runs once the temp file is complete,
    just before the move; raising there leaves ``path`` untouched (optimistic checks).
    ``replace(tmp, path)`` makes the move (the temp file is removed afterwards, whatever it
    then holds).
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
            replace(tmp, target)
            return True
        try:
            os.link(tmp, target)
        except FileExistsError:
            return False
        return True
    finally:
        tmp.unlink(missing_ok=True)


def json_objects(directory: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Each ``*.json`` file of ``directory`` that holds a JSON object, by name (a missing
    directory, an unreadable, torn or non-object file is skipped): the per-process files other
    processes write there, the hubs' runtime files and the servers' terminals."""
    try:
        paths = sorted(directory.glob("*.json"))
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            found.append((path, data))
    return found


def port_or_none(value: object) -> int | None:
    """``value`` if it is a TCP port number (not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536:
        return value
    return None
