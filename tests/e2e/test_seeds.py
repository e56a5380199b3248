"""List mode and seeds: --urls, --from-sitemap, --no-follow and --add-urls, over a socket."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def listed(out: Path, site: RunningServer) -> set[str]:
    return {loc.removeprefix(site.url) for loc in read_sitemaps(out, site.url + "/").locs}


def fetched(site: RunningServer) -> set[str]:
    return {path for path in site.paths() if path.endswith(".html") or path == "/"}


def test_urls_seed_the_crawl_beside_start_url_and_bad_lines_are_named(tmp_path: Path) -> None:
    out, report = tmp_path / "out", tmp_path / "r.json"
    with RunningServer("seeds") as site:
        urls = tmp_path / "urls.txt"
        urls.write_text(f"# pages no link reaches\n{site.url}/b.html\n\nnot a url\n"
                        "https://elsewhere.example/x.html\n")
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--urls", str(urls),
                      "--report", str(report))
    assert run.code == 0, run.stderr
    assert listed(out, site) == {"/", "/a.html", "/b.html", "/d.html"}  # d: b's link
    assert "--urls: 2 URL(s); 1 line(s) not an absolute http(s) URL, skipped " \
           "(line 4: 'not a url')" in run.stdout + run.stderr
    document = json.loads(report.read_text())
    assert document["seeds"]["urls"]["given"] == 2
    assert document["seeds"]["urls"]["invalid"] == 1
    skipped = {row["url"]: row["reason"] for row in document["urls"] if not row["listed"]}
    assert skipped["https://elsewhere.example/x.html"] == "external"


def test_no_follow_fetches_the_list_from_standard_input_and_nothing_else(tmp_path: Path
                                                                       ) -> None:
    out = tmp_path / "out"
    with RunningServer("seeds") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--urls", "-",
                      "--no-follow", input=f"{site.url}/b.html\n{site.url}/hidden.html\n")
        asked = fetched(site)
    assert run.code == 0, run.stderr
    assert asked == {"/b.html", "/hidden.html"}  # the list only: not START_URL, a.html, d.html
    assert listed(out, site) == {"/b.html"}  # hidden.html is noindex


@pytest.mark.parametrize(("given", "follow", "expected"), [
    ("auto", True, {"/", "/a.html", "/b.html", "/c.html", "/d.html", "/e.html"}),
    ("/other.xml", False, {"/c.html"}),
])
def test_from_sitemap_seeds_from_the_sites_own_sitemaps_or_one_given(
        tmp_path: Path, given: str, follow: bool, expected: set[str]) -> None:
    out, report = tmp_path / "out", tmp_path / "r.json"
    with RunningServer("seeds") as site:
        source = given if given == "auto" else site.url + given
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--from-sitemap", source,
                      "--report", str(report), *(() if follow else ("--no-follow",)))
        asked = fetched(site)
    assert run.code == 0, run.stderr
    assert listed(out, site) == expected
    assert asked == expected
    seeds = json.loads(report.read_text())["seeds"]["from_sitemap"]
    assert seeds == {"given": 2 if follow else 1,
                     "source": "robots.txt" if given == "auto" else "given"}


def test_add_urls_are_fetched_after_the_links_listed_or_refused_and_not_followed(
        tmp_path: Path) -> None:
    out, report = tmp_path / "out", tmp_path / "r.json"
    with RunningServer("seeds") as site:
        added = tmp_path / "known.txt"
        added.write_text("\n".join(f"{site.url}/{name}" for name in
                                   ("c.html", "hidden.html", "gone.html", "a.html")) + "\n")
        run = run_cli("audit", site.url + "/", "--add-urls", str(added), "--report",
                      str(report), "--compare-sitemap", "off")
        asked = fetched(site)
    assert run.code == 0, run.stderr
    assert "/e.html" not in asked  # c.html's link is not followed
    assert {"/c.html", "/hidden.html", "/gone.html"} <= asked
    document = json.loads(report.read_text())
    seeds = document["seeds"]["add_urls"]
    assert (seeds["given"], seeds["listed"], seeds["refused"]) == (4, 1, 2)  # a.html: seen
    assert sorted((item["url"].removeprefix(site.url), item["reason"])
                  for item in seeds["refused_examples"]) == [
        ("/gone.html", "status-not-200"), ("/hidden.html", "noindex")]
    rows = {row["url"].removeprefix(site.url): row for row in document["urls"]}
    assert rows["/c.html"]["listed"] is True
    assert "--add-urls: 4 URL(s), 1 listed, 2 refused" in run.stdout + run.stderr
    with RunningServer("seeds") as site:
        added.write_text(f"{site.url}/c.html\n")
        crawl = run_cli("crawl", site.url + "/", "--out", str(out), "--add-urls", str(added))
    assert crawl.code == 0, crawl.stderr
    assert listed(out, site) == {"/", "/a.html", "/c.html"}


@pytest.mark.parametrize(("args", "says"), [
    (("--urls", "missing.txt"), "--urls 'missing.txt': no such file"),
    (("--add-urls", "missing.txt"), "--add-urls 'missing.txt': no such file"),
    (("--from-sitemap", "sitemap.xml"), "--from-sitemap 'sitemap.xml' must be 'auto' or an"),
    (("--urls", "-", "--add-urls", "-"), "cannot both read standard input"),
])
def test_a_bad_list_option_is_one_line_and_exit_2_before_any_request(
        tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    with RunningServer("seeds") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), *args)
        assert site.log == []
    assert run.code == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and says in run.stderr


def test_a_list_with_nothing_listable_says_so_in_one_line(tmp_path: Path) -> None:
    with RunningServer("seeds") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--urls", "-",
                      "--no-follow", input=f"{site.url}/gone.html\n")
        asked = fetched(site)
    assert run.code == 3, run.stderr
    assert asked == {"/gone.html"}
    assert "no indexable page found: no URL of the list is listable (1 fetched: " \
           "1 status-not-200)" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
