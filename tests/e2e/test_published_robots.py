"""The robots.txt we publish beside the sitemaps never changes the site's rules.

Items 1-3 of the hostile tester's list: a robots.txt over 512 KiB was cut
mid-line when republished, ``--ignore-robots`` dropped the site's rules from the
published file, and a robots.txt redirected to another host counted as missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import read_sitemaps, report_rows, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(90)

PAGE = {"headers": {"Content-Type": "text/html"}}


def site_routes(robots: str | bytes, **more: dict[str, Any]) -> dict[str, dict[str, Any]]:
    body = robots.decode("latin-1") if isinstance(robots, bytes) else robots
    return {"/": {**PAGE, "body": '<a href="/ok.html">ok</a> <a href="/private-area/x.html">x</a>'},
            "/ok.html": {**PAGE, "body": "<p>ok</p>"},
            "/private-area/x.html": {**PAGE, "body": "<p>private</p>"},
            "/robots.txt": {"body": body, "encoding": "latin-1",
                            "headers": {"Content-Type": "text/plain"}},
            **more}


def crawl(url: str, out: Path, *args: str) -> Any:
    return run_cli("crawl", url + "/", "--out", str(out), *args)


def test_a_robots_txt_over_512_kib_is_republished_whole_with_the_sitemap_line_in_reach(
        tmp_path: Path) -> None:
    padding = "".join(f"# {'x' * 97}\n" for _ in range(5300))  # 530,000 bytes
    robots = ("User-agent: *\nDisallow: /nothing-here/\n" + padding
              + "User-agent: otherbot\nDisallow: /private-area/\n").encode()
    assert len(robots) > 512 * 1024
    out = tmp_path / "out"
    with RunningServer("hostile", site_routes(robots)) as site:
        run = crawl(site.url, out)
    assert run.code == 0, run.stderr
    published = (out / "robots.txt").read_bytes()
    sitemap_line = f"Sitemap: {site.url}/sitemap_index.xml\n".encode()
    # every byte of the site's file, and our line where a reader stopping at 500 KiB sees it
    assert published.replace(sitemap_line, b"", 1) == robots
    assert published.index(sitemap_line) < 500 * 1024
    assert b"Disallow: /private-area/\n" in published and b"Disallow: /\n" not in published


def test_a_robots_txt_too_large_to_keep_whole_is_not_rewritten_and_says_why(
        tmp_path: Path) -> None:
    robots = "User-agent: *\nDisallow: /nothing-here/\n" + "#" * 9_000_000 + "\n"
    out = tmp_path / "out"
    out.mkdir()
    (out / "robots.txt").write_text("previous\n")
    with RunningServer("hostile", site_routes(robots)) as site:
        run = crawl(site.url, out)
    assert run.code == 0, run.stderr
    assert "robots.txt not written" in run.stderr and "larger than" in run.stderr
    assert (out / "robots.txt").read_text() == "previous\n"
    assert read_sitemaps(out, site.url + "/").locs


def test_ignore_robots_changes_what_we_fetch_not_the_published_rules(tmp_path: Path) -> None:
    robots = "User-agent: *\r\nDisallow: /private-area/\r\n"
    out = tmp_path / "out"
    with RunningServer("hostile", site_routes(robots)) as site:
        run = crawl(site.url, out, "--ignore-robots")
        requested = site.paths()
    assert run.code == 0, run.stderr
    assert "/private-area/x.html" in requested  # ignored for fetching
    published = (out / "robots.txt").read_bytes()
    assert published.startswith(robots.encode())  # kept for publishing, byte for byte
    assert published.endswith(f"Sitemap: {site.url}/sitemap_index.xml\n".encode())


def test_ignore_robots_with_a_failing_robots_txt_leaves_the_published_file_alone(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "robots.txt").write_text("User-agent: *\nDisallow: /private-area/\n")
    routes = site_routes("", **{"/robots.txt": {"status": 503, "body": "down"}})
    with RunningServer("hostile", routes) as site:
        run = crawl(site.url, out, "--ignore-robots", "--retries", "0")
    assert run.code == 0, run.stderr
    assert "robots.txt not written" in run.stderr and "503" in run.stderr
    assert (out / "robots.txt").read_text() == "User-agent: *\nDisallow: /private-area/\n"


def test_a_robots_txt_redirected_to_another_host_is_obeyed_and_republished(
        tmp_path: Path) -> None:
    """RFC 9309 §2.3.1.2: follow at least five redirects, wherever they go."""
    robots = "User-agent: *\nDisallow: /private-area/\n"
    with RunningServer("hostile", {"/rules.txt": {"body": robots, "headers": {
            "Content-Type": "text/plain"}}}) as elsewhere:
        target = elsewhere.url.replace("127.0.0.1", "localhost") + "/rules.txt"
        routes = site_routes("", **{
            "/robots.txt": {"status": 301, "headers": {"Location": "/robots-1.txt"}},
            "/robots-1.txt": {"status": 302, "headers": {"Location": target}}})
        out, report = tmp_path / "out", tmp_path / "report.json"
        with RunningServer("hostile", routes) as site:
            run = crawl(site.url, out, "--report", str(report))
            requested = site.paths()
    assert run.code == 0, run.stderr
    assert "/private-area/x.html" not in requested
    assert report_rows(report, site.url)["/private-area/x.html"]["reason"] == "robots-disallowed"
    published = (out / "robots.txt").read_bytes()
    assert published.startswith(robots.encode())


def test_more_than_five_robots_redirects_count_as_unavailable(tmp_path: Path) -> None:
    routes = site_routes("", **{f"/r{n}.txt": {"status": 301, "headers": {
        "Location": f"/r{n + 1}.txt"}} for n in range(10)})
    routes["/robots.txt"] = {"status": 301, "headers": {"Location": "/r0.txt"}}
    out = tmp_path / "out"
    with RunningServer("hostile", routes) as site:
        run = crawl(site.url, out)
        requested = site.paths()
    assert run.code == 0, run.stderr
    assert "/r4.txt" in requested and "/r5.txt" not in requested
    assert "/private-area/x.html" in requested  # unavailable: allow everything
    assert (out / "robots.txt").read_bytes() == (
        f"Sitemap: {site.url}/sitemap_index.xml\n".encode())
