"""Links written the way Windows-authored sites write them, crawled as browsers read them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import read_sitemaps, report_rows, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def test_backslashes_and_quotes_are_read_as_browsers_read_them(tmp_path: Path) -> None:
    out, report = tmp_path / "out", tmp_path / "report.json"
    with RunningServer("windows") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      "--ignore-robots")
        assert run.code == 0, run.stderr
        requested = site.paths()
        listed = [loc.removeprefix(site.url) for loc in read_sitemaps(out, site.url + "/").locs]
    assert not any("%5C" in path or "\\" in path for path in requested), requested
    # robots.txt: read for the published copy only (--ignore-robots)
    assert sorted(requested) == ["/", "/about.htm", "/docs/guide.htm", "/docs/img.htm",
                                 "/index.html", "/robots.txt", "/search.htm?q=it%27s"]
    assert "/search.htm?q=it%27s" in listed and "/about.htm" in listed
    rows = report_rows(report)
    # https://evil.test\@127.0.0.1/ is evil.test's root, never ours
    assert rows[f"https://evil.test/@127.0.0.1:{site.port}/"]["reason"] == "external"
