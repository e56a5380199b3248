"""Architecture guards: one-way data flow and small public APIs (DESIGN.md principle 1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def imported_modules(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (REPO / package).glob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[path.name] = names
    return found


def test_writer_knows_nothing_of_http_or_the_crawler() -> None:
    for module, names in imported_modules("sitemap_writer").items():
        assert not names & {"crawler", "aiohttp", "anyio", "selectolax", "protego"}, module


def test_crawler_knows_nothing_of_xml_except_in_the_cli() -> None:
    for module, names in imported_modules("crawler").items():
        if module == "cli.py":
            continue
        assert not names & {"sitemap_writer", "lxml", "xml"}, module


def test_only_fetch_speaks_http() -> None:
    users = {m for m, names in imported_modules("crawler").items()
             if names & {"aiohttp", "yarl", "httpx"}}
    assert users == {"fetch.py"}


@pytest.mark.parametrize("package", ["crawler", "sitemap_writer"])
def test_public_api_is_explicit(package: str) -> None:
    module = __import__(package)
    assert sorted(module.__all__) == sorted(set(module.__all__))
    for name in module.__all__:
        assert hasattr(module, name), name
    public = {name for name in vars(module) if not name.startswith("_")}
    submodules = {p.stem for p in (REPO / package).glob("*.py")}
    assert public - set(module.__all__) <= submodules
