"""Soft 404s over a socket: pages that answer 200 (or redirect home) but are "not found".

``soft404``: unknown URLs answer 200 with the shop's "Sorry about that" page (a
title that says nothing: only its likeness to the probe's answer gives it away),
a German offer page whose h1 says "Seite nicht gefunden", and a blog post titled
"How we fixed our 404 pages", which is content. Its ``/recipes/`` section has a
"not found" template of its own, titled as the section's index is ("Recipes |
Soft Shop"): only a probe in that directory shows what it looks like. ``catchall``: unknown URLs
redirect to the home page.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _soft(document: dict, origin: str) -> dict[str, str]:
    return {item["url"].removeprefix(origin): item["why"]
            for item in document["findings"]["soft-404"]["items"]}


def test_an_audit_finds_soft_404s_by_likeness_and_by_what_they_say(tmp_path: Path) -> None:
    data, html = tmp_path / "audit.json", tmp_path / "audit.html"
    with RunningServer("soft404") as site:
        run = run_cli("audit", site.url + "/", "--report", str(data), "--report", str(html),
                      "--no-check-external", default_soft_404=True)
        u = site.url
        probes = [path for path in site.paths() if "sitemap-crawler-probe-" in path]
    assert run.code == 0, run.stderr
    document = json.loads(data.read_text())
    found = _soft(document, u)
    assert set(found) == {"/discontinued-teapot.html", "/old-kettle.html", "/de/angebot.html",
                          "/recipes/lemon-cake.html"}
    assert found["/de/angebot.html"] == "h1 says not found"
    assert found["/old-kettle.html"].startswith(f"like the answer to {u}/sitemap-crawler-probe-")
    # the section's own template, found by the probe asked in its directory (the
    # section's index shares its title, and is no soft 404)
    assert found["/recipes/lemon-cake.html"].startswith(
        f"like the answer to {u}/recipes/sitemap-crawler-probe-")
    assert "/blog/why-404-pages-matter.html" not in found  # mentions 404: content
    # /sitemap.xml, a guess, shows the "not found" page too: no sitemap, not a broken one
    assert document["findings"]["sitemap-errors"]["count"] == 0
    (missing,) = document["findings"]["no-sitemap"]["items"]
    assert f"{u}/sitemap.xml" in missing["tried"]
    finding = document["findings"]["soft-404"]
    assert finding["severity"] == "error"
    # the probes: the root's two, then one in each directory pages were found in; asked
    # once each, named in the report with their answer
    directories = sorted(probe.rsplit("/", 1)[0] + "/" for probe in probes)
    assert directories == ["/", "/", "/blog/", "/de/", "/recipes/"]
    assert len(set(probes)) == len(probes)
    assert sorted(probe["url"].removeprefix(u) for probe in finding["probes"]) == sorted(probes)
    assert {probe["status"] for probe in finding["probes"]} == {200}
    from browser import browser_page

    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(html.as_uri())
        first = page.locator("ol.fix-first > li").first
        assert "Soft 404s" in first.inner_text()  # an error, with the most pages
        told = page.locator("#probes")
        assert "5 answered 200 (a page, compared)" in told.inner_text()
        assert len([a for a in told.locator("a").all() if a.is_visible()]) == 3  # rest folded
        told.locator("summary").click()
        shown = told.inner_text()
        assert all(u + path in shown for path in probes)
        rows = page.locator("#soft-404 tbody tr")  # errors' tables are open
        assert rows.count() == 4 and "h1 says not found" in rows.all_inner_texts()[0]
        shots = REPO / ".pytest_cache" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.locator("#soft-404").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "audit-soft-404.png"))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_crawl_never_lists_a_soft_404(tmp_path: Path, workers: str) -> None:
    """In this process's reader and in worker processes' alike: a directory's probe
    answer travels with the pages fetched there."""
    out = tmp_path / "out"
    with RunningServer("soft404") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--workers", workers,
                      default_soft_404=True)
        listed = {url.removeprefix(site.url) for url in read_sitemaps(out, site.url + "/").locs}
    assert run.code == 0, run.stderr
    assert {"/blog/why-404-pages-matter.html", "/teapots.html", "/recipes/",
            "/recipes/scones.html"} <= listed
    assert not listed & {"/discontinued-teapot.html", "/old-kettle.html", "/de/angebot.html",
                         "/recipes/lemon-cake.html"}


def test_no_soft_404_asks_no_probe_and_lists_them_as_before(tmp_path: Path) -> None:
    with RunningServer("soft404") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--no-soft-404")
        listed = {url.removeprefix(site.url)
                  for url in read_sitemaps(tmp_path / "out", site.url + "/").locs}
        assert not [path for path in site.paths() if "probe" in path]
    assert run.code == 0, run.stderr
    assert "/old-kettle.html" in listed


def test_urls_that_redirect_home_as_unknown_ones_do_are_soft_404s(tmp_path: Path) -> None:
    data, html = tmp_path / "audit.json", tmp_path / "audit.html"
    with RunningServer("catchall") as site:
        run = run_cli("audit", site.url + "/", "--report", str(data), "--report", str(html),
                      "--no-check-external", default_soft_404=True)
    assert run.code == 0, run.stderr
    document = json.loads(data.read_text())
    found = _soft(document, site.url)
    # /index.html is the home page itself, and is no redirect at all
    assert set(found) == {"/old-menu.html", "/spring-sale.html"}
    assert all(why.startswith("redirects to the home page") for why in found.values())
    probes = document["findings"]["soft-404"]["probes"]
    assert {probe["answer"] for probe in probes} == {"redirects to the home page"}
    from browser import browser_page

    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(html.as_uri())
        rows = page.locator("#soft-404 tbody tr").all_inner_texts()
        assert len(rows) == 2 and all("redirects to the home page" in row for row in rows)
        assert "redirects to the home page" in page.locator("#probes").inner_text()
        shots = REPO / ".pytest_cache" / "screenshots"
        page.locator("#soft-404").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "audit-soft-404-catchall.png"))


def test_an_apps_shell_at_every_url_is_no_soft_404(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    shell = ('<!doctype html><html><head><title>Shop</title><script src="/app.js"></script>'
             '</head><body><div id="app"></div></body></html>')
    (root / "index.html").write_text(
        '<!doctype html><title>Shop</title><h1>Shop</h1><p>Welcome to the shop.</p>'
        '<a href="/products">Products</a> <a href="/about">About</a>')
    routes = {"!missing": {"body": shell, "headers": {"Content-Type": "text/html"}}}
    data = tmp_path / "audit.json"
    with RunningServer(root, routes) as site:
        run = run_cli("audit", site.url + "/", "--report", str(data), "--no-check-external",
                      default_soft_404=True)
    assert run.code == 0, run.stderr
    finding = json.loads(data.read_text())["findings"]["soft-404"]
    assert finding["count"] == 0
    assert {probe["answer"] for probe in finding["probes"]} == {"an app's shell"}


def test_many_removed_pages_redirecting_home_are_soft_404s_with_no_probe_saying_so(
        tmp_path: Path) -> None:
    """Unknown URLs answer 404 as they should, but the pages the site removed all
    redirect to the home page: five or more such redirects are pages gone. Two are
    not (a home page's other names, a renamed start page, happen)."""
    root = tmp_path / "site"
    root.mkdir()
    gone = [f"/spring-sale-{n}.html" for n in range(5)]
    links = "".join(f'<a href="{path}">{path}</a> ' for path in [*gone, "/about.html"])
    (root / "index.html").write_text(f"<!doctype html><title>Home</title><h1>Home</h1>"
                                     f"<p>Welcome.</p>{links}")
    (root / "about.html").write_text("<!doctype html><title>About</title><h1>About</h1>"
                                     "<p>Us.</p>")
    routes = {path: {"status": 301, "headers": {"Location": "/"}} for path in gone}
    data = tmp_path / "audit.json"
    with RunningServer(root, routes) as site:
        run = run_cli("audit", site.url + "/", "--report", str(data), "--no-check-external",
                      default_soft_404=True)
    assert run.code == 0, run.stderr
    document = json.loads(data.read_text())
    probes = document["findings"]["soft-404"]["probes"]
    assert {probe["status"] for probe in probes} == {404}
    found = _soft(document, site.url)
    assert set(found) == set(gone)
    assert all(why == "redirects to the home page, as 5 URLs of this site do"
               for why in found.values())
    # the same site with two of them: a redirect home is not yet a pattern
    routes = {path: {"status": 301, "headers": {"Location": "/"}} for path in gone[:2]}
    with RunningServer(root, routes) as site:
        run = run_cli("audit", site.url + "/", "--report", str(data), "--no-check-external",
                      default_soft_404=True)
    assert run.code == 0, run.stderr
    assert json.loads(data.read_text())["findings"]["soft-404"]["count"] == 0
