"""Scope, robots status rules, budgets, sharding and every documented exit code, over a socket."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import read_sitemaps, run_cli
from siteserver import RunningServer

from sitemap_writer import smallest_shard_bytes

pytestmark = pytest.mark.timeout(120)


def test_prefix_scope_never_leaves_the_prefix(tmp_path: Path) -> None:
    with RunningServer("docs") as site:
        run = run_cli("crawl", site.url + "/docs/index.html", "--out", str(tmp_path),
                      "--ignore-robots")
        assert run.code == 0, run.stderr
        written = read_sitemaps(tmp_path, site.url + "/docs/")
        assert written.locs == [site.url + p for p in
                                ("/docs/guide/", "/docs/guide/a.html", "/docs/index.html")]
        # robots.txt is read for the copy published beside the sitemaps, never obeyed
        assert set(site.paths()) == {"/robots.txt", "/docs/index.html", "/docs/guide/",
                                     "/docs/guide/a.html"}
        robots = (tmp_path / "robots.txt").read_text()
        assert robots == f"Sitemap: {site.url}/docs/sitemap_index.xml\n"


def test_explicit_prefix_and_base_url(tmp_path: Path) -> None:
    with RunningServer("docs") as site:
        run = run_cli("crawl", site.url + "/docs/index.html", "--out", str(tmp_path),
                      "--prefix", "/docs/guide", "--base-url", site.url + "/", "--ignore-robots")
        # the start page is outside /docs/guide: exit 3 with a clear message
        assert run.code == 3
        assert "outside the scope" in run.stderr
        assert site.paths() == []


def test_base_url_that_cannot_hold_the_urls_is_a_usage_error(tmp_path: Path) -> None:
    with RunningServer("docs") as site:
        run = run_cli("crawl", site.url + "/docs/", "--out", str(tmp_path),
                      "--base-url", site.url + "/elsewhere/")
        assert run.code == 2
        assert run.stderr.count("\n") == 1 and "--base-url" in run.stderr
        assert site.paths() == []
        assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("status", [500, 503])
def test_robots_5xx_disallows_everything(tmp_path: Path, status: int) -> None:
    routes = {"/robots.txt": {"status": status, "body": "down"}}
    with RunningServer("many", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--retries", "0")
        assert run.code == 3
        assert "robots.txt" in run.stderr and "disallow" in run.stderr
        assert set(site.paths()) == {"/robots.txt"}


def test_robots_404_allows_everything(tmp_path: Path) -> None:
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path))
        assert run.code == 0, run.stderr
        assert len(read_sitemaps(tmp_path, site.url + "/").locs) == 31
        assert (tmp_path / "robots.txt").read_text() == f"Sitemap: {site.url}/sitemap_index.xml\n"


def test_start_url_disallowed_exits_3_and_requests_nothing_else(tmp_path: Path) -> None:
    routes = {"/robots.txt": {"body": "User-agent: sitemap-crawler\nDisallow: /\n"}}
    with RunningServer("many", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path))
        assert run.code == 3 and "disallows" in run.stderr
        assert site.paths() == ["/robots.txt"]


def test_robots_redirect_is_followed(tmp_path: Path) -> None:
    routes = {"/robots.txt": {"status": 301, "headers": {"Location": "/real-robots.txt"}},
              "/real-robots.txt": {"body": "User-agent: *\nDisallow: /p1\n"}}
    with RunningServer("many", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path))
        assert run.code == 0, run.stderr
        assert not any(path.startswith("/p1") for path in site.paths())
        robots = (tmp_path / "robots.txt").read_text()
        assert robots.startswith("User-agent: *\nDisallow: /p1\n")


def test_unreachable_start_url_exits_3(tmp_path: Path) -> None:
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path), "--retries", "0",
                  "--timeout", "2")
    assert run.code == 3
    assert run.stderr.startswith("sitemap-crawler: error:") and run.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["not a url"], ["ftp://127.0.0.1/"], ["http://127.0.0.1:1/", "--concurrency", "0"],
    ["http://127.0.0.1:1/", "--max-pages", "-1"], ["http://127.0.0.1:1/", "--timeout", "0"],
    ["http://127.0.0.1:1/", "--max-urls-per-sitemap", "50001"],
    ["http://127.0.0.1:1/", "--max-bytes-per-sitemap", "0"],
    ["http://127.0.0.1:1/", "--prefix", "docs"], ["http://127.0.0.1:1/", "--concurrency", "x"],
])
def test_invalid_arguments_exit_2_with_one_line(tmp_path: Path, args: list[str]) -> None:
    run = run_cli("crawl", *args, "--out", str(tmp_path / "out"))
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("size", ["150", "5000"])
def test_a_shard_size_too_small_for_a_url_exits_2_before_any_request(tmp_path: Path,
                                                                      size: str) -> None:
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      "--max-bytes-per-sitemap", size)
        assert site.paths() == []  # refused before the first request, robots.txt included
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "--max-bytes-per-sitemap must be" in run.stderr
    assert not (tmp_path / "out").exists()


def test_unwritable_output_exits_4(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with RunningServer("many") as site:
        for out in (blocker, blocker / "sub"):
            run = run_cli("crawl", site.url + "/", "--out", str(out))
            assert run.code == 4, run.stderr
            assert run.stderr.count("\n") == 1
        assert site.paths() == []  # refused before crawling


def test_nothing_indexable_keeps_previous_output_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "sitemap_index.xml").write_text("previous")
    (tmp_path / "sitemap-00001.xml.gz").write_bytes(b"previous shard")
    with RunningServer("noindex-home") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path))
        assert run.code == 3
        assert "noindex" in run.stderr and site.url + "/" in run.stderr
        assert "/a.html" not in site.paths()  # noindex,nofollow: links not followed
    assert (tmp_path / "sitemap_index.xml").read_text() == "previous"
    assert (tmp_path / "sitemap-00001.xml.gz").read_bytes() == b"previous shard"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sitemap-00001.xml.gz",
                                                          "sitemap_index.xml"]


def test_start_redirecting_out_of_scope_explains_itself(tmp_path: Path) -> None:
    routes = {"/docs/": {"status": 302, "headers": {"Location": "/elsewhere/"}}}
    with RunningServer("docs", routes) as site:
        run = run_cli("crawl", site.url + "/docs/", "--out", str(tmp_path))
        assert run.code == 3
        assert "redirects to" in run.stderr and "out-of-scope" in run.stderr
        assert "/elsewhere/" not in site.paths()


def test_sharding_with_tiny_limits_through_the_cli(tmp_path: Path) -> None:
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path),
                      "--max-urls-per-sitemap", "7", "--no-gzip")
        assert run.code == 0, run.stderr
        written = read_sitemaps(tmp_path, site.url + "/")
        assert written.shard_counts == [7, 7, 7, 7, 3]
        assert written.index_locs[-1] == site.url + "/sitemap-00005.xml"
        assert written.locs == sorted(set(written.locs))
        # a later run with bigger shards removes the stale ones
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--no-gzip",
                      "--max-urls-per-sitemap", "20")
        assert run.code == 0, run.stderr
        written = read_sitemaps(tmp_path, site.url + "/")
        assert written.shard_counts == [20, 11]
        shards = sorted(p.name for p in tmp_path.glob("sitemap-*.xml*"))
        assert len(shards) == len(written.index_locs) == 2


def test_sharding_by_bytes_through_the_cli(tmp_path: Path) -> None:
    # 300 pages with long URLs: about 38 KB of <url> elements, over the smallest
    # shard size a user may ask for.
    long = "section-" + "x" * 100
    links = "".join(f'<a href="/item/{long}/{n}.html">{n}</a>' for n in range(300))
    routes = {"/": {"body": f"<html><body>{links}</body></html>",
                    "headers": {"Content-Type": "text/html"}},
              "/item/*": {"body": "<p>item</p>", "headers": {"Content-Type": "text/html"}}}
    limit = smallest_shard_bytes()
    with RunningServer("many", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--no-gzip",
                      "--max-bytes-per-sitemap", str(limit))
        assert run.code == 0, run.stderr
        written = read_sitemaps(tmp_path, site.url + "/")
    assert len(written.locs) == 301 and len(written.shard_counts) >= 3
    for name in written.index_locs:
        assert (tmp_path / name.rsplit("/", 1)[1]).stat().st_size <= limit


def test_max_depth_and_max_pages(tmp_path: Path) -> None:
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "a"), "--max-depth", "2",
                      "--report", str(tmp_path / "depth.json"))
        assert run.code == 0, run.stderr
        assert read_sitemaps(tmp_path / "a", site.url + "/").locs == [
            site.url + p for p in ("/", "/p00.html", "/p01.html", "/p02.html")]
        rows = json.loads((tmp_path / "depth.json").read_text())["urls"]
        assert {r["url"].rsplit("/", 1)[1] for r in rows if r["reason"] == "max-depth"} == {
            "p03.html", "p04.html"}
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "b"), "--max-pages", "5",
                      "--report", str(tmp_path / "pages.json"))
        assert run.code == 0, run.stderr
        assert len(read_sitemaps(tmp_path / "b", site.url + "/").locs) == 5
        assert len([p for p in site.paths() if p != "/robots.txt"]) == 5
        totals = json.loads((tmp_path / "pages.json").read_text())["totals"]
        assert totals["by_reason"]["max-pages"] >= 1


def test_verbose_logs_each_request_and_quiet_prints_nothing(tmp_path: Path) -> None:
    with RunningServer("many") as site:
        verbose = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "-v")
        assert verbose.code == 0
        lines = [line for line in verbose.stderr.splitlines() if line.startswith("GET ")]
        assert len(lines) == 31
        assert any(line.startswith(f"GET {site.url}/p05.html 200 ") and line.endswith("ms")
                   for line in lines)
        quiet = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--quiet")
        assert quiet.code == 0 and quiet.stderr == "" and quiet.stdout == ""


def test_user_agent_is_sent_and_its_token_matched(tmp_path: Path) -> None:
    routes = {"/robots.txt": {"body": "User-agent: mybot\nDisallow: /p0\n"}}
    with RunningServer("many", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path),
                      "--user-agent", "MyBot/2.0 (+https://example.com/bot)")
        assert run.code == 0, run.stderr
        assert all(hit.headers["user-agent"] == "MyBot/2.0 (+https://example.com/bot)"
                   for hit in site.log)
        assert not any(path.startswith("/p0") for path in site.paths())


def test_overlapping_runs_into_one_directory_are_refused(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    from conftest import REPO

    out = tmp_path / "out"
    with RunningServer("many", {"/p*": {"delay": 0.5}}) as site:
        first = subprocess.Popen(
            [sys.executable, "-m", "crawler", "crawl", site.url + "/", "--out", str(out), "-q"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not any(p.startswith("/p") for p in site.paths()):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        second = run_cli("crawl", site.url + "/", "--out", str(out))
        first.kill()
        first.communicate()
    assert second.code == 4
    assert "another sitemap-crawler run" in second.stderr and second.stderr.count("\n") == 1
