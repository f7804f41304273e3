"""A session's project name: the name of the git root above its folder, else the folder's.

Cached per cwd: it runs for every hook of a session and walks up the tree once.
"""

from pathlib import Path

__all__ = ["project_name"]

_PROJECT_CACHE: dict[str, str] = {}


def project_name(cwd: str | None) -> str | None:
    """The git root's name for ``cwd`` (nearest ``.git`` above it), else its basename."""
    if not cwd:
        return None
    cached = _PROJECT_CACHE.get(cwd)
    if cached is not None:
        return cached
    path = Path(cwd)
    name = path.name or cwd
    for candidate in (path, *path.parents):
        try:
            if (candidate / ".git").exists():
                name = candidate.name or name
                break
        except OSError:
            break
    if len(_PROJECT_CACHE) > 4096:
        _PROJECT_CACHE.clear()
    _PROJECT_CACHE[cwd] = name
    return name
