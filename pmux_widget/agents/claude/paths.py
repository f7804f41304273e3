"""Where Claude Code keeps its files: the config dir (``$CLAUDE_CONFIG_DIR``, else
``~/.claude``, NFC-normalised like the CLI) and the project-dir names under ``projects/``.
The one place that resolves the config dir and encodes a cwd; the layout is described in
``docs/transcripts.md`` ("Where the files are").
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ENV_VAR",
    "MAX_ENCODED_LENGTH",
    "ClaudeHome",
    "encode_project_dir",
    "java_string_hash",
    "transcript_path_for",
]

ENV_VAR = "CLAUDE_CONFIG_DIR"
#: Encoded project-dir names longer than this are cut and suffixed with a hash.
MAX_ENCODED_LENGTH = 200

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class ClaudeHome:
    """Claude Code's config directory and the paths under it. Nothing is created."""

    root: Path

    @classmethod
    def resolve(cls, path: str | os.PathLike[str] | None = None) -> ClaudeHome:
        """``path`` if given, else ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``; NFC-normalised
        like the CLI does."""
        if path is None:
            path = os.environ.get(ENV_VAR) or Path.home() / ".claude"
        text = unicodedata.normalize("NFC", os.fspath(path))
        return cls(Path(text).expanduser().absolute())

    @property
    def projects_dir(self) -> Path:
        return self.root / "projects"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def settings_file(self) -> Path:
        return self.root / "settings.json"

    @property
    def installed(self) -> bool:
        """The config dir exists (the widget says "Claude not installed" otherwise)."""
        return self.root.is_dir()


def _utf16_units(text: str) -> list[int]:
    """The string as UTF-16 code units (what JavaScript indexes and hashes)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` over UTF-16 code units: h = 31*h + unit, signed 32-bit."""
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(number: int) -> str:
    if number == 0:
        return "0"
    digits = []
    while number:
        number, rem = divmod(number, 36)
        digits.append(_BASE36[rem])
    return "".join(reversed(digits))


def encode_project_dir(path: str) -> str:
    """The directory name Claude Code uses under ``projects/`` for a cwd.

    Every UTF-16 code unit outside ``[A-Za-z0-9]`` becomes ``-`` (so an emoji, two units,
    becomes ``--``). Names over 200 characters are cut to 200 and suffixed with ``-`` and the
    base-36 absolute value of the Java-style hash of the *original* path. The mapping is lossy:
    never decode it, read ``cwd`` from the records instead.
    """
    encoded = "".join(chr(u) if u < 128 and chr(u).isalnum() else "-" for u in _utf16_units(path))
    if len(encoded) <= MAX_ENCODED_LENGTH:
        return encoded
    return f"{encoded[:MAX_ENCODED_LENGTH]}-{_base36(abs(java_string_hash(path)))}"


def transcript_path_for(home: ClaudeHome, cwd: str, session_id: str) -> Path:
    """``<config>/projects/<encoded cwd>/<session_id>.jsonl``.

    ``cwd`` must be the session's *original* working directory after ``realpath`` (that is
    what the CLI encodes). Prefer a hook's ``transcript_path`` when there is one: a session
    started with another config dir, or relocated, lives elsewhere.
    """
    return home.projects_dir / encode_project_dir(cwd) / f"{session_id}.jsonl"
