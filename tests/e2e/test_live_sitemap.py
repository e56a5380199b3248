"""--compare-sitemap: the site's live sitemap held against the crawl, over a socket.

The fixture ``live-sitemap`` publishes, through robots.txt, an index of five
sitemaps: a plain one, a gzip file, a 404, a broken XML file and an index
nested in the index. Between them they list every kind of URL a sitemap must
not (a 404, a redirect, a noindex page, a canonicalised page, a disallowed
page, another host, a mailto:), an orphan, and lastmods that cannot be true.
"""

from __future__ import annotations

import csv
import json
import socket
from pathlib import Path

import pytest
from conftest import REPO, interrupt_when, read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _audit(tmp_path: Path, site_name: str = "live-sitemap", *options: str
           ) -> tuple[str, object, dict, list[str]]:
    report = tmp_path / "audit.json"
    with RunningServer(site_name) as site:
        run = run_cli("audit", site.url + "/", "--report", str(report),
                      "--report", str(tmp_path / "audit.csv"), *options)
    document = json.loads(report.read_text()) if report.exists() else {}
    return site.url, run, document, site.paths()


def _items(document: dict, name: str) -> list[dict]:
    return document["findings"][name]["items"]


def test_what_the_live_sitemap_lists_that_search_engines_would_refuse(tmp_path: Path) -> None:
    u, run, document, _paths = _audit(tmp_path)
    assert run.code == 0, run.stderr
    assert document["version"] == 9
    pages = u + "/sitemaps/pages.xml"
    found = {item["url"]: item for item in _items(document, "non-indexable-in-sitemap")}
    assert {url: item["problem"] for url, item in found.items()} == {
        u + "/gone.html": "status-not-200",
        u + "/old.html": "redirect",
        u + "/noindex.html": "noindex",
        u + "/canon.html": "canonical-elsewhere",
        u + "/private/secret.html": "robots-disallowed",
        "http://other.test/x.html": "outside-sitemap-scope",
        "mailto:someone@example.com": "invalid-url",
    }
    assert found[u + "/gone.html"]["status"] == 404
    assert found[u + "/old.html"]["target"] == u + "/a.html"
    assert found[u + "/canon.html"]["target"] == u + "/a.html"
    assert all(item["sitemap"] == pages for item in found.values())
    # the last line names what is present, and nothing that is not
    assert "non-indexable-in-sitemap 7" in run.stderr and "broken-links" not in run.stderr


def test_orphans_are_fetched_within_the_crawls_limits_and_never_followed(
        tmp_path: Path) -> None:
    u, run, document, paths = _audit(tmp_path)
    assert run.code == 0, run.stderr
    orphans = {item["url"]: item for item in _items(document, "orphans")}
    assert {url: (item["status"], item["reason"]) for url, item in orphans.items()} == {
        u + "/orphan.html": (200, "orphan"),
        u + "/gone.html": (404, "status-not-200"),
        u + "/private/secret.html": (None, "robots-disallowed"),
    }
    assert "/private/secret.html" not in paths  # robots.txt holds for orphans too
    assert "/only-from-orphan.html" not in paths  # an orphan's links are not followed
    assert "/b.html" in paths and paths.count("/orphan.html") == 1
    rows = {row["url"]: row for row in document["urls"]}
    assert rows[u + "/orphan.html"]["reason"] == "orphan"
    assert rows[u + "/orphan.html"]["orphan"] is True and rows[u + "/orphan.html"]["depth"] is None
    assert rows[u + "/a.html"]["in_live_sitemap"] is True and rows[u + "/a.html"]["orphan"] is False
    assert rows[u + "/e.html"]["in_live_sitemap"] is False
    table = {row["url"]: row for row in csv.DictReader((tmp_path / "audit.csv").open())}
    assert table[u + "/orphan.html"]["orphan"] == "yes"
    assert table[u + "/e.html"]["in_live_sitemap"] == "no"
    assert table[u + "/e.html"]["findings"] == (
        "missing-descriptions missing-h1 missing-from-sitemap")
    assert table[u + "/orphan.html"]["findings"] == "orphans"
    assert table[u + "/gone.html"]["findings"] == "non-indexable-in-sitemap orphans"
    # bounded by the crawl's limits: with the budget spent, orphans are named, not fetched
    u, run, document, paths = _audit(tmp_path, "live-sitemap", "--max-pages", "3")
    assert run.code == 0, run.stderr
    assert "/orphan.html" not in paths
    reasons = {item["url"]: item["reason"] for item in _items(document, "orphans")}
    assert reasons[u + "/orphan.html"] == "max-pages"


def test_missing_pages_and_lastmods_that_cannot_be_true(tmp_path: Path) -> None:
    u, run, document, _paths = _audit(tmp_path)
    assert run.code == 0, run.stderr
    assert [item["url"] for item in _items(document, "missing-from-sitemap")] == [u + "/e.html"]
    lastmods = _items(document, "sitemap-lastmod")
    by_problem = {item["problem"]: item for item in lastmods}
    assert by_problem["older-than-last-modified"]["url"] == u + "/"
    assert by_problem["older-than-last-modified"]["last_modified"] == "2024-06-01T10:00:00Z"
    assert by_problem["in-the-future"]["url"] == u + "/a.html"
    assert by_problem["not-w3c-datetime"] == {
        "url": u + "/noindex.html", "lastmod": "last tuesday", "problem": "not-w3c-datetime",
        "sitemap": u + "/sitemaps/pages.xml"}
    assert by_problem["same-on-every-entry"] == {
        "sitemap": u + "/sitemaps/more.xml.gz", "lastmod": "2024-03-03", "entries": 3,
        "problem": "same-on-every-entry"}
    assert len(lastmods) == 4  # orphan.html's lastmod (with a zone) is fine


def test_a_repeated_audit_whose_pages_answer_304_still_holds_lastmods_to_them(
        tmp_path: Path) -> None:
    """With --state the second audit's pages answer 304 (with the ETag alone, as a
    server may): the page is the stored one, and so is its Last-Modified, which
    the live sitemap's lastmod is still held against."""
    state = tmp_path / "state.db"
    findings = []
    with RunningServer("live-sitemap", conditional=True) as site:
        for attempt in range(2):
            report = tmp_path / f"audit-{attempt}.json"
            run = run_cli("audit", site.url + "/", "--report", str(report),
                          "--state", str(state))
            assert run.code == 0, run.stderr
            findings.append(_items(json.loads(report.read_text()), "sitemap-lastmod"))
        conditional = sum("if-none-match" in hit.headers for hit in site.log)
    assert conditional >= 5  # the second audit asked for its pages only if changed
    assert findings[1] == findings[0]
    older = [item for item in findings[1] if item["problem"] == "older-than-last-modified"]
    assert [(item["url"], item["last_modified"]) for item in older] == [
        (site.url + "/", "2024-06-01T10:00:00Z")]


def test_a_resumed_audit_holds_lastmods_to_the_pages_read_before_it_stopped(
        tmp_path: Path) -> None:
    report, state = tmp_path / "audit.json", tmp_path / "state.db"
    with RunningServer("live-sitemap", {"/c.html": {"delay": 1.0}}) as site:
        args = ["audit", site.url + "/", "--report", str(report), "--state", str(state),
                "--concurrency", "1"]
        interrupt_when(args, lambda: "/c.html" in site.paths(), settle=0.2)
        site.log.clear()
        resumed = run_cli(*args, "--resume")
        assert resumed.code == 0, resumed.stderr
        assert "/" not in site.paths()  # read before the interruption: not again
    older = [item for item in _items(json.loads(report.read_text()), "sitemap-lastmod")
             if item["problem"] == "older-than-last-modified"]
    assert [(item["url"], item["last_modified"]) for item in older] == [
        (site.url + "/", "2024-06-01T10:00:00Z")]


def test_broken_sitemaps_are_reported_not_fatal(tmp_path: Path) -> None:
    u, run, document, _paths = _audit(tmp_path)
    assert run.code == 0, run.stderr
    errors = {item["sitemap"]: item["problem"] for item in _items(document, "sitemap-errors")}
    assert errors[u + "/sitemaps/gone.xml"].startswith("http-404")
    assert errors[u + "/sitemaps/broken.xml"].startswith("invalid-xml")
    assert errors[u + "/sitemaps/nested.xml"].startswith("nested-index")
    assert len(errors) == 3
    live = document["live_sitemap"]
    assert live["source"] == "robots.txt" and live["urls"] == 11
    kinds = {item["url"]: item["kind"] for item in live["sitemaps"]}
    assert kinds[u + "/sitemaps/more.xml.gz"] == "urlset"  # a gzip file, read as one


def test_no_sitemap_anywhere_is_a_finding_a_ci_gate_can_use(tmp_path: Path) -> None:
    """No sitemap is its own finding, saying where the audit looked and how to write
    one; it is no "sitemap error" (there is no sitemap to fail), and the checks that
    need a sitemap say they were not made rather than call the site clean."""
    u, run, document, paths = _audit(tmp_path, "audit", "--fail-on", "no-sitemap")
    assert run.code == 6, run.stderr
    assert "/sitemap.xml" in paths and "/sitemap_index.xml" in paths
    (item,) = _items(document, "no-sitemap")
    assert u + "/sitemap.xml" in item["tried"] and u + "/robots.txt" in item["looked_in"]
    assert item["write_one"].startswith("sitemap-crawler crawl " + u + "/")
    assert item["robots_txt_line"] == "Sitemap: " + u + "/sitemap_index.xml"
    findings = document["findings"]
    assert findings["sitemap-errors"]["count"] == 0
    for name in ("sitemap-errors", "missing-from-sitemap", "orphans",
                 "non-indexable-in-sitemap", "sitemap-lastmod"):
        assert findings[name]["not_checked"] == "no sitemap", name
    assert "no-sitemap" in run.stderr


def test_an_unreachable_or_invalid_sitemap_url(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    _u, run, document, _paths = _audit(tmp_path, "audit", "--retries", "0",
                                       "--compare-sitemap",
                                       f"http://127.0.0.1:{closed}/sitemap.xml")
    assert run.code == 0, run.stderr
    (item,) = _items(document, "sitemap-errors")
    assert item["problem"].startswith("connect-error"), item
    assert "Traceback" not in run.stderr
    _u, run, document, _paths = _audit(tmp_path, "audit", "--compare-sitemap", "/a.html")
    assert run.code == 2 and "--compare-sitemap '/a.html'" in run.stderr
    with RunningServer("audit") as site:
        run = run_cli("audit", site.url + "/", "--report", str(tmp_path / "a.json"),
                      "--compare-sitemap", site.url + "/a.html")
    document = json.loads((tmp_path / "a.json").read_text())
    (item,) = _items(document, "sitemap-errors")
    assert item["problem"] == "not-a-sitemap: an HTML page, not a sitemap"


def test_crawl_compares_on_request_and_keeps_orphans_out_of_its_sitemap(
        tmp_path: Path) -> None:
    out, report = tmp_path / "out", tmp_path / "report.json"
    with RunningServer("live-sitemap") as site:
        plain = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report))
        assert plain.code == 0, plain.stderr
        assert "/sitemap_index.xml" not in site.paths()  # off unless asked for
        assert json.loads(report.read_text())["live_sitemap"] is None
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      "--compare-sitemap", "auto")
        refused = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "o2"),
                          "--compare-sitemap", "auto")
        # orphans never reach the state either: the next run starts from the links
        state, again = tmp_path / "state.db", tmp_path / "again"
        first = run_cli("crawl", site.url + "/", "--out", str(again), "--state", str(state),
                        "--report", str(tmp_path / "r.json"), "--compare-sitemap", "auto")
        second = run_cli("crawl", site.url + "/", "--out", str(again), "--state", str(state))
        assert first.code == 0 and second.code == 0, first.stderr + second.stderr
        assert site.url + "/orphan.html" not in read_sitemaps(again, site.url + "/").locs
    assert run.code == 0, run.stderr
    u = site.url
    document = json.loads(report.read_text())
    assert [item["url"] for item in _items(document, "orphans")] == [
        u + "/gone.html", u + "/private/secret.html", u + "/orphan.html"]
    listed = read_sitemaps(out, u + "/").locs
    assert u + "/orphan.html" not in listed and u + "/e.html" in listed
    assert refused.code == 2 and "--compare-sitemap needs --report" in refused.stderr


@pytest.mark.slow(7)
def test_the_comparison_in_the_html_report_in_a_real_browser(tmp_path: Path) -> None:
    from browser import browser_page

    report = tmp_path / "audit.html"
    with RunningServer("live-sitemap") as site:
        run = run_cli("audit", site.url + "/", "--report", str(report))
    assert run.code == 0, run.stderr
    shots = REPO / ".pytest_cache" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with browser_page() as page:
        page.goto(report.as_uri())
        assert page.locator('[data-finding="orphans"]').inner_text() == "3"
        assert page.locator('[data-finding="non-indexable-in-sitemap"]').inner_text() == "7"
        files = page.locator("#live-sitemap tbody tr")
        assert files.count() == 6
        assert "found through robots.txt" in page.locator("#live-sitemap h2").first.inner_text()
        assert "invalid-xml" in page.locator("#live-sitemap").inner_text()
        page.locator('ol.fix-first a[href="#orphans"]').click()  # unfolds its rows, once
        orphan = page.locator("#orphans tbody tr", has_text="/orphan.html")
        orphan.wait_for(state="visible")  # hashchange has come
        assert orphan.count() == 1 and "200" in orphan.inner_text()
        depth = page.locator("figure.chart", has_text="Depth").inner_text()
        assert "None" not in depth
        page.locator("#live-sitemap").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "audit-live-sitemap.png"), full_page=False)


def test_entries_outside_the_crawls_scope_are_counted_never_fetched(tmp_path: Path) -> None:
    with RunningServer("live-sitemap") as site:
        report = tmp_path / "a.json"
        # the crawl's scope is /sitemaps/: no page the sitemaps list is in it
        run = run_cli("audit", site.url + "/sitemaps/pages.xml", "--report", str(report))
        paths = site.paths()
    assert run.code == 0, run.stderr
    live = json.loads(report.read_text())["live_sitemap"]
    assert live["source"] == "robots.txt" and live["outside_crawl_scope"] == 11
    assert "/orphan.html" not in paths and "/gone.html" not in paths
    assert json.loads(report.read_text())["findings"]["orphans"]["count"] == 0


def test_a_given_sitemap_url_is_followed_through_redirects_but_not_round_in_circles(
        tmp_path: Path) -> None:
    with RunningServer("live-sitemap") as site:
        for name, expected in (("moved", None), ("loop", "redirects")):
            report = tmp_path / f"{name}.json"
            run = run_cli("audit", site.url + "/", "--report", str(report),
                          "--compare-sitemap", f"{site.url}/{name}-sitemap.xml")
            assert run.code == 0, run.stderr
            live = json.loads(report.read_text())["live_sitemap"]
            first = live["sitemaps"][0]
            if expected is None:
                assert first["kind"] == "sitemapindex" and live["urls"] == 11
            else:
                assert first["problems"][0].startswith(expected)
    assert site.count("/loop-sitemap.xml") == 6  # five redirects followed, then refused


def test_a_sitemap_on_another_host_is_asked_for_with_its_own_host_header(
        tmp_path: Path) -> None:
    """A robots.txt ``Sitemap:`` line may name another host: the request carries
    that host's name, never the crawl's (a virtual host would answer for another site)."""
    other_root = tmp_path / "other"
    other_root.mkdir()
    (other_root / "sitemap.xml").write_text(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "</urlset>")
    with RunningServer(other_root) as other:
        sitemap = f"http://localhost:{other.port}/sitemap.xml"
        site_root = tmp_path / "site"
        site_root.mkdir()
        (site_root / "index.html").write_text("<!doctype html><title>Home</title>")
        (site_root / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {sitemap}\n")
        with RunningServer(site_root) as site:
            run = run_cli("audit", site.url + "/", "--report", str(tmp_path / "a.json"))
        hosts = [hit.headers.get("host") for hit in other.log if hit.path == "/sitemap.xml"]
    assert run.code in (0, 1), run.stderr
    assert hosts == [f"localhost:{other.port}"], hosts


def test_a_sitemap_in_googles_legacy_namespace_is_a_warning_not_an_error(
        tmp_path: Path) -> None:
    """Google's original 0.84 namespace: its entries are read, and it is named as what it
    is (a legacy namespace to replace with 0.9), never a "sitemap error"; every format
    names it, the terminal included."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text('<!doctype html><title>Home</title><a href="/a.html">a</a>')
    (root / "a.html").write_text("<!doctype html><title>A</title>")
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    with RunningServer(root) as site:
        (root / "sitemap.xml").write_text(
            '<?xml version="1.0"?><urlset xmlns="http://www.google.com/schemas/sitemap/0.84">'
            f"<url><loc>{site.url}/</loc></url><url><loc>{site.url}/a.html</loc></url>"
            "</urlset>")
        report = tmp_path / "a.json"
        run = run_cli("audit", site.url + "/", "--report", str(report))
        terminal = run_cli("audit", site.url + "/")
    assert run.code == 0, run.stderr
    found = json.loads(report.read_text())["findings"]
    assert found["sitemap-errors"]["count"] == 0, found["sitemap-errors"]
    (item,) = found["legacy-sitemap-namespace"]["items"]
    assert item["sitemap"].endswith("/sitemap.xml")
    assert item["namespace"] == "http://www.google.com/schemas/sitemap/0.84"
    assert found["legacy-sitemap-namespace"]["severity"] == "warning"
    assert found["missing-from-sitemap"]["count"] == 0  # its entries were read
    assert "0.84" in terminal.stdout and "sitemaps.org/schemas/sitemap/0.9" in terminal.stdout


def test_the_terminal_names_what_is_wrong_with_each_sitemap(tmp_path: Path) -> None:
    with RunningServer("live-sitemap") as site:
        run = run_cli("audit", site.url + "/")
    assert run.code == 0, run.stderr
    errors = run.stdout[run.stdout.index("[sitemap-errors]"):].split("\n\n")[0]
    assert "invalid-xml" in errors and "http-404" in errors, errors
