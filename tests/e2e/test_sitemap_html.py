"""``sitemap.html``: the sitemaps a person reads, in Chromium with XSLT turned off, from
``file://`` and over HTTP, with and without JavaScript; every listed URL is found."""

from __future__ import annotations

import gzip
import html
import re
from pathlib import Path

import pytest
from conftest import REPO, read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _listed_on_pages(page, start: str) -> set[str]:
    """Every URL the view lists: sitemap.html itself, or the file pages it links."""
    page.goto(start)
    found = set(page.locator("#urls tbody td:first-child a").all_inner_texts())
    for href in page.locator("td:last-child a[href$='.html']").evaluate_all(
            "links => links.map(link => link.href)"):
        page.goto(href)
        found |= set(page.locator("#urls tbody td:first-child a").all_inner_texts())
    return found


@pytest.mark.slow(6)
def test_the_html_view_lists_every_url_without_xslt_from_disk_and_over_http(
        tmp_path: Path) -> None:
    from browser import page_without_xslt

    out = tmp_path / "out"
    with RunningServer("sections") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--sections", "auto",
                      "--max-urls-per-sitemap", "3")
        assert run.code == 0, run.stderr
        listed = set(read_sitemaps(out, site.url + "/").locs)
        pages = sorted(path.name for path in out.glob("sitemap*.html"))
        assert pages == ["sitemap-blog-00001.html", "sitemap-blog-00002.html",
                         "sitemap-docs-00001.html", "sitemap-other-00001.html",
                         "sitemap-products-00001.html", "sitemap-products-00002.html",
                         "sitemap.html"]
        view = (out / "sitemap.html").read_text()
        assert "xml-stylesheet" not in view and "<script src" not in view
        site.overlay = out
        shots = REPO / ".pytest_cache" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        with page_without_xslt() as page:
            assert page.evaluate("typeof XSLTProcessor") == "undefined"  # XSLT is off
            assert _listed_on_pages(page, (out / "sitemap.html").as_uri()) == listed
            assert _listed_on_pages(page, site.url + "/sitemap.html") == listed
            page.goto((out / "sitemap.html").as_uri())
            sections = page.locator("table").first.locator("tbody tr").all_inner_texts()
            assert [re.split(r"\s+", row.strip()) for row in sections] == [
                ["products", "5"], ["blog", "4"], ["docs", "3"], ["other", "2"]]
            page.screenshot(path=str(shots / "sitemap-html.png"))
            page.goto((out / "sitemap-blog-00001.html").as_uri())
            page.fill("#filter", "second")  # the filter box, with JavaScript
            assert page.locator("#urls tbody tr:visible").count() == 1
            page.screenshot(path=str(shots / "sitemap-html-shard.png"))
        with page_without_xslt(javascript=False) as page:
            assert _listed_on_pages(page, site.url + "/sitemap.html") == listed
            page.goto(site.url + "/sitemap-blog-00001.html")
            assert not page.locator("#filter").is_visible()  # no box that cannot work


def test_one_file_lists_its_urls_on_sitemap_html_and_no_html_writes_none(
        tmp_path: Path) -> None:
    out, plain = tmp_path / "out", tmp_path / "plain"
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out))
        bare = run_cli("crawl", site.url + "/", "--out", str(plain), "--no-html")
    assert run.code == bare.code == 0, run.stderr + bare.stderr
    assert sorted(path.name for path in out.glob("*.html")) == ["sitemap.html"]
    listed = read_sitemaps(out, site.url + "/").locs
    view = (out / "sitemap.html").read_text()
    shown = [html.escape(url) for url in listed]
    assert all(f'<a href="{url}">{url}</a>' in view for url in shown)
    assert not list(plain.glob("*.html"))


def test_pages_of_files_no_longer_written_go_with_them_and_unchanged_pages_stay(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("sections") as site:
        first = run_cli("crawl", site.url + "/", "--out", str(out), "--max-urls-per-sitemap",
                        "3")
        page = out / "sitemap-00001.html"
        before = page.stat().st_mtime_ns
        again = run_cli("crawl", site.url + "/", "--out", str(out), "--max-urls-per-sitemap",
                        "3")
        assert page.stat().st_mtime_ns == before  # same URLs: the page left alone
        fewer = run_cli("crawl", site.url + "/", "--out", str(out), "--max-urls-per-sitemap",
                        "50000")
    assert first.code == again.code == fewer.code == 0
    assert sorted(path.name for path in out.glob("*.html")) == ["sitemap.html"]
    assert gzip.decompress((out / "sitemap-00001.xml.gz").read_bytes()).count(b"<url>") == 14


def test_builtin_stylesheet_says_browsers_drop_xslt_and_names_the_view(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--stylesheet", "builtin")
    assert run.code == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "XSLT" in line]
    assert said == ["--stylesheet builtin: browsers are dropping XSLT (Chrome turns it off in "
                    f"its 2026 releases); read the sitemaps in {out / 'sitemap.html'}, which "
                    "needs none"]
