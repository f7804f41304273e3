"""A format-preserving editor for Claude's ``settings.json``: parse strictly (duplicate keys,
NaN and non-objects are refused), keep the file's look (indent, number spellings, CRLF, BOM,
final newline) when writing it back, and write atomically with a backup and an optimistic
check. The rules are in ``docs/hooks.md`` ("Settings entries").
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmux_widget.system.files import atomic_write, exchange

__all__ = [
    "BACKUP_SUFFIX",
    "Layout",
    "SettingsError",
    "dump",
    "parse_settings",
    "read_settings",
    "write_settings",
]

#: Suffix of the backup written beside a settings file before we change it.
BACKUP_SUFFIX = ".bak-pmux-widget"


class SettingsError(Exception):
    """A settings file we refuse to edit (or could not write). The file was left untouched.

    ``message`` names the file and the problem; the CLI maps this to exit code 2.
    """

    def __init__(self, path: Path, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        self.message = f"{path}: {problem}"
        super().__init__(self.message)


class _RawFloat(float):
    """A JSON number with a fraction or exponent that remembers its spelling (``1.50``)."""

    text: str

    def __new__(cls, text: str) -> _RawFloat:
        self = super().__new__(cls, text)
        self.text = text
        return self


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicates, parse_float=_RawFloat, parse_constant=_reject_constant
)


@dataclass
class Layout:
    """How a settings file is written, so that rewriting it keeps its look.

    ``indent`` None = all on one line, with ``compact`` separators (``,`` ``:``) or not
    (``, `` ``: ``).
    """

    indent: str | None = "  "
    compact: bool = False
    newline: str = "\n"
    final_newline: bool = True
    bom: bool = False


def _detect_layout(text: str) -> Layout:
    layout = Layout()
    if not text.strip():
        return layout
    layout.newline = "\r\n" if "\r\n" in text else "\n"
    layout.final_newline = text.endswith("\n")
    if "\n" not in text.strip() and not re.fullmatch(r"\s*\{\s*\}\s*", text):
        # One line (strings hold no raw newlines): the writer chose compact. A bare {} says
        # nothing about style: it gets the default.
        layout.indent = None
        layout.compact = re.search(r'"\s*:\s', text) is None
        return layout
    match = re.search(r"\n([ \t]+)\S", text)
    if match:
        lead = match.group(1)
        layout.indent = "\t" if lead.startswith("\t") else " " * len(lead)
    return layout


_SURROGATE = re.compile("[\ud800-\udfff]")


def _encode_str(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if _SURROGATE.search(text):  # lone surrogates (from "\ud800" escapes) stay escaped
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _encode(value: Any, layout: Layout, depth: int, out: list[str]) -> None:
    """Like ``json.dumps`` with ``ensure_ascii=False`` and the layout's indent/separators,
    keeping number spellings."""
    if isinstance(value, dict | list):
        if not value:
            out.append("{}" if isinstance(value, dict) else "[]")
            return
        if layout.indent is None:
            inner, close = "", ""
            item_sep, key_sep = (",", ":") if layout.compact else (", ", ": ")
        else:
            inner = "\n" + layout.indent * (depth + 1)
            close = "\n" + layout.indent * depth
            item_sep, key_sep = ",", ": "
        sep = "{" if isinstance(value, dict) else "["
        if isinstance(value, dict):
            for key, item in value.items():
                out.append(sep + inner + _encode_str(key) + key_sep)
                _encode(item, layout, depth + 1, out)
                sep = item_sep
            out.append(close + "}")
        else:
            for item in value:
                out.append(sep + inner)
                _encode(item, layout, depth + 1, out)
                sep = item_sep
            out.append(close + "]")
    elif isinstance(value, str):
        out.append(_encode_str(value))
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    elif isinstance(value, _RawFloat):
        out.append(value.text)
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(json.dumps(value))
    else:  # pragma: no cover - only JSON values are ever built here
        raise TypeError(f"not a JSON value: {value!r}")


def dump(doc: Any, layout: Layout) -> bytes:
    out: list[str] = []
    _encode(doc, layout, 0, out)
    text = "".join(out)
    if layout.final_newline:
        text += "\n"
    if layout.newline != "\n":
        text = text.replace("\n", layout.newline)
    return ("\ufeff" if layout.bom else "").encode() + text.encode()


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def parse_settings(path: Path, data: bytes) -> tuple[dict[str, Any], Layout]:
    """Decode and validate a settings file's bytes; raises :class:`SettingsError`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SettingsError(
            path, f"not valid UTF-8 at line {line} (byte {exc.start}); fix or remove the file"
        ) from None
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    layout = _detect_layout(text)
    layout.bom = bom
    if not text.strip():
        return {}, layout
    try:
        doc = _DECODER.decode(text)
    except _DuplicateKey as exc:
        raise SettingsError(
            path, f"duplicate key {exc.args[0]!r} in an object; keep only one, then retry"
        ) from None
    except json.JSONDecodeError as exc:
        raise SettingsError(
            path,
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}. "
            "Fix it first (Claude Code ignores an invalid settings file, hooks included)",
        ) from None
    except ValueError as exc:
        raise SettingsError(path, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise SettingsError(path, "JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise SettingsError(path, f"the top level must be a JSON object, not {_type_name(doc)}")
    hooks = doc.get("hooks")
    if "hooks" in doc and not isinstance(hooks, dict):
        raise SettingsError(path, f'"hooks" must be an object, not {_type_name(hooks)}')
    for event, groups in (hooks or {}).items():
        where = f'"hooks" → "{event}"'
        if not isinstance(groups, list):
            raise SettingsError(
                path, f"{where} must be an array of matcher groups, not {_type_name(groups)}"
            )
        for index, group in enumerate(groups):
            if not isinstance(group, dict):
                raise SettingsError(
                    path, f"{where}[{index}] must be an object, not {_type_name(group)}"
                )
            if "hooks" in group and not isinstance(group["hooks"], list):
                raise SettingsError(
                    path,
                    f'{where}[{index}] → "hooks" must be an array, '
                    f"not {_type_name(group['hooks'])}",
                )
    return doc, layout


def read_settings(path: Path) -> tuple[bytes | None, dict[str, Any], Layout]:
    """(original bytes or None when missing, document, layout); raises SettingsError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, {}, Layout()
    except IsADirectoryError:
        raise SettingsError(path, "is a directory, not a settings file") from None
    except OSError as exc:
        raise SettingsError(path, f"cannot read: {exc.strerror or exc}") from None
    doc, layout = parse_settings(path, data)
    return data, doc, layout


def write_settings(path: Path, original: bytes | None, new: bytes) -> Path | None:
    """Back up and atomically replace ``path`` (its symlink target); returns the backup."""
    target = Path(os.path.realpath(path))
    backup: Path | None = None
    try:
        if original is None:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            mode = 0o600
        else:
            mode = target.stat().st_mode & 0o7777

        def check_and_back_up() -> None:
            nonlocal backup
            # Optimistic concurrency: someone (Claude's /config?) wrote it meanwhile.
            try:
                current: bytes | None = target.read_bytes()
            except FileNotFoundError:
                current = None
            if current != original:
                raise SettingsError(path, "changed while we were editing it; run again")
            if original is not None:
                backup = target.with_name(target.name + BACKUP_SUFFIX)
                atomic_write(backup, original, mode)

        def swap_in(tmp: Path, dest: Path) -> None:
            # The check above leaves a window before the move: a writer (Claude itself) that
            # lands in it would be overwritten. Swapping atomically hands us what the move
            # replaced; if it is not what we edited, theirs goes straight back.
            if original is None:
                try:
                    os.link(tmp, dest)  # only if nobody created it meanwhile
                except FileExistsError:
                    raise SettingsError(
                        path, "created while we were editing it; run again"
                    ) from None
                return
            if not exchange(tmp, dest):
                os.replace(tmp, dest)
                return
            if tmp.read_bytes() != original:
                exchange(tmp, dest)
                raise SettingsError(path, "changed while we were editing it; run again")

        atomic_write(target, new, mode, before_replace=check_and_back_up, replace=swap_in)
    except OSError as exc:
        raise SettingsError(path, f"cannot write: {exc.strerror or exc}") from None
    return backup
