"""`sitemap-crawler audit`: findings, the JSON and CSV reports, and --fail-on, over a socket."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import REPO, read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _audit(tmp_path: Path, *options: str) -> tuple[str, object, dict, list[dict[str, str]]]:
    report, table = tmp_path / "audit.json", tmp_path / "audit.csv"
    with RunningServer("audit") as site:
        run = run_cli("audit", site.url + "/", "--report", str(report), "--report", str(table),
                      *options, default_duplicates=True)
    document = json.loads(report.read_text()) if report.exists() else {}
    rows = list(csv.DictReader(table.open(newline=""))) if table.exists() else []
    return site.url, run, document, rows


def test_every_finding_names_its_urls_and_where_to_fix_them(tmp_path: Path) -> None:
    u, run, document, _rows = _audit(tmp_path)
    assert run.code == 0, run.stderr
    assert document["version"] == 9
    found = document["findings"]
    broken = found["broken-links"]["items"]
    assert [item["url"] for item in broken] == [u + "/missing.html"]
    assert broken[0]["status"] == 404 and broken[0]["linked_from"] == 3
    assert sorted(broken[0]["found_on"]) == [u + "/", u + "/a.html", u + "/copy.html"]
    assert broken[0]["anchor"] == "A page that is gone"
    redirected = {item["url"]: item for item in found["redirected-links"]["items"]}
    assert redirected[u + "/old.html"]["use_instead"] == u + "/a.html"
    assert redirected[u + "/chain1"]["hops"] == 2
    assert redirected[u + "/chain1"]["chain"] == [u + "/chain1", u + "/chain2", u + "/a.html"]
    assert u + "/chain2" not in redirected  # reached through a redirect, not a link
    # what to fix: the copy, with the URL it duplicates (to redirect it to)
    assert found["duplicates"]["items"] == [{"url": u + "/copy.html",
                                             "duplicate_of": u + "/a.html"}]
    assert found["canonical-problems"]["items"] == [{
        "url": u + "/canon-to-missing.html", "canonical": u + "/missing.html",
        "problem": "canonical-not-200"}]
    titles = found["titles"]["items"]
    assert {"url": u + "/notitle.html", "problem": "missing-title"} in titles
    assert {"title": "Products", "problem": "duplicate-title",
            "urls": [u + "/same1.html", u + "/same2.html"]} in titles
    assert [item["url"] for item in found["noindex-linked"]["items"]] == [u + "/noindex.html"]
    assert "broken-links 1" in run.stderr and "titles" in run.stderr


def test_rows_carry_what_a_person_needs(tmp_path: Path) -> None:
    u, run, document, rows = _audit(tmp_path)
    assert run.code == 0, run.stderr
    by_url = {row["url"]: row for row in document["urls"]}
    a = by_url[u + "/a.html"]
    assert a["title"] == "Article A" and a["content_type"] == "text/html"
    assert a["bytes"] == len((REPO / "fixtures/sites/audit/a.html").read_bytes())
    assert a["response_ms"] >= 0 and a["linked_from"] == 1 and a["found_on"] == [u + "/"]
    assert by_url[u + "/chain1"]["redirect_chain"] == [u + "/chain2", u + "/a.html"]
    assert by_url[u + "/noindex.html"]["noindex"] is True
    # the CSV: one row per URL, the same facts, readable by any spreadsheet
    assert [row["url"] for row in rows] == [row["url"] for row in document["urls"]]
    missing = next(row for row in rows if row["url"] == u + "/missing.html")
    assert missing["status"] == "404" and missing["linked_from"] == "3"
    assert missing["listed"] == "no" and missing["reason"] == "status-not-200"
    # findings in the CSV: the column a spreadsheet filters on
    assert missing["findings"] == "broken-links"
    by_row = {row["url"]: row["findings"] for row in rows}
    # a copy: listed once, as its original; the copy is a row duplicate-of it, named by
    # the duplicates finding alone (its title, description and h1 are the original's)
    assert by_row[u + "/copy.html"] == "duplicates"
    # the original is not what to fix: the duplicates finding names the copy only
    assert by_row[u + "/a.html"] == "missing-descriptions missing-h1"
    copy = next(row for row in rows if row["url"] == u + "/copy.html")
    assert copy["reason"] == "duplicate-of" and copy["listed"] == "no"
    assert by_row[u + "/same1.html"] == by_row[u + "/same2.html"] == (
        "titles missing-descriptions missing-h1")
    assert by_row[u + "/chain1"] == "redirected-links"


def test_fail_on_exits_6_after_writing_the_reports(tmp_path: Path) -> None:
    _u, run, document, rows = _audit(tmp_path, "--fail-on", "duplicates,broken-links")
    assert run.code == 6, run.stderr
    assert run.stderr.strip().endswith("findings present: duplicates (1), broken-links (1)")
    assert document["findings"]["broken-links"]["count"] == 1 and rows


def test_fail_on_a_finding_that_is_absent_exits_0(tmp_path: Path) -> None:
    with RunningServer("basic") as site:
        run = run_cli("audit", site.url + "/index.html", "--report",
                      str(tmp_path / "r.json"), "--fail-on", "duplicates", "--max-pages", "1")
    assert run.code == 0, run.stderr


@pytest.mark.parametrize(("options", "words"), [
    (["--report", "r.pdf"], "must be one of .json, .csv, .html"),
    (["--report", "r.xml"], "must be one of .json, .csv, .html"),
    (["--report", "r.json", "--fail-on", "typos"], "--fail-on typos: not a finding"),
])
def test_bad_report_or_finding_exits_2_before_crawling(tmp_path: Path, options: list[str],
                                                        words: str) -> None:
    with RunningServer("audit") as site:
        run = run_cli("audit", site.url + "/", *[str(tmp_path / o) if o.startswith("r.")
                                                 else o for o in options])
        assert run.code == 2 and words in run.stderr
        assert site.paths() == []


def test_audit_writes_no_sitemap_and_crawl_report_gains_csv(tmp_path: Path) -> None:
    with RunningServer("audit") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--report",
                      str(tmp_path / "crawl.csv"))
        assert run.code == 0, run.stderr
        rows = list(csv.DictReader((tmp_path / "crawl.csv").open(newline="")))
        assert any(row["url"] == site.url + "/missing.html" and row["linked_from"] == "3"
                   for row in rows)
        audit_dir = tmp_path / "audit-only"
        audit_dir.mkdir()
        run = run_cli("audit", site.url + "/", "--report", str(audit_dir / "r.json"))
        assert run.code == 0 and sorted(p.name for p in audit_dir.iterdir()) == ["r.json"]


def test_html_report_in_a_real_browser(tmp_path: Path) -> None:
    """The HTML report opened in headless Chromium, offline: summary counts, a finding's
    row, the charts, filtering and sorting, as a person would use them."""
    from browser import browser_page

    report = tmp_path / "audit.html"
    with RunningServer("audit") as site:
        run = run_cli("audit", site.url + "/", "--report", str(report))
        assert run.code == 0, run.stderr
    text = report.read_text()
    assert "<script src" not in text and "<link" not in text  # nothing to fetch
    shots = REPO / ".pytest_cache" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with browser_page() as page:
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(report.as_uri())
        assert requests == [report.as_uri()]  # self-contained: no other request
        assert page.locator('[data-count="URLs seen"]').inner_text() == "12"
        assert page.locator('[data-finding="broken-links"]').inner_text() == "1"
        assert page.locator("figure.chart svg").count() == 4
        assert page.locator("figure.chart svg rect").count() >= 8
        broken = page.locator("#broken-links tbody tr")
        assert broken.count() == 1 and "/missing.html" in broken.inner_text()
        page.screenshot(path=str(shots / "audit-report.png"), full_page=False)
        rows = page.locator("#url-table tbody tr")
        total = rows.count()
        assert total == 12
        page.fill("#filter", "chain")
        assert page.locator("#url-table tbody tr:visible").count() == 2
        assert page.locator("#shown").inner_text() == "2"
        page.fill("#filter", "")
        page.click('#url-table th[data-key="status"]')  # ascending
        statuses = page.locator("#url-table tbody tr td:nth-child(2)").all_inner_texts()
        numbers = [int(s) for s in statuses if s]
        assert numbers == sorted(numbers) and numbers[-1] == 404
        page.click('#url-table th[data-key="status"]')  # descending
        first = page.locator("#url-table tbody tr td:nth-child(2)").first.inner_text()
        assert first == "404"


def test_drop_duplicates_lists_one_page_of_each_group(tmp_path: Path) -> None:
    with RunningServer("audit") as site:
        plain = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "all"),
                        "--keep-duplicates")
        assert plain.code == 0, plain.stderr
        default = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "default"),
                          default_duplicates=True)
        assert default.code == 0, default.stderr
        by_default = read_sitemaps(tmp_path / "default", site.url + "/").locs
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "one"), "--report",
                      str(tmp_path / "r.json"), "--drop-duplicates")
        assert run.code == 0, run.stderr
        kept = read_sitemaps(tmp_path / "one", site.url + "/").locs
        everything = read_sitemaps(tmp_path / "all", site.url + "/").locs
    assert site.url + "/copy.html" in everything and site.url + "/copy.html" not in kept
    assert sorted(set(everything) - set(kept)) == [site.url + "/copy.html"]
    # by default the same bytes at two URLs are listed once (copy.html is a.html's bytes)
    assert sorted(set(everything) - set(by_default)) == [site.url + "/copy.html"]
    rows = {row["url"]: row for row in json.loads((tmp_path / "r.json").read_text())["urls"]}
    assert rows[site.url + "/copy.html"]["reason"] == "duplicate-of"
    assert rows[site.url + "/copy.html"]["duplicate_of"] == site.url + "/a.html"


def test_the_last_line_names_only_the_findings_present_and_every_file_written(
        tmp_path: Path) -> None:
    """Fix first has said what is wrong; the last line counts what is present, errors
    first (never 20 zeros), and names every file the run wrote: an HTML report with a
    finding past the page's rows has its findings CSV beside it."""
    root = tmp_path / "site"
    root.mkdir()
    links = "".join(f'<a href="/gone{n}.html">x</a>' for n in range(120))
    (root / "index.html").write_text(f"<!doctype html><title>Home</title>{links}")
    report = tmp_path / "a.html"
    with RunningServer(root) as site:
        run = run_cli("audit", site.url + "/", "--report", str(report),
                      "--compare-sitemap", "off")
    assert run.code == 0, run.stderr
    last = [line for line in run.stderr.splitlines() if line.startswith("audited ")][-1]
    assert "broken-links 120" in last, last
    assert " 0," not in last and not last.split(";")[0].endswith(" 0"), last
    assert last.index("broken-links") < last.index("report(s)"), last
    assert "1 error" in last, last
    csv_file, urls_file = tmp_path / "a.findings.csv", tmp_path / "a.urls.csv"
    assert csv_file.exists() and urls_file.exists()
    assert f"{report}, {urls_file}, {csv_file}" in last, last


def test_the_duplicates_name_the_copies_to_fix_in_every_format(tmp_path: Path) -> None:
    """"Redirect the copies to the kept URL": each copy is named, beside the URL it
    duplicates, in the terminal, Markdown and the HTML's Fix first."""
    md, html = tmp_path / "a.md", tmp_path / "a.html"
    with RunningServer("pglike") as site:
        terminal = run_cli("audit", site.url + "/", default_duplicates=True)
        run = run_cli("audit", site.url + "/", "--report", str(md), "--report", str(html),
                      default_duplicates=True)
    assert run.code == 0 and terminal.code == 0, run.stderr + terminal.stderr
    copy, kept = site.url + "/index.html", site.url + "/"
    assert f"- {copy}: duplicate of {kept}" in terminal.stdout, terminal.stdout
    assert f"`{copy}` (duplicate_of `{kept}`)" in md.read_text()
    fix_first = html.read_text().split('id="fix-first"')[1].split("</section>")[0]
    duplicates = fix_first[fix_first.index('href="#duplicates"'):].split("</li>")[0]
    assert copy in duplicates, duplicates
