"""A misbehaving server on 127.0.0.1: every case ends, bounded, with a record and valid output."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    REPO,
    assert_spaced,
    ctrl_c_as_in_a_terminal,
    read_sitemaps,
    report_rows,
    run_cli,
)
from siteserver import RunningServer, SiteServer

pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("transport")]


def home(*paths: str) -> dict[str, Any]:
    links = "".join(f'<a href="{path}">{path}</a>' for path in paths)
    return {"body": f"<html><body>{links}</body></html>", "headers": {"Content-Type": "text/html"}}


def crawl(site: SiteServer, tmp_path: Path, *args: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    report = tmp_path / "report.json"
    run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--report",
                  str(report), *args)
    rows = report_rows(report, site.url) if report.exists() else {}
    return run, rows


def test_slow_drip_is_cut_by_the_total_deadline(tmp_path: Path) -> None:
    routes = {"/": home("/drip", "/ok.html"), "/drip": {"behaviour": "drip", "delay": 0.2}}
    with RunningServer("hostile", routes) as site:
        started = time.monotonic()
        run, rows = crawl(site, tmp_path, "--timeout", "1.5", "--retries", "0")
        assert time.monotonic() - started < 15
    assert run.code == 0, run.stderr
    assert rows["/drip"]["error"] == "timeout"
    assert rows["/ok.html"]["listed"]


def test_body_over_the_cap_is_recorded_not_parsed(tmp_path: Path) -> None:
    routes = {"/": home("/huge", "/ok.html"), "/huge": {"behaviour": "huge", "size": 3_000_000}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path, "--max-page-bytes", "1000000", "--retries", "0")
    assert run.code == 0, run.stderr
    assert rows["/huge"]["error"] == "too-large" and not rows["/huge"]["listed"]


def test_gzip_bomb_is_cut_at_the_cap_on_decompressed_bytes(tmp_path: Path) -> None:
    routes = {"/": home("/bomb", "/ok.html"),
              "/bomb": {"behaviour": "gzip_bomb", "size": 64 * 1024 * 1024}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path, "--max-page-bytes", "2000000", "--retries", "0", "-v")
    assert run.code == 0, run.stderr
    assert rows["/bomb"]["error"] == "too-large"
    assert rows["/ok.html"]["listed"]


def test_redirect_chain_of_12_hops_ends_with_a_reason(tmp_path: Path) -> None:
    routes: dict[str, Any] = {"/": home("/r1")}
    for n in range(1, 13):
        routes[f"/r{n}"] = {"status": 301, "headers": {"Location": f"/r{n + 1}"}}
    routes["/r13"] = home()
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path)
        requested = site.paths()
    assert run.code == 0, run.stderr
    assert "/r11" in requested and "/r12" not in requested and "/r13" not in requested
    assert rows["/r12"]["reason"] == "redirect-chain-too-long"


def test_redirect_loop_ends(tmp_path: Path) -> None:
    routes = {"/": home("/a", "/ok.html"),
              "/a": {"status": 302, "headers": {"Location": "/b"}},
              "/b": {"status": 302, "headers": {"Location": "/a"}}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path)
        assert site.count("/a") == 1 and site.count("/b") == 1
    assert run.code == 0
    assert rows["/a"]["reason"] == "redirect"
    assert rows["/b"]["reason"] == "redirect-loop"  # the hop that closes the loop


def test_latin1_location_header_is_followed_byte_for_byte(tmp_path: Path) -> None:
    # http.server writes header values as latin-1: the Location's raw byte is 0xE9.
    routes = {"/": home("/old"),
              "/old": {"status": 301, "headers": {"Location": "/caf\u00e9"}},
              "/caf%E9": home()}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path)
        assert site.count("/caf%E9") == 1
    assert run.code == 0
    assert rows["/caf%E9"]["listed"] and rows["/old"]["reason"] == "redirect"


def test_infinite_calendar_is_bounded_and_counted(tmp_path: Path) -> None:
    routes = {"/": home("/cal/"), "/cal/*": {"behaviour": "calendar"}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path, "--max-query-variants", "25")
        requested = site.paths()
    assert run.code == 0, run.stderr
    assert len([p for p in requested if p.startswith("/cal/?")]) == 25
    reasons = [row["reason"] for row in rows.values()]
    assert "too-many-query-variants" in reasons
    assert "repeated-path-segment" in reasons  # /cal/day/day/day/day/
    assert max(p.count("day") for p in requested) <= 3


def test_503_with_retry_after_then_200_is_listed(tmp_path: Path) -> None:
    routes = {"/": home("/busy"), "/busy": {"behaviour": "sequence", "steps": [
        {"status": 503, "headers": {"Retry-After": "1", "Content-Type": "text/html"},
         "body": "busy"},
        {"body": "<p>fine</p>", "headers": {"Content-Type": "text/html"}}]}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path)
        hits = [hit.at for hit in site.log if hit.path == "/busy"]
    assert run.code == 0, run.stderr
    assert rows["/busy"]["listed"]
    assert len(hits) == 2 and hits[1] - hits[0] >= 0.95


@pytest.mark.slow(6)
def test_429_storm_slows_the_whole_host(tmp_path: Path) -> None:
    pages = [f"/storm/{n}" for n in range(8)]
    routes = {"/": home(*pages), "/storm/*": {"behaviour": "storm", "prefix": "/storm/",
                                              "count": 4, "retry_after": 1}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path, "--concurrency", "4")
        log = list(site.log)
    assert run.code == 0, run.stderr
    assert all(rows[page]["listed"] for page in pages)
    first_429 = next(hit.at for hit in log if hit.path.startswith("/storm/"))
    # requests already on the wire arrive at once; after that, nothing for the pause
    during_pause = [hit for hit in log if first_429 + 0.2 < hit.at < first_429 + 0.9]
    assert during_pause == []


def test_crawl_delay_spaces_request_starts(tmp_path: Path) -> None:
    routes = {"/robots.txt": {"body": "User-agent: *\nCrawl-delay: 0.3\n"}}
    with RunningServer("many", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--max-pages", "6",
                      "--concurrency", "4")
        starts = [hit.at for hit in site.log if hit.path != "/robots.txt"]
    assert run.code == 0, run.stderr
    assert len(starts) == 6
    assert_spaced(starts, 0.3)


def test_a_huge_crawl_delay_is_capped_and_said(tmp_path: Path) -> None:
    # Crawl-delay: 86400 would turn a 31-page site into a month-long crawl.
    routes = {"/robots.txt": {"body": "User-agent: *\nCrawl-delay: 86400\n"}}
    with RunningServer("many", routes) as site:
        started = time.monotonic()
        report = tmp_path / "report.json"
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--max-pages",
                      "4", "--max-crawl-delay", "0.3", "--report", str(report))
        elapsed = time.monotonic() - started
        starts = [hit.at for hit in site.log if hit.path != "/robots.txt"]
    assert run.code == 0, run.stderr
    assert elapsed < 20
    assert_spaced(starts, 0.3)  # the cap still spaces requests
    assert "Crawl-delay 86400 s capped at 0.3 s (--max-crawl-delay)" in run.stderr
    assert json.loads(report.read_text())["crawl_delay"] == {"asked": 86400.0, "used": 0.3}


def test_rate_limits_requests_per_second(tmp_path: Path) -> None:
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--max-pages", "8",
                      "--rate", "10", "--concurrency", "8")
        starts = [hit.at for hit in site.log]
    assert run.code == 0, run.stderr
    assert len(starts) >= 7
    assert_spaced(starts, 0.1)


def test_connection_reset_mid_body_is_retried(tmp_path: Path) -> None:
    routes = {"/": home("/flaky", "/dead"),
              "/flaky": {"behaviour": "sequence", "steps": [
                  {"behaviour": "reset"}, {"body": "<p>ok</p>",
                                           "headers": {"Content-Type": "text/html"}}]},
              "/dead": {"behaviour": "reset"}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path, "--retries", "1")
        assert site.count("/flaky") == 2 and site.count("/dead") == 2
    assert run.code == 0, run.stderr
    assert rows["/flaky"]["listed"]
    assert rows["/dead"]["error"] == "network-error"


def test_broken_encodings_and_binary_never_reach_the_sitemap_as_invalid_xml(tmp_path: Path) -> None:
    routes = {"/": home("/latin1.html", "/bad-utf8.html", "/binary.html"),
              "/latin1.html": {"headers": {"Content-Type": "text/html; charset=iso-8859-1"}}}
    with RunningServer("hostile", routes) as site:
        run, _rows = crawl(site, tmp_path)
        requested = site.paths()
        written = read_sitemaps(tmp_path / "out", site.url + "/")
    assert run.code == 0, run.stderr
    assert "/caf%C3%A9.html" in requested  # latin-1 href decoded, re-encoded as UTF-8
    assert site.url + "/caf%C3%A9.html" in written.locs
    assert site.url + "/bad-utf8.html" in written.locs
    assert "/ok%EF%BF%BDnul.html" in requested  # NUL became U+FFFD, percent-encoded


def test_a_charset_that_is_no_text_encoding_fails_that_page_only(tmp_path: Path) -> None:
    # "hex", "base64" and "idna" are codecs Python knows, but not text encodings.
    routes = {"/": home("/hex.html", "/b64.html", "/idna.html", "/ok.html"),
              **{f"/{name}.html": {"body": '<a href="/ok.html">ok</a>',
                                   "headers": {"Content-Type": f"text/html; charset={label}"}}
                 for name, label in (("hex", "hex"), ("b64", "base64"), ("idna", "idna"))}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path)
    assert run.code == 0, run.stderr
    assert all(rows[path]["listed"] for path in ("/hex.html", "/b64.html", "/idna.html"))
    assert rows["/ok.html"]["listed"]


def test_a_url_found_again_while_queued_is_fetched_once(tmp_path: Path) -> None:
    # /y waits in the queue behind /a, /b and /c when /x links to it again: a crawler
    # that marked URLs seen when it dequeued them would fetch /y twice.
    page = {"body": "<p>leaf</p>", "headers": {"Content-Type": "text/html"}}
    routes = {"/": home("/x", "/a", "/b", "/c", "/y"), "/x": home("/y", "/a"),
              "/a": page, "/b": page, "/c": page, "/y": page}
    with RunningServer("hostile", routes) as site:
        run, _rows = crawl(site, tmp_path, "--concurrency", "1")
        paths = site.paths()
    assert run.code == 0, run.stderr
    assert sorted(paths) == sorted(set(paths)) and "/y" in paths


@pytest.mark.slow(11)
def test_page_with_100000_links(tmp_path: Path) -> None:
    body = "".join(f'<a href="/item/{n}">{n}</a>' for n in range(100_000))
    routes = {"/": {"body": f"<html><body>{body}</body></html>",
                    "headers": {"Content-Type": "text/html"}}}
    with RunningServer("hostile", routes) as site:
        started = time.monotonic()
        run, rows = crawl(site, tmp_path, "--max-pages", "20", "--retries", "0")
        elapsed = time.monotonic() - started
    assert run.code == 0, run.stderr
    assert sum(1 for row in rows.values() if row["reason"] == "max-pages") == 100_000 - 19
    assert elapsed < 60


def test_connections_are_kept_alive_and_never_exceed_concurrency(tmp_path: Path) -> None:
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--concurrency", "2")
        ports = {hit.client_port for hit in site.log}
    assert run.code == 0, run.stderr
    assert 1 <= site.max_open_connections <= 2
    assert len(ports) <= 2  # keep-alive: even the 404 of robots.txt did not cost a connection


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupt(site: SiteServer, signum: int, *args: str,
              sigint_ignored: bool = False) -> tuple[int, str, float]:
    """Start a crawl, send ``signum`` once a slow page is being fetched; exit code,
    stderr and how long the crawler took to stop. ``sigint_ignored``: started the
    way a script's background job is (``crawl … &``), with SIGINT ignored."""
    process = subprocess.Popen(
        [sys.executable, "-m", "crawler", "crawl", site.url + "/", *args],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ignore_sigint if sigint_ignored else ctrl_c_as_in_a_terminal)
    deadline = time.monotonic() + 20
    while not any(p.startswith("/p") for p in site.paths()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    sent = time.monotonic()
    process.send_signal(signum)
    _stdout, stderr = process.communicate(timeout=10)
    return process.returncode, stderr, time.monotonic() - sent


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_fast_and_keeps_previous_output(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "sitemap_index.xml").write_text("previous")
    with RunningServer("many", {"/p*": {"delay": 5}}) as site:
        code, stderr, took = interrupt(site, signum, "--out", str(out))
    assert code == 130, stderr
    assert took < 2
    assert stderr.count("\n") == 1 and "interrupted after 1 pages" in stderr
    assert "--state FILE makes a crawl resumable" in stderr
    assert [p.name for p in out.iterdir()] == ["sitemap_index.xml"]
    assert (out / "sitemap_index.xml").read_text() == "previous"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_stops_a_background_job_that_ignores_ctrl_c(tmp_path: Path,
                                                            workers: str) -> None:
    """A shell runs `crawl … &` with SIGINT ignored, and the crawler keeps ignoring
    Ctrl-C there; SIGTERM (kill, systemd, a cron wrapper's timeout) still stops it
    at once, saving the state (it used to be forwarded as an ignored SIGINT)."""
    out, state = tmp_path / "out", tmp_path / "state.db"
    with RunningServer("many", {"/p*": {"delay": 5}}) as site:
        code, stderr, took = interrupt(site, signal.SIGTERM, "--out", str(out), "--state",
                                       str(state), "--concurrency", "2", "--workers", workers,
                                       sigint_ignored=True)
    assert code == 130, stderr
    assert took < 3
    assert stderr.count("\n") == 1 and "interrupted after 1 pages" in stderr
    assert "--resume" in stderr


def test_an_interrupted_crawl_with_state_says_how_to_resume(tmp_path: Path) -> None:
    out, state = tmp_path / "my out", tmp_path / "state.db"
    with RunningServer("many", {"/p*": {"delay": 5}}) as site:
        code, stderr, _took = interrupt(site, signal.SIGTERM, "--out", str(out), "--state",
                                        str(state), "--concurrency", "2")
    assert code == 130, stderr
    assert stderr.count("\n") == 1
    command = stderr.split("resume with: ", 1)[1].strip()
    assert shlex.split(command) == ["sitemap-crawler", "crawl", site.url + "/", "--out",
                                    str(out), "--state", str(state), "--concurrency", "2",
                                    "--resume"]


def test_shrinking_to_under_half_is_refused_unless_allowed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("many") as site:
        assert run_cli("crawl", site.url + "/", "--out", str(out)).code == 0
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        site.routes["/p*"] = {"status": 500, "body": "outage"}
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--retries", "0")
        assert run.code == 5 and "--allow-shrink" in run.stderr
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--retries", "0",
                      "--allow-shrink")
        assert run.code == 0
        assert read_sitemaps(out, site.url + "/").locs == [site.url + "/"]


def test_robots_txt_is_read_to_512_kib_whatever_the_page_cap(tmp_path: Path) -> None:
    """RFC 9309 §2.5: at least the first 500 KiB are parsed. A rule in the first
    512 KiB holds even with a tiny --max-page-bytes; one after 512 KiB is past the
    limit (the cut itself is what is tested)."""
    padding = "".join(f"# {'x' * 97}\n" for _ in range(5300))  # 530,000 bytes of comments
    robots = f"User-agent: *\nDisallow: /early/\n{padding}Disallow: /late/\n"
    assert len(robots.encode()) > 512 * 1024
    routes = {"/": home("/early/a.html", "/late/b.html", "/ok.html"),
              "/robots.txt": {"body": robots, "headers": {"Content-Type": "text/plain"}},
              "/early/a.html": {"body": "<p>a</p>", "headers": {"Content-Type": "text/html"}},
              "/late/b.html": {"body": "<p>b</p>", "headers": {"Content-Type": "text/html"}}}
    with RunningServer("hostile", routes) as site:
        run, rows = crawl(site, tmp_path, "--max-page-bytes", "1000")
        requested = site.paths()
    assert run.code == 0, run.stderr
    assert "/early/a.html" not in requested
    assert rows["/early/a.html"]["reason"] == "robots-disallowed"
    assert "/late/b.html" in requested


def test_the_resume_command_of_an_interrupted_login_crawl_hides_the_secrets(
        tmp_path: Path) -> None:
    out, state = tmp_path / "out", tmp_path / "state.db"
    with RunningServer("many", {"/p*": {"delay": 5}}) as site:
        code, stderr, _took = interrupt(site, signal.SIGTERM, "--out", str(out), "--state",
                                        str(state), "--auth", "me:pw-SECRET",
                                        "--header", "X-Key: hdr-SECRET")
    assert code == 130, stderr
    assert "SECRET" not in stderr
    command = stderr.split("resume with: ", 1)[1].strip()
    assert "--auth '***'" in command and "--header '***'" in command
    assert command.endswith("--resume (with the secrets shown as *** given again)")


def test_a_page_of_5000_external_links_is_counted_and_sampled_the_same_on_a_recrawl(
        tmp_path: Path) -> None:
    """Out-of-scope URLs: at most 1,000 report rows per reason, and a distinct count that
    a re-crawl from --state (304s replaying stored links) gives identically: exact up
    to EXACT_UP_TO URLs, and the links and pages beside it."""
    external = [f"https://site{i}.example/page" for i in range(5000)]
    other_host = [f"http://127.0.0.1:{1000 + i}/" for i in range(20)]  # other ports
    routes = {"/": home(*external, *external[:2500], *other_host, "/ok.html")}
    state = tmp_path / "state.db"
    with RunningServer("hostile", routes, conditional=True) as site:
        run, rows = crawl(site, tmp_path, "--state", str(state), "--ignore-robots")
        assert run.code == 0, run.stderr
        first = json.loads((tmp_path / "report.json").read_text())
        run2, rows2 = crawl(site, tmp_path, "--state", str(state), "--ignore-robots")
        assert run2.code == 0, run2.stderr
        second = json.loads((tmp_path / "report.json").read_text())
    outside = first["totals"]["outside_scope"]
    assert outside["external"] == {"urls": 5000, "estimated": False, "in_report": 1000}
    # 7,520 links to 5,020 URLs on the one page: a page's link to a URL counts once
    assert first["totals"]["external"] == {"urls": 5020, "estimated": False, "links": 5020,
                                           "pages": 1}
    assert second["totals"]["external"] == first["totals"]["external"]
    assert sum(row["reason"] == "external" for row in rows.values()) == 1000
    # a sample that is complete is all in the report
    assert outside["other-host-same-site"] == {"urls": 20, "estimated": False, "in_report": 20}
    assert sum(row["reason"] == "other-host-same-site" for row in rows.values()) == 20
    assert second["totals"]["outside_scope"] == outside

    def steady(table: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        # response times vary; anchor texts of 304 pages are not stored (README, "Audits")
        return {url: {k: v for k, v in row.items() if k not in ("response_ms", "anchor")}
                for url, row in table.items()}
    assert steady(rows2) == steady(rows)
