"""Titles in a crawl's report are the ones a browser shows, over a real socket."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import report_rows, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def test_an_icons_title_is_not_the_pages(tmp_path: Path) -> None:
    out, report = tmp_path / "out", tmp_path / "report.json"
    with RunningServer("titles") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report))
        assert run.code == 0, run.stderr
        rows = report_rows(report, site.url)
    assert rows["/logo-first.html"]["title"] == "Opening hours"
    assert rows["/spaces.html"]["title"] == "Price: 10\u00a0EUR"
    assert rows["/icon-only.html"]["title"] is None  # an audit calls it missing
    assert rows["/"]["title"] == "Titles as browsers show them"
