"""The architecture is import-linter's contracts in pyproject.toml: they hold on this
tree, and a deliberately wrong import breaks them (a contract that cannot fail
guards nothing)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())", "--no-cache"]


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(LINT, cwd=tree, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)})


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    for name in ("crawler", "sitemap_writer"):
        shutil.copytree(REPO / name, tree / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_contracts_hold(tmp_path: Path) -> None:
    done = _lint(_copy(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]
    assert f"{len(contracts)} kept, 0 broken" in done.stdout


WRONG_IMPORTS = [
    ("crawler/page/read.py", "import crawler.engine.coordinator",
     "crawler.page is not allowed to import crawler.engine"),
    ("crawler/core/records.py", "import crawler.urls.normalize",
     "crawler.core is not allowed to import crawler.urls"),
    ("crawler/engine/coordinator.py", "import httpx",
     "crawler.engine.coordinator -> httpx"),
    ("crawler/engine/page_fetcher.py", "import playwright",
     "crawler.engine.page_fetcher -> playwright"),
    ("crawler/cli/run.py", "import rq",
     "crawler.cli.run -> rq"),
    ("crawler/jobs/site_job.py", "import crawler.cli.run",
     "crawler.jobs is not allowed to import crawler.cli"),
    ("crawler/render/browser.py", "import crawler.engine.coordinator",
     "crawler.render is not allowed to import crawler.engine"),
    ("crawler/audit/report.py", "import sitemap_writer",
     "crawler.audit.report -> sitemap_writer"),
    ("sitemap_writer/writer.py", "import crawler.core.errors",
     "sitemap_writer.writer -> crawler.core.errors"),
    ("crawler/page/decode.py", "import crawler.page.read",  # read imports decode: a cycle
     "No cycles are allowed in crawler.page"),
]


def _add_import(tree: Path, module: str, wrong: str) -> None:
    path = tree / module
    text = path.read_text()
    head, sep, body = text.partition("\nfrom __future__ import annotations\n")
    path.write_text(head + sep + wrong + "\n" + body if sep else wrong + "\n" + text)


def test_each_wrong_import_breaks_its_contract(tmp_path: Path) -> None:
    """All of them in one tree, one run of the linter (each run costs half a second of
    CPU): every one must be named in what it reports."""
    tree = _copy(tmp_path)
    for module, wrong, _says in WRONG_IMPORTS:
        _add_import(tree, module, wrong)
    done = _lint(tree)
    assert done.returncode != 0, done.stdout
    missed = [says for _module, _wrong, says in WRONG_IMPORTS if says not in done.stdout]
    assert not missed, done.stdout


def test_an_import_downwards_breaks_nothing(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    _add_import(tree, "crawler/urls/scope.py", "import crawler.core.dates")
    done = _lint(tree)
    assert done.returncode == 0, done.stdout
