"""Issue 27's move, replayable on any checkout: the loose modules of ``pmux_widget/`` into the
two front doors' folders, every reference rewritten.

    .venv/bin/python devtools/move_house.py [--dry-run]

* the notebook side (``api``, ``widget``, ``feed``, ``feed_history``, ``frames``, ``waiting``,
  ``starting``) into ``pmux_widget/notebook/``;
* the terminal side into ``pmux_widget/cli/``: ``cli.py`` becomes ``cli/commands.py`` (the
  package's face re-exports ``main``, so the ``pmux-widget`` entry point ``pmux_widget.cli:main``
  stays as installed), ``table.py`` ``cli/table.py``, ``fleet_cli.py`` ``cli/fleet.py``,
  ``notify_cli.py`` ``cli/notify.py``.

What it rewrites, in ``pmux_widget/``, ``tests/``, ``benchmarks/``, ``devtools/`` (``*.py``),
``notebooks/*.ipynb``, ``docs/**/*.md``, ``README.md``, ``pyproject.toml``, ``Makefile``:

1. dotted names, wherever they stand (imports, ``"pmux_widget.api.thing"`` monkeypatch
   targets, ``-m`` arguments, logger names, docs):
   ``pmux_widget.api`` → ``pmux_widget.notebook.api``;
2. file paths: ``pmux_widget/api.py`` → ``pmux_widget/notebook/api.py``;
3. ``from pmux_widget import api`` (also inside strings and notebooks) →
   ``from pmux_widget.notebook import api``; ``from pmux_widget import cli`` →
   ``from pmux_widget.cli import commands as cli``;
4. first, with :mod:`ast` (Python files): relative imports that reach a moved module, every relative
   import inside a moved module (it changes package), and ``from pmux_widget import a, api``
   lists (split in two statements);
5. ``Path(__file__).parent`` in a moved module (one folder deeper now); lines the longer names
   push over 100 characters: cut in two in docstrings and comments, ``# noqa: E501`` on code;
6. import-linter's layers contract: the moved modules leave the top layer,
   ``pmux_widget.notebook`` and ``pmux_widget.cli`` join it (beside ``pmux_widget.jupyter``).

Then ``git mv`` of the files, the two packages' ``__init__.py``, ``ruff check --fix --select I``
and ``ruff format`` on the files it changed, and the checks: ``ruff check``, ``lint-imports``,
``mypy``. It refuses to run where ``pmux_widget/cli.py`` is already gone (run once).
``--after-merge`` is for a tree that is moved already, where merged branches still name the
old modules: it rewrites only those references (no ``git mv``).
A throwaway: once main has the new tree, delete it.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent

NOTEBOOK = ("api", "widget", "feed", "feed_history", "frames", "waiting", "starting")
TERMINAL = {"cli": "commands", "table": "table", "fleet_cli": "fleet", "notify_cli": "notify"}
#: old module short name → (new package, new module name)
MOVES: dict[str, tuple[str, str]] = {
    **{name: ("notebook", name) for name in NOTEBOOK},
    **{old: ("cli", new) for old, new in TERMINAL.items()},
}
NEW_PACKAGES = ("pmux_widget.notebook", "pmux_widget.cli")

NOTEBOOK_INIT = '''"""The notebook's front door: what ``import pmux_widget`` gives a cell.

api.py           the Python API (one hub per process; sessions, wait_for, on, show, sidebar,
                 to_dataframe, ...), re-exported lazily by ``pmux_widget/__init__.py``
widget.py        StatusWidget, the anywidget: one transport of a Feed
feed.py          Feed: what a status view is sent and may ask, whatever carries it (the
                 widget's traits, or the Jupyter server extension's websocket)
feed_history.py  the ``history`` value a feed keeps
frames.py        the history as pandas DataFrames (timeline, stats, to_dataframe)
waiting.py       Wait and Ask: awaiting sessions from cells
starting.py      new_session: a Claude Code session in a new terminal or tmux window

Above the runtime (it starts a hub and listens to it), beside ``jupyter/`` and ``cli/``
(import-linter's layers contract in pyproject.toml).
"""
'''

CLI_INIT = '''"""The terminal's front door: the ``pmux-widget`` command.

commands.py  the parser and the commands (install, status, serve, demo, doctor, the actions);
             :func:`main` is the console script's entry point (``pmux_widget.cli:main``) and
             ``python -m pmux_widget``'s
table.py     the sessions table ``status`` prints (and the widget's text form)
fleet.py     the fleet commands: ``status --fleet``, ``serve --fleet``, ``fleet forget``
notify.py    ``pmux-widget notify``: where notifications go, and their settings

Above the runtime, beside ``jupyter/`` and ``notebook/`` (import-linter's layers contract in
pyproject.toml).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pmux_widget.cli.commands import main


def __getattr__(name: str) -> object:
    # Imported when first called: a module that needs only the table does not load the parser
    # and every command's imports.
    if name == "main":
        from pmux_widget.cli.commands import main

        return main
    raise AttributeError(f"module 'pmux_widget.cli' has no attribute {name!r}")


__all__ = ["main"]
'''


# What the ast rules write for a moved module, until the text rules have run (they would read
# ``pmux_widget.cli.table`` as the old ``cli`` module's ``table``).
PENDING = "PMUX_WIDGET_MOVED_"


def new_dotted(old: str, root: str = "pmux_widget") -> str:
    package, module = MOVES[old]
    return f"{root}.{package}.{module}"


def old_path(old: str) -> Path:
    return ROOT / "pmux_widget" / f"{old}.py"


def new_path(old: str) -> Path:
    package, module = MOVES[old]
    return ROOT / "pmux_widget" / package / f"{module}.py"


# --------------------------------------------------------------------------- text rules

_NAMES = "|".join(sorted(MOVES, key=len, reverse=True))
# A dotted name: not part of a longer name on the left, the module's whole name on the right.
# ``pmux_widget.cli:main`` (the entry point) stays: the face re-exports main.
# ``pmux_widget.cli.table`` (and the package's other modules) is already new: the old cli.py had
# no attribute of those names, so reading it as new is right before and after the move.
_NEW_CLI = "|".join(TERMINAL.values())
DOTTED = re.compile(
    rf"(?<![\w.])pmux_widget\.({_NAMES})\b(?!:main\b)"
    rf"(?!\.(?:{_NEW_CLI})\b)(?!\s+import\s+(?:{_NEW_CLI})\b)"
)
PATH = re.compile(rf"(?<![\w/])pmux_widget/({_NAMES})\.py\b")
# ``from pmux_widget import api`` alone on its statement (also in a string or a notebook's JSON)
SINGLE = re.compile(
    rf"\bfrom pmux_widget import ({_NAMES})(?:\s+as\s+(\w+))?(?=[ \t]*(?:$|[;\"'#)]|\\n))",
    re.MULTILINE,
)


def single_import(old: str, alias: str | None, root: str = "pmux_widget") -> str:
    package, module = MOVES[old]
    bound = alias or old
    tail = f" as {bound}" if bound != module else ""
    return f"from {root}.{package} import {module}{tail}"


def rewrite_text(text: str) -> str:
    text = DOTTED.sub(lambda m: new_dotted(m.group(1)), text)
    text = PATH.sub(lambda m: str(new_path(m.group(1)).relative_to(ROOT)), text)
    return SINGLE.sub(lambda m: single_import(m.group(1), m.group(2)), text)


# --------------------------------------------------------------------------- ast rules


def module_of(path: Path) -> tuple[str, bool]:
    """(dotted module name, is a package ``__init__``) of a file under ROOT."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def resolve(node: ast.ImportFrom, path: Path) -> str:
    """The absolute module a ``from ... import`` names (relative ones from the file's OLD
    place: this runs before the files move)."""
    if not node.level:
        return node.module or ""
    name, is_package = module_of(path)
    package = name.split(".") if is_package else name.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def alias_text(a: ast.alias) -> str:
    return f"{a.name} as {a.asname}" if a.asname else a.name


def rewrite_import(node: ast.ImportFrom, path: Path, moved_file: bool) -> list[str] | None:
    """The statements replacing ``node``, or None to keep it."""
    target = resolve(node, path)
    # Absolute ones are the text rules' (which keep their layout).
    if node.level and target.startswith("pmux_widget.") and target.split(".")[1] in MOVES:
        old = target.split(".")[1]
        rest = target.split(".")[2:]
        module = ".".join([new_dotted(old, PENDING), *rest])
        return [f"from {module} import {', '.join(alias_text(a) for a in node.names)}"]
    if target == "pmux_widget" and any(a.name in MOVES for a in node.names):
        kept = [a for a in node.names if a.name not in MOVES]
        out = [f"from pmux_widget import {', '.join(map(alias_text, kept))}"] if kept else []
        out += [single_import(a.name, a.asname, PENDING) for a in node.names if a.name in MOVES]
        return out
    if node.level and moved_file:
        return [f"from {target} import {', '.join(alias_text(a) for a in node.names)}"]
    return None


def rewrite_ast(text: str, path: Path, moved_file: bool) -> str:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        print(f"  ! {path.relative_to(ROOT)}: not parsed ({exc}); text rules only")
        return text
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    raw = text.encode()
    edits: list[tuple[int, int, bytes]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        new = rewrite_import(node, path, moved_file)
        if new is None:
            continue
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        prefix = raw[offsets[node.lineno - 1] : start].decode()
        joiner = "\n" + prefix if not prefix.strip() else "; "
        if b"#" in raw[start:end]:
            print(f"  ! {path.relative_to(ROOT)}:{node.lineno}: comments inside an import dropped")
        edits.append((start, end, joiner.join(new).encode()))
    for start, end, new_bytes in sorted(edits, reverse=True):
        raw = raw[:start] + new_bytes + raw[end:]
    return raw.decode()


FILE_PARENT = re.compile(r"Path\(__file__\)(\.resolve\(\))?\.parent\b")


LINE = 100  # ruff's line-length (pyproject.toml)


def docstring_lines(tree: ast.AST) -> set[int]:
    """Line numbers inside docstrings (reflowing them changes no behaviour)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and first.end_lineno is not None
            ):
                found.update(range(first.lineno, first.end_lineno + 1))
    return found


def string_lines(text: str) -> set[int]:
    """Lines that a multi-line string continues onto (a comment there would be text)."""
    found: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            found.update(range(tok.start[0], tok.end[0]))
    return found


def fit_lines(text: str, path: Path) -> str:
    """Lines the longer names pushed over LINE (as ruff counts): in a docstring or a comment, the
    words that overflow go to the start of the next line of the paragraph (and so on); a code
    line gets ``# noqa: E501`` (a long string in it cannot be cut safely)."""
    ask = ["check", "--select", "E501", "--output-format", "json", "--stdin-filename", str(path)]
    found = subprocess.run(
        [str(VENV_BIN / "ruff"), *ask, "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    too_long = {d["location"]["row"] for d in json.loads(found or "[]")}
    if not too_long:
        return text
    docs = docstring_lines(ast.parse(text))
    strings = string_lines(text)
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    carry = carry_lead = ""  # overflowing words, for the next line of the same paragraph
    for number, line in enumerate(lines, 1):
        body = line.rstrip("\n")
        indent = body[: len(body) - len(body.lstrip())]
        comment = body.lstrip().startswith("#") and number not in strings
        lead = indent + "# " if comment else indent
        merged = False
        if carry:
            words = body[len(lead) :] if comment else body.lstrip()
            prose = (number in docs or comment) and words and not words.startswith(PARAGRAPH)
            if prose and not words.startswith('"""'):
                body, merged = lead + carry + " " + words, True
            else:
                out.append(carry_lead + carry + "\n")
            carry = ""
        if len(body) <= LINE or (number not in too_long and not merged):
            out.append(body + "\n" if line.endswith("\n") else body)
            continue
        if number in docs or comment:
            head, carry = cut(body, lead)
            carry_lead = lead
            out.append(head + "\n")
        elif number in strings:
            print(f"  ! {path.relative_to(ROOT)}:{number}: too long, inside a string: fit by hand")
            out.append(line)
        else:
            out.append(body + "  # noqa: E501\n")
    if carry:
        out.append(carry_lead + carry + "\n")
    return "".join(out)


#: Lines that start a paragraph of their own (a list item, a literal block, a field).
PARAGRAPH = ("* ", "- ", "``", ":", "..", ">>>", "|")


def cut(body: str, lead: str) -> tuple[str, str]:
    """(the line up to LINE, at a space; the words after it)."""
    at = body.rfind(" ", len(lead) + 1, LINE + 1)
    if at <= len(lead):
        return body, ""  # one long word: leave it
    return body[:at].rstrip(), body[at + 1 :]


# --------------------------------------------------------------------------- the contract


def rewrite_contract(text: str) -> str:
    """The layers contract's top layer: the moved modules (already renamed into the two
    packages by the text rules) become the two packages, once each, after jupyter."""

    def top(m: re.Match[str]) -> str:
        names = [n.strip() for n in m.group(2).split(":")]
        kept = [n for n in names if not n.startswith(tuple(p + "." for p in NEW_PACKAGES))]
        kept = [n for n in kept if n not in NEW_PACKAGES]
        at = kept.index("pmux_widget.jupyter") + 1 if "pmux_widget.jupyter" in kept else 0
        kept[at:at] = list(NEW_PACKAGES)
        return m.group(1) + " : ".join(kept) + m.group(3)

    new, n = re.subn(r'(id = "layers"[^\[]*layers = \[\s*")([^"]*)(")', top, text, count=1)
    if n != 1:
        sys.exit("the layers contract was not found in pyproject.toml")
    return new


# --------------------------------------------------------------------------- main


def targets() -> list[Path]:
    found: list[Path] = []
    for folder in ("pmux_widget", "tests", "benchmarks", "devtools"):
        found += sorted((ROOT / folder).rglob("*.py"))
    found += sorted((ROOT / "notebooks").glob("*.ipynb"))
    found += sorted((ROOT / "docs").rglob("*.md"))
    found += [ROOT / "README.md", ROOT / "pyproject.toml", ROOT / "Makefile"]
    me = Path(__file__).resolve()
    skip = ("node_modules", ".venv", "labextension", "static")
    return [
        p
        for p in found
        if p.exists() and p.resolve() != me and not set(p.relative_to(ROOT).parts) & set(skip)
    ]


def run(*argv: str, check: bool = True) -> int:
    print("$", " ".join(argv))
    return subprocess.run(argv, cwd=ROOT, check=check).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="rewrite nothing, list changes")
    parser.add_argument("--no-checks", action="store_true", help="skip ruff/lint-imports/mypy")
    parser.add_argument(
        "--after-merge",
        action="store_true",
        help="the tree is moved already (a branch with the move was merged): only rewrite the "
        "references that merged code still makes to the old modules",
    )
    args = parser.parse_args()
    if args.after_merge:
        if old_path("api").exists() or not (ROOT / "pmux_widget" / "notebook").is_dir():
            sys.exit("--after-merge: this tree is not moved yet (run without it)")
    else:
        missing = [old for old in MOVES if not old_path(old).exists()]
        if missing:
            sys.exit(f"already moved: no pmux_widget/{missing[0]}.py (see --after-merge)")
        for package in NEW_PACKAGES:
            folder = ROOT / package.replace(".", "/")
            if folder.exists():
                sys.exit(f"{folder.relative_to(ROOT)} exists already")

    moved_files = set() if args.after_merge else {old_path(old).resolve() for old in MOVES}
    changed: list[Path] = []
    faces = {ROOT / "pmux_widget" / p / "__init__.py" for p in ("notebook", "cli")}
    for path in targets():
        if args.after_merge and path in faces:
            continue  # written by this script: they name the new packages only
        text = path.read_text()
        new = text
        moved = path.resolve() in moved_files
        if path.suffix == ".py":
            new = rewrite_ast(new, path, moved)
        new = rewrite_text(new).replace(PENDING + ".", "pmux_widget.")
        if path.name == "pyproject.toml":
            new = rewrite_contract(new)
        if path.suffix == ".py" and moved and MOVES[path.stem][0] == "cli":
            new = re.sub(r"(?<![\w/.])cli\.py\b", "commands.py", new)
        if path.suffix == ".py" and moved:
            new, n = FILE_PARENT.subn(lambda m: m.group(0) + ".parent", new)
            if n:
                print(f"  {path.relative_to(ROOT)}: Path(__file__).parent one deeper x{n}")
        if new != text:
            changed.append(path)
            print(f"rewrote {path.relative_to(ROOT)}")
            if not args.dry_run:
                path.write_text(new)
    if args.dry_run:
        return 0

    inits = (("notebook", NOTEBOOK_INIT), ("cli", CLI_INIT))
    for package, face in () if args.after_merge else inits:
        folder = ROOT / "pmux_widget" / package
        folder.mkdir()
        (folder / "__init__.py").write_text(face)
        run("git", "add", str(folder / "__init__.py"))
    for old in [] if args.after_merge else MOVES:
        run("git", "mv", str(old_path(old).relative_to(ROOT)), str(new_path(old).relative_to(ROOT)))

    def where(p: Path) -> Path:
        for old in MOVES:
            if p.resolve() == old_path(old).resolve():
                return new_path(old)
        return p

    py = [str(where(p).relative_to(ROOT)) for p in changed if p.suffix == ".py"]
    py += [f"pmux_widget/{p}/__init__.py" for p in ("notebook", "cli")]
    if args.after_merge and not changed:
        print("nothing refers to the old modules")
        return 0
    ruff = str(VENV_BIN / "ruff")
    run(ruff, "check", "--fix", "--select", "I", "--quiet", *py, check=False)
    run(ruff, "format", "--quiet", *py)
    for name in py:
        text = (ROOT / name).read_text()
        fitted = fit_lines(text, ROOT / name)
        if fitted != text:
            (ROOT / name).write_text(fitted)
    if args.no_checks:
        return 0
    failed = 0
    failed |= run(ruff, "check", "pmux_widget", "tests", "benchmarks", "devtools", check=False)
    failed |= run(str(VENV_BIN / "lint-imports"), check=False)
    failed |= run(str(VENV_BIN / "mypy"), check=False)
    # ``pmux_widget.cli`` is the new package: only the other old names can be told apart.
    old_names = "|".join(sorted((n for n in MOVES if n != "cli"), key=len, reverse=True))
    stale = re.compile(rf"(?<![\w.])pmux_widget[./]({old_names})\b")
    for path in targets():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if stale.search(line):
                print(f"  left: {path.relative_to(ROOT)}:{number}: {line.strip()}")
    print("done" if not failed else "done, but a check failed: see above")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
