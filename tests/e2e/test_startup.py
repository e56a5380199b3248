"""Start-up imports only what the command needs: ``--version`` nothing of the crawler,
``--help`` and a usage error no HTTP stack, no parser, no audit (issue #27). Checked
by what is imported, not by timing it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO

HEAVY = ("httpx", "aiohttp", "selectolax", "anyio", "tldextract", "crawler.engine",
         "crawler.http", "crawler.audit.findings", "crawler.page.read", "lxml", "rich")


def _imported(*args: str) -> tuple[int, set[str], str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "crawler", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    return done.returncode, modules, done.stdout


@pytest.mark.parametrize("args", [["--help"], ["crawl", "--help"], ["audit", "--help"]])
def test_help_imports_no_http_stack_no_parser_no_audit(args: list[str]) -> None:
    code, modules, out = _imported(*args)
    assert code == 0 and "Usage:" in out
    assert "crawler.cli.options" in modules  # the real option definitions
    assert not [name for name in modules if name.startswith(HEAVY)], sorted(
        name for name in modules if name.startswith(HEAVY))


def test_version_imports_nothing_but_the_version() -> None:
    code, modules, out = _imported("--version")
    assert code == 0 and out.startswith("sitemap-crawler, version ")
    assert {name for name in modules if name.startswith("crawler")} <= {
        "crawler", "crawler.__version__", "crawler.__main__", "crawler.cli", "crawler.cli.launch",
        "crawler.cli.invocation", "crawler.core", "crawler.core.credentials",
        "crawler.core.errors"}
    assert "click" not in modules


def test_a_crawl_still_imports_its_engine(tmp_path: object) -> None:
    code, modules, _out = _imported("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path),
                                    "--retries", "0", "--timeout", "1")
    assert code == 3  # nothing listens there
    assert "crawler.engine.coordinator" in modules and "crawler.cli.run" in modules
