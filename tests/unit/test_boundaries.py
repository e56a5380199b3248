"""Small public APIs (DESIGN.md principle 1). Which module may import which is
import-linter's contracts in pyproject.toml (tests/unit/test_layers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


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
