"""What a hostile site claims must not grow the crawl's memory (hostile items 7-9)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import report_rows, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(90)
HTML = {"Content-Type": "text/html"}


def _alternates_page(count: int) -> dict[str, Any]:
    links = "".join(f'<link rel="alternate" hreflang="x{i}" href="/lang/{i}/">'
                    for i in range(count))
    return {"headers": HTML, "body": f"<html><head>{links}</head><body>hi</body></html>"}


@pytest.mark.parametrize("hreflang", [True, False])
def test_hreflang_alternates_are_capped_per_page_and_none_kept_when_off(
        tmp_path: Path, hreflang: bool) -> None:
    routes = {"/": {"headers": HTML, "body": '<a href="/many.html">many</a>'},
              "/many.html": _alternates_page(2000), "/lang/*": {"status": 404}}
    state, report = tmp_path / "state.db", tmp_path / "report.json"
    with RunningServer("hostile", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--state",
                      str(state), "--report", str(report), "--max-pages", "400",
                      *(() if hreflang else ("--no-hreflang",)))
        requested = site.paths()
    assert run.code == 0, run.stderr
    with sqlite3.connect(state) as db:
        kept = [json.loads(text) for (text,) in db.execute(
            "SELECT alternates FROM pages WHERE alternates IS NOT NULL")]
    most = max((len(pairs) for pairs in kept), default=0)
    row = report_rows(report, site.url)["/many.html"]
    if hreflang:
        assert most == 300
        assert row["hreflang_dropped"] == 1700  # said in the report
        assert sum(path.startswith("/lang/") for path in requested) == 300
    else:
        assert most == 0 and "hreflang_dropped" not in row
        assert not any(path.startswith("/lang/") for path in requested)


@pytest.mark.slow(6)
def test_the_cookie_jar_is_capped_as_browsers_cap_it(tmp_path: Path) -> None:
    """Every page sets a new 1 KB cookie: the jar keeps the newest, at most 50 and a
    Cookie header under 8 KB (RFC 6265 §6.1's minimums, servers' header limits)."""
    count = 120
    pages = {f"/c{i}.html": {"headers": {**HTML, "Set-Cookie": f"c{i}={'v' * 1000}; Path=/"},
                             "body": f"<p>{i}</p>"} for i in range(count)}
    chain = "".join(f'<a href="/c{i}.html">{i}</a>' for i in range(count))
    routes = {"/": {"headers": HTML, "body": chain}, **pages,
              "/big.html": {"headers": {**HTML, "Set-Cookie": f"big={'b' * 5000}"},
                            "body": "<p>big</p>"}}
    routes["/"]["body"] = '<a href="/big.html">big</a>' + chain
    with RunningServer("hostile", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      "--concurrency", "1", "--report", str(tmp_path / "r.json"))
        sent = [hit.headers.get("cookie", "") for hit in site.log]
    assert run.code == 0, run.stderr
    assert max(len(header) for header in sent) < 8000
    assert max(header.count("=") for header in sent) <= 50
    assert not any("big=" in header for header in sent)  # over 4096 bytes: refused
    assert f"c{count - 2}=" in sent[-1]  # the newest are kept
    rows = report_rows(tmp_path / "r.json", site.url)
    assert all(rows[path]["status"] == 200 for path in pages)
