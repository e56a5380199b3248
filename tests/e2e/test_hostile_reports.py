"""What a hostile site writes into our reports (hostile items 10 and 11)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(90)
HTML = {"Content-Type": "text/html"}
FORMULAS = ["=HYPERLINK(\"http://evil.test/\",\"x\")", "+1+2", "-3", "@SUM(A1)",
            "\uff1dcmd()"]


def test_csv_cells_that_would_start_a_formula_are_written_as_text(tmp_path: Path) -> None:
    pages = {f"/p{i}.html": {"headers": HTML,
                             "body": f"<title>{title}</title><p>page {i}</p>"}
             for i, title in enumerate(FORMULAS)}
    links = "".join(f'<a href="{path}">{title}</a>' for path, title in
                    zip(pages, ["=1+1", "+x", "-y", "@z", "\tq"], strict=True))
    routes = {"/": {"headers": HTML, "body": f"<title>home</title>{links}"}, **pages}
    csv_report, json_report = tmp_path / "r.csv", tmp_path / "r.json"
    with RunningServer("hostile", routes) as site:
        run = run_cli("audit", site.url + "/", "--report", str(csv_report), "--report",
                      str(json_report), "--compare-sitemap", "off")
    assert run.code == 0, run.stderr
    with csv_report.open(newline="", encoding="utf-8") as handle:
        rows = {row["url"].removeprefix(site.url): row for row in csv.DictReader(handle)}
    dangerous = ("=", "+", "-", "@", "\t", "\r", "\uff1d")
    for row in rows.values():
        for column, cell in row.items():
            assert not cell.startswith(dangerous), (column, cell)
    for i, title in enumerate(FORMULAS):
        assert rows[f"/p{i}.html"]["title"] == "'" + title
    assert rows["/p0.html"]["anchor"] == "'=1+1"
    # the JSON report is not a spreadsheet: it keeps the text as the site wrote it
    document = json.loads(json_report.read_text())
    titles = {row["url"].removeprefix(site.url): row.get("title") for row in document["urls"]}
    assert titles["/p0.html"] == FORMULAS[0]
