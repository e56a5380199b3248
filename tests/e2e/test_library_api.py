"""The library example in docs/pages/library.md, run as a user would run it, over a socket."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO, read_sitemaps
from siteserver import RunningServer

import crawler
import sitemap_writer


def _example() -> str:
    text = (REPO / "docs" / "pages" / "library.md").read_text()
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)  # type: ignore[union-attr]


def test_the_documented_example_crawls_filters_and_writes(tmp_path: Path) -> None:
    code = _example()
    assert len(code.strip().splitlines()) <= 12  # "ten lines", imports aside
    with RunningServer("shop") as site:
        script = code.replace("https://www.example.com/", site.url + "/").replace(
            '"/drafts/"', '"/tag/"')
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "NO_PROXY": "*",
                                   "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    written = read_sitemaps(tmp_path / "public", site.url + "/")
    assert written.locs and not any("/tag/" in loc for loc in written.locs)
    assert f"{len(written.locs)} URLs in 1 sitemap(s)" in done.stdout


def test_the_public_names_are_what_the_docs_use() -> None:
    for name in ("CrawlConfig", "crawl", "CrawlResult", "ConfigError", "StartUrlError",
                 "PageRecord"):
        assert name in crawler.__all__ and getattr(crawler, name) is not None
    for name in ("SitemapEntry", "write_sitemaps", "WriteResult"):
        assert name in sitemap_writer.__all__
