"""Findings by section, and the three external counts, the same wherever they are said.

The ``sections`` fixture is copied and spoilt per section: the blog's posts lose
their titles (warnings), the docs gain a broken link (an error) and links to other
sites; an audit with ``--sections auto`` counts each where it is fixed.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from siteserver import FIXTURES, RunningServer

pytestmark = pytest.mark.timeout(120)


def _spoilt(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "sections", site)
    for post in ("first", "second", "third"):
        page = site / "blog" / f"{post}.html"
        page.write_text(re.sub(r"<title>[^<]*</title>", "", page.read_text()))
    usage = site / "docs" / "usage.html"
    links = ('<a href="/docs/gone.html">gone</a>'
             '<a href="http://localhost:9/a">a</a><a href="http://localhost:9/b">b</a>')
    usage.write_text(usage.read_text().replace("</body>", links + "</body>"))
    install = site / "docs" / "install.html"
    install.write_text(install.read_text().replace(
        "</body>", '<a href="http://localhost:9/a">a</a></body>'))
    return site


def test_an_audit_counts_findings_by_section_in_every_format(tmp_path: Path) -> None:
    reports = [tmp_path / f"r{ext}" for ext in (".json", ".html", ".md")]
    with RunningServer(_spoilt(tmp_path)) as site:
        run = run_cli("audit", site.url + "/", "--sections", "auto", "--no-check-external",
                      *[arg for report in reports for arg in ("--report", str(report))])
        terminal = run_cli("audit", site.url + "/", "--sections", "auto",
                           "--no-check-external")
    assert run.code == 0, run.stderr
    rows = {row["section"]: row for row in json.loads(reports[0].read_text())["by_section"]}
    assert list(rows) == ["products", "blog", "docs", "other"]  # the sitemap's order
    # pages fetched: the docs' broken link is a fourth, answering 404
    assert {name: row["pages"] for name, row in rows.items()} == {
        "products": 5, "blog": 4, "docs": 4, "other": 2}
    # the broken link counts where it is fixed: on /docs/usage.html
    assert rows["docs"]["error"] == 1 and rows["docs"]["findings"]["broken-links"] == 1
    assert rows["blog"]["findings"]["titles"] >= 1 and rows["blog"]["error"] == 0
    assert rows["products"]["error"] == rows["products"]["warning"] == 0
    markdown = reports[2].read_text()
    assert "| docs | 4 | 1 | " in markdown
    assert "Section docs: 4 pages, 1 error" in terminal.stdout
    from browser import browser_page

    shots = REPO / ".pytest_cache" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(reports[1].as_uri())
        # the sections come before Fix first, one row each, with its counts
        assert page.locator("h1 + section").get_attribute("id") == "sections"
        docs = page.locator("#sections tbody tr", has_text="docs")
        cells = docs.locator("td").all_inner_texts()
        assert cells == ["docs", "4", "1", str(rows["docs"]["warning"]),
                         str(rows["docs"]["notice"])]
        page.screenshot(path=str(shots / "audit-sections.png"))


def test_the_three_external_counts_are_the_same_in_every_summary_and_report(
        tmp_path: Path) -> None:
    """Distinct external URLs, the links to them, the pages holding them: three numbers
    under three names, the same in the crawl's summary, the audit's, and every report."""
    reports = [tmp_path / f"r{ext}" for ext in (".json", ".html", ".md")]
    with RunningServer(_spoilt(tmp_path)) as site:
        crawl = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"))
        audit = run_cli("audit", site.url + "/", "--no-check-external",
                        *[arg for report in reports for arg in ("--report", str(report))])
        terminal = run_cli("audit", site.url + "/", "--no-check-external")
    assert crawl.code == audit.code == terminal.code == 0, crawl.stderr + audit.stderr
    words = "2 external URLs, 3 links to them, on 2 pages"
    assert f"links out: {words}" in crawl.stderr
    assert f"Links out: {words}" in terminal.stdout
    assert f"Links out: {words}." in reports[2].read_text()
    assert json.loads(reports[0].read_text())["totals"]["external"] == {
        "urls": 2, "estimated": False, "links": 3, "pages": 2}
    from browser import browser_page

    with browser_page() as page:
        page.goto(reports[1].as_uri())
        cards = {name: page.locator(f'[data-count="{name}"]').inner_text()
                 for name in ("external URLs", "links to them", "pages holding them")}
        assert cards == {"external URLs": "2", "links to them": "3", "pages holding them": "2"}
        # no chart counts them as pages not listed
        assert "external" not in page.locator("figure.chart", has_text="Reasons").inner_text()
