"""hreflang alternates, images and the stylesheet, end to end over a socket, checked against
the extension schemas and read back with an independent parser."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from conftest import read_sitemaps, read_xml, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _crawl(tmp_path: Path, *options: str, state: Path | None = None, conditional: bool = False):
    out, report = tmp_path / "out", tmp_path / "report.json"
    extra = ["--state", str(state)] if state else []
    with RunningServer("i18n", conditional=conditional) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      *options, *extra)
        assert run.code == 0, run.stderr
        written = read_sitemaps(out, site.url + "/", extensions=True)
        return site, out, written, json.loads(report.read_text())


def test_hreflang_alternates_are_verified_and_written(tmp_path: Path) -> None:
    site, out, written, report = _crawl(tmp_path)
    u = site.url
    assert written.alternates[u + "/en/"] == [
        ("de", u + "/de/"), ("en", u + "/en/"), ("pt-BR", u + "/pt/"), ("x-default", u + "/en/")]
    assert written.alternates[u + "/de/"] == [
        ("de", u + "/de/"), ("en", u + "/en/"), ("x-default", u + "/en/")]
    # /pt/ declares its versions in a Link header only
    assert written.alternates[u + "/pt/"] == [("en", u + "/en/"), ("pt-BR", u + "/pt/")]
    # /fr/'s only other version (de) does not name it back: nothing to write
    assert u + "/fr/" not in written.alternates and u + "/" not in written.alternates
    problems = {(p["page"].removeprefix(u), p["hreflang"], p["reason"])
                for p in report["hreflang"]}
    assert problems == {
        ("/en/", "fr", "hreflang-not-reciprocal"),
        ("/en/", "es", "hreflang-not-listed"),
        ("/en/", "ja", "hreflang-out-of-scope"),
        ("/en/", "en-UK", "hreflang-invalid-code"),
        ("/fr/", "de", "hreflang-not-reciprocal"),
    }
    # the out-of-scope alternate was never requested; the in-scope ones were crawled
    assert "/ja/" not in site.paths() and "/pt/" in site.paths() and "/es/" in site.paths()
    head = read_xml(out / "sitemap-00001.xml.gz")
    assert b'xmlns:xhtml="http://www.w3.org/1999/xhtml"' in head
    assert b"xmlns:image" not in head  # no --images


def test_hreflang_external_writes_what_the_page_declares(tmp_path: Path) -> None:
    site, _out, written, report = _crawl(tmp_path, "--hreflang-external")
    assert ("ja", f"http://localhost:{site.port}/ja/") in written.alternates[site.url + "/en/"]
    assert "hreflang-out-of-scope" not in {p["reason"] for p in report["hreflang"]}


def test_no_hreflang_writes_none_and_keeps_the_plain_namespace(tmp_path: Path) -> None:
    _site, out, written, report = _crawl(tmp_path, "--no-hreflang")
    assert written.alternates == {} and report["hreflang"] == []
    assert b"xmlns:xhtml" not in read_xml(out / "sitemap-00001.xml.gz")
    read_sitemaps(out, _site.url + "/")  # valid against the plain sitemap schema too


def test_images_are_listed_per_page(tmp_path: Path) -> None:
    site, out, written, _report = _crawl(tmp_path, "--images")
    u = site.url
    assert written.images[u + "/en/"] == [
        u + "/img/a.png", u + "/img/b-small.png", u + "/img/b-large.png", u + "/img/c.webp",
        "https://cdn.example.net/hero.jpg"]  # no data:, no robots-disallowed, each once
    assert written.images[u + "/de/"] == [u + "/img/a.png"]
    assert u + "/fr/" not in written.images
    assert not any(path.startswith("/img/") for path in site.paths())  # never requested
    assert b'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"' in read_xml(
        out / "sitemap-00001.xml.gz")


def test_an_independent_parser_reads_alternates_and_images_back(tmp_path: Path) -> None:
    from usp.tree import sitemap_tree_for_homepage

    out, report = tmp_path / "out", tmp_path / "report.json"
    with RunningServer("i18n") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      "--images")
        assert run.code == 0, run.stderr
        site.overlay = out
        tree = sitemap_tree_for_homepage(site.url + "/", use_known_paths=False)
        pages = {page.url: page for page in tree.all_pages()}
    en = pages[site.url + "/en/"]
    assert sorted((alt[0], alt[1]) for alt in en.alternates) == [
        ("de", site.url + "/de/"), ("en", site.url + "/en/"), ("pt-BR", site.url + "/pt/"),
        ("x-default", site.url + "/en/")]
    assert sorted(image.loc for image in en.images) == sorted(
        [site.url + p for p in ("/img/a.png", "/img/b-small.png", "/img/b-large.png",
                                "/img/c.webp")] + ["https://cdn.example.net/hero.jpg"])


def test_a_recrawl_of_304s_keeps_alternates_and_images(tmp_path: Path) -> None:
    state, out = tmp_path / "state.db", tmp_path / "out"
    with RunningServer("i18n", conditional=True) as site:
        args = ("crawl", site.url + "/", "--out", str(out), "--images", "--state", str(state))
        assert run_cli(*args).code == 0
        first = read_sitemaps(out, site.url + "/", extensions=True)
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        site.log.clear()
        again = run_cli(*args)
        assert again.code == 0, again.stderr
        # the five listed pages (and the 200 pages beside them) answered 304
        assert int(re.search(r"(\d+) not modified", again.stderr).group(1)) >= 5
        second = read_sitemaps(out, site.url + "/", extensions=True)
    assert first.alternates and first.images
    assert second.alternates == first.alternates and second.images == first.images
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_images_asked_for_later_are_read_even_where_pages_answer_304(tmp_path: Path) -> None:
    """A page stored without its images cannot be stood in for by a 304 once --images is
    asked for: it is fetched whole that once."""
    state, out = tmp_path / "state.db", tmp_path / "out"
    with RunningServer("i18n", conditional=True) as site:
        args = ("crawl", site.url + "/", "--out", str(out), "--state", str(state))
        assert run_cli(*args).code == 0
        assert read_sitemaps(out, site.url + "/", extensions=True).images == {}
        assert run_cli(*args, "--images").code == 0
        assert site.url + "/en/" in read_sitemaps(out, site.url + "/", extensions=True).images
        site.log.clear()
        assert run_cli(*args, "--images").code == 0  # now stored: 304s again
        assert all(hit.headers.get("if-none-match") for hit in site.log
                   if hit.path in ("/en/", "/de/"))
        assert site.url + "/en/" in read_sitemaps(out, site.url + "/", extensions=True).images


@pytest.mark.slow(6)
def test_builtin_stylesheet_shows_tables_in_a_real_browser(tmp_path: Path) -> None:
    from browser import browser_page

    out = tmp_path / "out"
    shots = Path(__file__).resolve().parent.parent.parent / ".pytest_cache" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with RunningServer("i18n") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--images",
                      "--stylesheet", "builtin", "--max-urls-per-sitemap", "3")
        assert run.code == 0, run.stderr
        assert (out / "sitemap.xsl").exists()
        index = (out / "sitemap_index.xml").read_bytes()
        assert b'<?xml-stylesheet type="text/xsl" href="sitemap.xsl"?>' in index
        assert b'href="sitemap.xsl"' in read_xml(out / "sitemap-00001.xml.gz")
        read_sitemaps(out, site.url + "/", extensions=True)  # still valid sitemaps
        site.overlay = out
        with browser_page() as page:
            page.goto(site.url + "/sitemap_index.xml")
            assert page.locator("h1").inner_text() == "Sitemap index"
            assert page.locator("#count").inner_text() == "2"
            rows = page.locator("#sitemaps tbody tr")
            assert rows.count() == 2
            assert rows.nth(0).locator("a").inner_text() == site.url + "/sitemap-00001.xml.gz"
            page.screenshot(path=str(shots / "stylesheet-index.png"), full_page=True)
            # a shard, uncompressed here so the browser can apply the stylesheet to it
            run = run_cli("crawl", site.url + "/", "--out", str(out), "--images", "--no-gzip",
                          "--stylesheet", "builtin")
            assert run.code == 0, run.stderr
            page.goto(site.url + "/sitemap-00001.xml")
            assert page.locator("h1").inner_text() == "Sitemap"
            assert page.locator("#count").inner_text() == "5"
            urls = page.locator("#urls tbody tr")
            assert urls.count() == 5
            en = urls.filter(has_text="/en/").first
            assert "de en pt-BR x-default" in en.inner_text()
            headers = page.locator("#urls thead th").all_inner_texts()
            assert headers == ["#", "URL", "Last modified", "Languages", "Images"]
            page.screenshot(path=str(shots / "stylesheet-shard.png"), full_page=True)


def test_stylesheet_url_is_named_and_nothing_else_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("i18n") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--stylesheet",
                      "https://static.example.com/sitemap.xsl?v=2&x=1")
        assert run.code == 0, run.stderr
        index = (out / "sitemap_index.xml").read_bytes()
        assert (b'<?xml-stylesheet type="text/xsl" '
                b'href="https://static.example.com/sitemap.xsl?v=2&amp;x=1"?>') in index
        assert not (out / "sitemap.xsl").exists()
        bad = run_cli("crawl", site.url + "/", "--out", str(out), "--stylesheet", "x y.xsl")
        assert bad.code == 2 and "--stylesheet" in bad.stderr


def test_priority_and_changefreq_rules(tmp_path: Path) -> None:
    _site, _out, written, _r = _crawl(tmp_path, "--priority", "/de/*=0.9", "--priority",
                                      "depth", "--changefreq", "/en/*=weekly")
    u = _site.url
    assert written.priority == {u + "/": "1.0", u + "/de/": "0.9", u + "/en/": "0.9",
                                u + "/fr/": "0.9", u + "/pt/": "0.8"}
    assert written.changefreq == {u + "/en/": "weekly"}


def test_observed_changefreq_after_two_changes_seen_across_runs(tmp_path: Path) -> None:
    state, out = tmp_path / "state.db", tmp_path / "out"
    page = {"headers": {"Content-Type": "text/html"}}
    with RunningServer("i18n", {"/fr/": {**page, "body": "<p>version 1</p>"}}) as site:
        args = ("crawl", site.url + "/", "--out", str(out), "--state", str(state),
                "--changefreq", "observed")
        seen: list[dict[str, str]] = []
        for version in (2, 3):
            assert run_cli(*args).code == 0
            seen.append(read_sitemaps(out, site.url + "/", extensions=True).changefreq)
            site.routes["/fr/"] = {**page, "body": f"<p>version {version}</p>"}
        assert run_cli(*args).code == 0
        seen.append(read_sitemaps(out, site.url + "/", extensions=True).changefreq)
    # run 1: first sight; run 2: one change (when, not how often); run 3: two changes,
    # seconds apart here, so "hourly"; unchanged pages get none, never "never"
    assert seen == [{}, {}, {site.url + "/fr/": "hourly"}]


def test_observed_changefreq_without_state_exits_2(tmp_path: Path) -> None:
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path),
                  "--changefreq", "observed")
    assert run.code == 2 and "needs --state" in run.stderr


def test_documents_are_listed_from_their_headers_and_never_downloaded(
        tmp_path: Path, transport: str) -> None:
    out, report = tmp_path / "out", tmp_path / "report.json"
    with RunningServer("i18n") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      "--documents", "pdf", "--documents", ".XLSX")
        assert run.code == 0, run.stderr
        written = read_sitemaps(out, site.url + "/", extensions=True)
        log = [(hit.method, hit.path) for hit in site.log if hit.path.startswith("/files/")]
    u = site.url
    listed = dict(written.urls)
    assert listed[u + "/files/guide.pdf"] == "2015-10-21T07:28:00Z"  # lastmod from the header
    assert u + "/files/sheet.xlsx" in listed and u + "/files/old.pdf" in listed
    assert u + "/files/secret.pdf" not in listed  # X-Robots-Tag: noindex
    assert u + "/files/page.pdf" not in listed  # HTML named .pdf, read as a page: noindex
    rows = {row["url"].removeprefix(u): row for row in json.loads(report.read_text())["urls"]}
    assert rows["/files/secret.pdf"]["reason"] == "noindex"
    assert rows["/files/page.pdf"]["reason"] == "noindex"
    # HEAD first; GET only where HEAD is refused (its body left unread) or for HTML
    assert ("HEAD", "/files/guide.pdf") in log and ("GET", "/files/guide.pdf") not in log
    assert [m for m, p in log if p == "/files/old.pdf"] == ["HEAD", "GET"]
    assert [m for m, p in log if p == "/files/page.pdf"] == ["HEAD", "GET"]


def test_without_documents_a_pdf_is_not_listed(tmp_path: Path) -> None:
    _site, _out, written, report = _crawl(tmp_path)
    assert not any(loc.endswith(".pdf") for loc in written.locs)
    assert {row["reason"] for row in report["urls"] if row["url"].endswith("guide.pdf")} == {
        "not-html"}


def test_an_unknown_document_type_exits_2(tmp_path: Path) -> None:
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path), "--documents", "exe")
    assert run.code == 2 and "--documents 'exe'" in run.stderr


def test_a_document_get_is_closed_after_its_headers(tmp_path: Path) -> None:
    """Where HEAD is refused, the GET's body is never read, however short: a body that
    arrives only after 4 s does not hold the crawl."""
    routes = {"/files/old.pdf": {"head": 405, "behaviour": "stall", "after": 4,
                                 "headers": {"Content-Type": "application/pdf"}}}
    with RunningServer("i18n", routes) as site:
        started = time.monotonic()
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      "--documents", "pdf", "--timeout", "10")
        took = time.monotonic() - started
        assert run.code == 0, run.stderr
        listed = read_sitemaps(tmp_path / "out", site.url + "/", extensions=True).locs
    assert site.url + "/files/old.pdf" in listed
    assert took < 3.5, took


def test_builtin_stylesheet_shows_videos_and_the_news_sitemap(tmp_path: Path) -> None:
    from browser import browser_page

    out = tmp_path / "out"
    shots = Path(__file__).resolve().parent.parent.parent / ".pytest_cache" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with RunningServer("media") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--videos", "--no-gzip",
                      "--news", "Harbour Gazette=en", "--stylesheet", "builtin")
        assert run.code == 0, run.stderr
        assert b'href="sitemap.xsl"' in (out / "sitemap-news.xml").read_bytes()
        site.overlay = out
        with browser_page() as page:
            page.goto(site.url + "/sitemap-00001.xml")
            headers = page.locator("#urls thead th").all_inner_texts()
            assert headers == ["#", "URL", "Last modified", "Videos"]
            watch = page.locator("#urls tbody tr").filter(has_text="/watch.html").first
            assert "Waves over the pier" in watch.inner_text()
            page.screenshot(path=str(shots / "stylesheet-videos.png"), full_page=True)
            page.goto(site.url + "/sitemap-news.xml")
            assert page.locator("h1").inner_text() == "News sitemap"
            assert page.locator("#urls thead th").all_inner_texts() == [
                "#", "URL", "Published", "Title", "Publication"]
            fresh = page.locator("#urls tbody tr").filter(has_text="/fresh.html").first
            assert "Ferry back on the water" in fresh.inner_text()
            assert "Harbour Gazette (en)" in fresh.inner_text()
            page.screenshot(path=str(shots / "stylesheet-news.png"), full_page=True)
