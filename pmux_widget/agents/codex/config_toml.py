"""The trust of our hooks in Codex's ``config.toml``: ``[hooks.state."<key>"]`` tables with
``trusted_hash = "<hash>"``, written, moved and removed while every other byte of the
user's file stays as it was.

Why by lines and not with a TOML library: Python reads TOML (``tomllib``) but writes none,
and the tables we own have one fixed shape (the one Codex itself writes when a user trusts a
hook). Each edit is checked by parsing the result: it must be the user's document with
exactly our change; anything else (a ``hooks.state`` written as an inline table, a header
inside a multi-line string) is refused with what to add by hand, and the file is untouched.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Mapping, Set
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

__all__ = [
    "CodexConfigError",
    "edit_trust",
    "parse_config",
    "trust_table",
    "trusted_states",
]

_HEADER_START = re.compile(r"[ \t]*\[(?!\[)")
_OUR_BODY = re.compile(r"[ \t]*(trusted_hash|enabled)[ \t]*=")


class CodexConfigError(Exception):
    """A ``config.toml`` we refuse to edit; the file was left untouched."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        self.message = f"{path}: {problem}"
        super().__init__(self.message)


def parse_config(path: Path, text: str) -> dict[str, Any]:
    """The document (invalid TOML refused with the parser's words)."""
    try:
        doc: dict[str, Any] = tomllib.loads(text)
        return doc
    except tomllib.TOMLDecodeError as exc:
        raise CodexConfigError(path, f"invalid TOML: {exc}") from None


def trusted_states(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``hooks.state`` of a parsed config: key → its table ({} when there is none)."""
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return (
        {k: v for k, v in state.items() if isinstance(v, dict)} if isinstance(state, dict) else {}
    )


def trust_table(key: str, digest: str) -> str:
    """Our table for one hook, as Codex writes it."""
    header = f"[hooks.state.{json.dumps(key, ensure_ascii=False)}]"
    return f"{header}\ntrusted_hash = {json.dumps(digest)}\n"


def _header_path(line: str) -> tuple[str, ...] | None:
    """The key path of a ``[table]`` header line, or None (not one; ``[[arrays]]`` neither)."""
    if not _HEADER_START.match(line):
        return None
    stripped = line.rstrip("\r\n")
    for end in [i for i, c in enumerate(stripped) if c == "]"]:
        try:
            parsed = tomllib.loads(stripped[: end + 1] + "\n")
        except tomllib.TOMLDecodeError:
            continue
        rest = stripped[end + 1 :].strip()
        if rest and not rest.startswith("#"):
            return None
        path: list[str] = []
        node: Any = parsed
        while isinstance(node, dict) and len(node) == 1:
            key = next(iter(node))
            path.append(key)
            node = node[key]
        return tuple(path)
    return None


def _without_states(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        hooks.pop("state", None)
        if not hooks:
            out.pop("hooks")
    return out


def edit_trust(
    path: Path,
    text: str,
    *,
    drop: Set[str] = frozenset(),
    rename: Mapping[str, str] | None = None,
    add: Mapping[str, str] | None = None,
) -> str:
    """``text`` with the trust tables of ``drop`` removed, those of ``rename`` moved to their
    new key, and ``add`` (key → hash) written (replacing a table of that key), at the end.

    Raises :class:`CodexConfigError` (nothing written) when the result would not be exactly
    that change of the user's document.
    """
    rename = dict(rename or {})
    add = dict(add or {})
    doc = parse_config(path, text)
    hooks = doc.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise CodexConfigError(path, '"hooks" is not a table')
    if isinstance(hooks, dict) and "state" in hooks and not isinstance(hooks["state"], dict):
        raise CodexConfigError(path, '"hooks.state" is not a table')
    states = trusted_states(doc)
    expected = {
        rename.get(k, k): v
        for k, v in states.items()
        if (k not in drop and k not in add) or k in rename
    }
    for key, digest in add.items():
        expected[key] = {"trusted_hash": digest}
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        header = _header_path(lines[i])
        table = (
            header[2] if header and len(header) == 3 and header[:2] == ("hooks", "state") else None
        )
        if table is not None and table in rename:
            ending = lines[i][len(lines[i].rstrip("\r\n")) :] or "\n"
            out.append(f"[hooks.state.{json.dumps(rename[table], ensure_ascii=False)}]{ending}")
            i += 1
            continue
        if table is not None and (table in drop or table in add):
            if out and not out[-1].strip():
                out.pop()  # the blank line that separated it
            i += 1
            while i < len(lines) and _OUR_BODY.match(lines[i]):
                i += 1
            continue
        out.append(lines[i])
        i += 1
    result = "".join(out)
    if add:
        if result and not result.endswith("\n"):
            result += "\n"
        result += "".join(
            ("\n" if result or n else "") + trust_table(k, v)
            for n, (k, v) in enumerate(add.items())
        )
    try:
        new_doc = tomllib.loads(result)
    except tomllib.TOMLDecodeError:
        new_doc = None
    if (
        new_doc is None
        or _without_states(new_doc) != _without_states(doc)
        or trusted_states(new_doc) != expected
    ):
        wanted = "".join(trust_table(k, v) for k, v in add.items())
        raise CodexConfigError(
            path,
            "cannot edit the hooks' trust here without changing more than our tables "
            "(hooks.state is written in a form we do not edit, e.g. inline tables); "
            + (f"add these tables yourself:\n{wanted}" if wanted else "")
            + (f"remove the trust of: {', '.join(sorted(drop))}" if drop else ""),
        )
    return result
