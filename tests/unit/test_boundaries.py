"""Architecture guards: one-way data flow and small public APIs (DESIGN.md principle 1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def imported_modules(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (REPO / package).rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[path.relative_to(REPO / package).as_posix()] = names
    return found


def test_writer_knows_nothing_of_http_or_the_crawler() -> None:
    for module, names in imported_modules("sitemap_writer").items():
        assert not names & {"crawler", "aiohttp", "httpx", "anyio", "selectolax", "protego"}, module


def test_crawler_knows_nothing_of_xml_except_in_the_cli() -> None:
    for module, names in imported_modules("crawler").items():
        if module == "cli.py":
            continue
        assert not names & {"sitemap_writer", "lxml", "xml"}, module


def test_only_the_http_package_speaks_http() -> None:
    users = {m for m, names in imported_modules("crawler").items()
             if names & {"aiohttp", "yarl", "httpx", "httpcore", "h2", "h11"}}
    assert users <= {"http/fetch.py", "http/transports.py", "http/prebuilt.py",
                     "http/aiohttp_transport.py"}
    assert "http/fetch.py" in users


def test_aiohttp_lives_in_one_adapter_only() -> None:
    """The crawler speaks httpx; aiohttp is only an engine under one httpx transport."""
    users = {m for package in ("crawler", "sitemap_writer")
             for m, names in imported_modules(package).items() if names & {"aiohttp", "yarl"}}
    assert users == {"http/aiohttp_transport.py"}
    assert "httpx" in imported_modules("crawler")["http/fetch.py"]
    assert not imported_modules("crawler")["http/fetch.py"] & {"aiohttp", "yarl"}


@pytest.mark.parametrize("package", ["crawler", "sitemap_writer"])
def test_public_api_is_explicit(package: str) -> None:
    module = __import__(package)
    assert sorted(module.__all__) == sorted(set(module.__all__))
    for name in module.__all__:
        assert hasattr(module, name), name
    public = {name for name in vars(module) if not name.startswith("_")}
    submodules = {p.stem for p in (REPO / package).glob("*.py")} | {
        p.parent.name for p in (REPO / package).glob("*/__init__.py")}
    assert public - set(module.__all__) <= submodules
