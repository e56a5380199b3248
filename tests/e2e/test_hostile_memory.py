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
