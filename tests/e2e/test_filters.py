"""--exclude, --include, --no-list and --strip-param, end to end over a socket."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import read_sitemaps, report_rows, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _crawl(tmp_path: Path, *options: str) -> tuple[list[str], dict[str, dict], list[str]]:
    """(listed paths, report rows by path, requested paths) of a crawl of the shop."""
    out, report = tmp_path / "out", tmp_path / "report.json"
    with RunningServer("shop") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      "--ignore-robots", *options)
        assert run.code == 0, run.stderr
        written = read_sitemaps(out, site.url + "/")
        listed = [loc.removeprefix(site.url) for loc in written.locs]
        # robots.txt is read for the copy published beside the sitemaps, never obeyed
        pages = [path for path in site.paths() if path != "/robots.txt"]
        return listed, report_rows(report, site.url), pages


def test_without_filters_everything_is_crawled(tmp_path: Path) -> None:
    listed, _rows, requested = _crawl(tmp_path)
    assert "/cart/checkout.html" in listed and "/search?q=shoes" in listed
    assert "/products/a.html?utm_source=newsletter&utm_medium=mail" in requested


def test_exclude_is_never_requested_and_never_listed(tmp_path: Path) -> None:
    listed, rows, requested = _crawl(tmp_path, "--exclude", "/cart/*",
                                     "--exclude", "re:^/search\\b", "--exclude", "*.php")
    for path in ("/cart/", "/search?q=shoes", "/legacy.php"):
        assert path not in requested
        assert rows[path]["reason"] == "excluded" and rows[path]["status"] is None
    # a redirect to an excluded URL, and a canonical naming one, meet the same filter
    assert "/old-cart" in requested and rows["/old-cart"]["reason"] == "redirect"
    assert rows["/cart/checkout.html"]["reason"] == "excluded"
    assert "/cart/checkout.html" not in requested
    assert rows["/points-to-cart.html"]["reason"] == "canonical-elsewhere"
    assert not any(path.startswith(("/cart", "/search", "/legacy")) for path in listed)
    assert "/products/b.html?gclid=xyz&id=7" in listed


def test_include_requests_only_matches_and_the_start_url(tmp_path: Path) -> None:
    listed, rows, requested = _crawl(tmp_path, "--include", "/products/*")
    assert set(requested) == {"/", "/products/a.html",
                              "/products/a.html?utm_source=newsletter&utm_medium=mail",
                              "/products/b.html?gclid=xyz&id=7",
                              "/products/a.html?utm_campaign=spring"}  # a's canonical
    assert rows["/blog/"]["reason"] == "not-included"
    assert rows["/list.html"]["reason"] == "not-included"
    assert listed == ["/", "/products/a.html?utm_campaign=spring",
                      "/products/b.html?gclid=xyz&id=7"]


def test_no_list_is_crawled_for_its_links_but_not_listed(tmp_path: Path) -> None:
    listed, rows, requested = _crawl(tmp_path, "--no-list", "/tag/*", "--no-list", "*?*sort=*")
    assert "/tag/red.html" in requested and "/tag/red.html" not in listed
    assert rows["/tag/red.html"]["reason"] == "no-list"
    assert rows["/list.html?sort=price"]["reason"] == "no-list"
    assert rows["/tag/red.html"]["status"] == 200
    # what only a no-list page links to is found and listed
    assert "/products/only-from-tag.html" in listed
    assert "/list.html?color=red" in listed


def test_strip_param_merges_tracked_links_into_one_url(tmp_path: Path) -> None:
    listed, rows, requested = _crawl(tmp_path, "--strip-param", "utm_*",
                                     "--strip-param", "gclid")
    assert not any("utm_" in path or "gclid" in path for path in requested)
    assert not any("utm_" in path or "gclid" in path for path in rows)
    assert requested.count("/products/a.html") == 1
    # the canonical's tracking parameter is stripped too: the page is canonical to itself
    assert rows["/products/a.html"]["reason"] == "listed"
    assert "/products/b.html?id=7" in listed  # the other parameters stay, in their order


def test_an_invalid_pattern_exits_2_naming_it(tmp_path: Path) -> None:
    with RunningServer("shop") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      "--exclude", "re:(oops")
        assert run.code == 2
        assert run.stderr.count("\n") == 1
        assert "--exclude 're:(oops'" in run.stderr
        assert site.paths() == []
