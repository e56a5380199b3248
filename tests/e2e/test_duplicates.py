"""One page at two URLs is listed once by default; an app's shell is nobody's duplicate.

Over a socket: ``/`` and ``/index.html`` of the ``pglike`` fixture are the same
bytes (the PostgreSQL docs' sitemap listed both, and the audit then flagged its
own sitemap); the ``spa`` fixture's router serves one shell at three URLs, which
only a browser tells apart.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser import chromium_path
from conftest import read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(150)


def test_the_same_page_at_two_urls_is_listed_once_and_named(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    with RunningServer("pglike") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      "--report", str(report), default_duplicates=True)
        both = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "both"),
                       "--keep-duplicates")
    assert run.code == 0 and both.code == 0, run.stderr + both.stderr
    locs = read_sitemaps(tmp_path / "out", site.url + "/").locs
    assert site.url + "/" in locs and site.url + "/index.html" not in locs
    everything = read_sitemaps(tmp_path / "both", site.url + "/").locs
    assert sorted(set(everything) - set(locs)) == [site.url + "/index.html"]
    rows = {row["url"]: row for row in json.loads(report.read_text())["urls"]}
    assert rows[site.url + "/index.html"]["reason"] == "duplicate-of"
    assert rows[site.url + "/index.html"]["duplicate_of"] == site.url + "/"
    # the summary says what "skipped" counts
    assert "skipped: never fetched, 3 links to other sites (external)" in run.stderr


def test_an_apps_shell_at_several_urls_is_no_duplicate_raw_or_rendered(
        tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    with RunningServer("spa") as site:
        app = [site.url + path for path in ("/app/", "/app/about", "/app/contact")]
        urls.write_text("\n".join(app) + "\n")
        raw = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "raw"), "--urls",
                      str(urls), "--no-follow", default_duplicates=True)
        rendered = run_cli("crawl", site.url + "/app/", "--out", str(tmp_path / "rendered"),
                           "--render", "always", "--render-timeout", "4", "--browser",
                           chromium_path(), timeout=150, default_duplicates=True)
        assert raw.code == 0 and rendered.code == 0, raw.stderr + rendered.stderr
        # the same bytes at three URLs, and no link in them: an app's shell, not a copy
        assert sorted(read_sitemaps(tmp_path / "raw", site.url + "/").locs) == sorted(app)
        # rendered, each URL is the view the browser showed: three pages, three listed
        assert sorted(read_sitemaps(tmp_path / "rendered", site.url + "/app/").locs) == sorted(
            app)


def test_pages_without_a_link_but_with_the_same_text_are_one_page(tmp_path: Path) -> None:
    """Only an app's shell (no link *and* no text of its own) is exempt: two URLs
    serving the same article with no link in it are still one page, while two
    shells stay two."""
    root = tmp_path / "site"
    root.mkdir()
    article = "<!doctype html><title>Terms</title><p>These are the terms of use.</p>"
    shell = '<!doctype html><title>App</title><div id="app"></div><script>/* app */</script>'
    (root / "index.html").write_text(
        '<!doctype html><title>Home</title><a href="/terms.html">t</a><a href="/terms-copy.html">'
        't</a><a href="/app-a.html">a</a><a href="/app-b.html">b</a>')
    for name, body in (("terms.html", article), ("terms-copy.html", article),
                       ("app-a.html", shell), ("app-b.html", shell)):
        (root / name).write_text(body)
    for fingerprinted in ((), ("--state", str(tmp_path / "state.db"))):
        with RunningServer(root) as site:
            run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                          "--drop-duplicates", *fingerprinted)
        assert run.code == 0, run.stderr
        locs = set(read_sitemaps(tmp_path / "out", site.url + "/").locs)
        assert len({site.url + "/terms.html", site.url + "/terms-copy.html"} & locs) == 1, locs
        assert {site.url + "/app-a.html", site.url + "/app-b.html"} <= locs
