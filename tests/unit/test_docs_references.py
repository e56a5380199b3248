"""The manual names only code that exists: every ``module.function``, ``module.py``
and ``crawler.dotted.path`` in backticks, in the README and docs/pages, resolves.

A renamed or moved function left its old name in the architecture page once
(``coordinator._while_robots_travels``, moved to ``start_up.py``); this fails on
such a name the day it goes stale. A name that is a report's JSON key
(``live_sitemap.orphans_unchecked``) is told apart by being a string the code writes.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs" / "pages").glob("*.md"))]
CODE_ROOTS = ("crawler", "sitemap_writer", "bench", "tests")
_TICKED = re.compile(r"`([^`\s]+)`")
_FILE = re.compile(r"(?:[a-z_]+/)*[a-z_]+\.py")
_NAME = re.compile(r"(?:[a-z_]+/)*([a-z_]+)\.([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?")
_DOTTED = re.compile(r"crawler(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


@cache
def _sources() -> dict[str, list[Path]]:
    """Python files by their name without .py."""
    found: dict[str, list[Path]] = {}
    for root in CODE_ROOTS:
        for path in (REPO / root).rglob("*.py"):
            found.setdefault(path.stem, []).append(path)
    return found


@cache
def _defined(path: Path) -> frozenset[str]:
    """Names a module defines: its functions, classes, assignments, and methods."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


@cache
def _written_strings() -> frozenset[str]:
    """Every string literal of the crawler's code (report keys among them)."""
    found: set[str] = set()
    for path in (REPO / "crawler").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return frozenset(found)


def _stale(token: str) -> str | None:
    """Why ``token`` names nothing, or None when it resolves (or is no code name)."""
    if _FILE.fullmatch(token):
        stem = token.rsplit("/", 1)[-1][:-3]
        paths = _sources().get(stem, [])
        if not any(str(path).endswith(token) for path in paths):
            return f"no file {token}"
        return None
    if _DOTTED.fullmatch(token):
        return _unimportable(token)
    match = _NAME.fullmatch(token)
    if match is None or match.group(1) not in _sources():
        return None  # not a module of ours: a URL, a file name, a JSON key of another kind
    module, name = match.groups()
    if any(name in _defined(path) for path in _sources()[module]):
        return None
    if name in _written_strings():
        return None  # a report's key, written by the code
    return f"{module} defines no {name}"


def _unimportable(dotted: str) -> str | None:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return f"{'.'.join(parts[:cut])} has no {'.'.join(parts[cut:])}"
            found = getattr(found, attribute)
        return None
    return f"no module {dotted}"


# Another API's names that happen to share a module's name of ours
_THEIRS = re.compile(r"(?:its|the API's) `([^`]+)` method")


def test_every_code_name_in_the_manual_exists() -> None:
    stale = []
    for page in PAGES:
        text = page.read_text()
        theirs = set(_THEIRS.findall(text))
        stale += [(page.name, token, why) for token in _TICKED.findall(text)
                  if token not in theirs and (why := _stale(token)) is not None]
    assert not stale, stale


def test_the_check_catches_a_stale_name() -> None:
    assert _stale("coordinator._while_robots_travels") == (
        "coordinator defines no _while_robots_travels")
    assert _stale("start_up.while_robots_travels") is None
    assert _stale("engine/no_such_module.py") == "no file engine/no_such_module.py"
    assert _stale("crawler.cli.no_such_module") is not None
    assert _stale("live_sitemap.orphans_unchecked") is None  # a report key


def test_no_module_cites_a_design_document_the_repository_does_not_hold() -> None:
    citing = [path.relative_to(REPO) for root in ("crawler", "sitemap_writer")
              for path in (REPO / root).rglob("*.py") if "DESIGN.md" in path.read_text()]
    assert not citing, citing
