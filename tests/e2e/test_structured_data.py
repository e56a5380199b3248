"""Structured data in audits: the types each page declares, and structured-data-errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def test_audit_rows_name_the_types_and_the_finding_names_each_error(tmp_path: Path) -> None:
    reports = [tmp_path / f"r{ext}" for ext in (".json", ".csv", ".md")]
    with RunningServer("structured") as site:
        run = run_cli("audit", site.url + "/", "--compare-sitemap", "off",
                      *[arg for report in reports for arg in ("--report", str(report))])
    assert run.code == 0, run.stderr
    u = site.url
    document = json.loads(reports[0].read_text())
    rows = {row["url"].removeprefix(u): row for row in document["urls"]}
    assert rows["/article.html"]["structured_data"] == ["NewsArticle", "og:article"]
    assert rows["/graph.html"]["structured_data"] == ["WebSite", "Organization"]
    assert rows["/microdata.html"]["structured_data"] == ["Product", "og:website"]
    assert rows["/index.html"]["structured_data"] == []
    found = {item["url"].removeprefix(u): item["errors"]
             for item in document["findings"]["structured-data-errors"]["items"]}
    assert set(found) == {"/product.html", "/broken.html", "/context.html",
                          "/breadcrumbs.html", "/faq.html", "/video.html", "/microdata.html"}
    assert found["/product.html"] == [
        "Product: none of review, aggregateRating, offers (required)"]
    assert len(found["/broken.html"]) == 1
    assert found["/broken.html"][0].startswith("JSON-LD block 1 does not parse:")
    assert found["/context.html"] == [
        "JSON-LD block 1: @context 'https://vocab.example.org/' is not schema.org",
        "JSON-LD block 2: no @context (schema.org expected)"]
    assert found["/breadcrumbs.html"] == [
        "BreadcrumbList: ListItem 2 has no item (required for all but the last)"]
    assert found["/faq.html"] == ["Answer: no text (required)"]
    assert found["/video.html"] == ["VideoObject: no thumbnailUrl (required)"]
    assert found["/microdata.html"] == ["Product: no name (required)",
                                        "Product: none of review, aggregateRating, offers "
                                        "(required)"]
    table = {row["url"].removeprefix(u): row for row in csv.DictReader(reports[1].open())}
    assert table["/article.html"]["structured_data"] == "NewsArticle og:article"
    assert "structured-data-errors" in table["/faq.html"]["findings"]
    assert "structured-data-errors" in reports[2].read_text()


def test_the_finding_can_fail_the_audit_and_a_crawl_report_has_the_column(tmp_path: Path) -> None:
    with RunningServer("structured") as site:
        audit = run_cli("audit", site.url + "/", "--compare-sitemap", "off",
                        "--report", "-", "--fail-on", "structured-data-errors")
        crawl = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                        "--report", str(tmp_path / "crawl.json"))
    assert audit.code == 6, audit.stderr  # findings present
    assert "structured-data-errors (7)" in audit.stderr
    assert crawl.code == 0, crawl.stderr
    rows = json.loads((tmp_path / "crawl.json").read_text())["urls"]
    types = {row["url"].removeprefix(site.url): row["structured_data"] for row in rows}
    assert types["/video.html"] == ["VideoObject"]
