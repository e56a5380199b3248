"""What pages say, in every audit row: meta description, h1, words; and --extract's columns."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)

RULES = ["price=css:.price", "prices[]=css:.price", "author=css:meta[name=author]@content",
         "sku=regex:SKU: ([A-Z0-9-]+)", "links=xpath:count(//a)", "heading=xpath://h1"]


def test_every_row_says_what_its_page_says_and_what_was_extracted(tmp_path: Path) -> None:
    reports = [tmp_path / f"r{ext}" for ext in (".json", ".csv", ".html")]
    with RunningServer("facts") as site:
        run = run_cli("audit", site.url + "/", *[arg for report in reports
                                                 for arg in ("--report", str(report))],
                      *[arg for rule in RULES for arg in ("--extract", rule)],
                      "--compare-sitemap", "off")
    assert run.code == 0, run.stderr
    u = site.url
    document = json.loads(reports[0].read_text())
    rows = {row["url"].removeprefix(u): row for row in document["urls"]}
    mug = rows["/mug.html"]
    assert (mug["description"], mug["h1"], mug["h1_count"]) == ("A blue mug.", "Blue mug", 1)
    assert mug["word_count"] == 2 + 2 + 2 + 1  # h1, SKU line, prices, "home": no script
    assert (mug["price"], mug["prices"], mug["author"], mug["sku"]) == (
        "12.50", ["12.50", "9.99"], "Ann Potter", "MUG-001")
    assert (mug["links"], mug["heading"]) == ("1", "Blue mug")
    cup = rows["/cup.html"]
    assert (cup["price"], cup["author"], cup["sku"], cup["h1_count"]) == ("7", None, "CUP-002", 2)
    assert document["extract"] == ["price", "prices", "author", "sku", "links", "heading"]
    found = document["findings"]
    assert [item["url"] for item in found["missing-descriptions"]["items"]] == [
        u + "/copy.html", u + "/cup.html"]  # by URL, whatever the crawl's order
    assert found["duplicate-descriptions"]["items"] == [
        {"description": "A blue mug.", "urls": [u + "/about.html", u + "/mug.html"]}]
    assert [item["url"] for item in found["missing-h1"]["items"]] == [u + "/about.html"]
    assert [(item["url"], item["h1_count"]) for item in found["multiple-h1"]["items"]] == [
        (u + "/cup.html", 2)]
    table = {row["url"].removeprefix(u): row for row in csv.DictReader(reports[1].open())}
    assert list(table["/mug.html"])[-6:] == ["price", "prices", "author", "sku", "links",
                                             "heading"]
    assert table["/mug.html"]["prices"] == "12.50 9.99"
    assert table["/mug.html"]["word_count"] == "7"
    assert table["/cup.html"]["findings"] == "missing-descriptions multiple-h1"
    page = reports[2].read_text()
    assert '<th data-key="sku">sku</th>' in page and "MUG-001" in page


def test_rules_come_from_a_config_file_too(tmp_path: Path) -> None:
    config = tmp_path / "site.toml"
    config.write_text('extract = ["sku=regex:SKU: ([A-Z0-9-]+)"]\ncompare-sitemap = "off"\n')
    report = tmp_path / "r.json"
    with RunningServer("facts") as site:
        run = run_cli("audit", site.url + "/", "--config", str(config), "--report", str(report))
    assert run.code == 0, run.stderr
    rows = {row["url"]: row for row in json.loads(report.read_text())["urls"]}
    assert rows[site.url + "/cup.html"]["sku"] == "CUP-002"


@pytest.mark.parametrize(("rule", "says"), [
    ("price=css:.price[", "'.price[' is not a valid CSS selector"),
    ("sku=regex:SKU: (", "not a valid regular expression"),
    ("n=xpath://a[", "'//a[' is not a valid XPath expression"),
    ("title=css:h1", "title is already a column of the report"),
    ("price=jq:.price", "'jq' is not one of css, xpath, regex"),
    ("price", "must be NAME=css:SELECTOR"),
])
def test_a_bad_rule_is_one_line_and_exit_2_before_any_request(tmp_path: Path, rule: str,
                                                              says: str) -> None:
    with RunningServer("facts") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--extract", rule)
        assert site.log == []
    assert run.code == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and says in run.stderr
    assert f"--extract {rule!r}" in run.stderr
