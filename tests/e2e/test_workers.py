"""``--workers N`` over a socket: the same output as one worker, and the site sees
one polite crawler — the limits hold for the whole crawl, read from the
server's own timestamps and connection counts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, assert_spaced, read_sitemaps, report_rows, run_cli
from forward_proxy import running_proxy
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _files(out: Path) -> dict[str, bytes]:
    # sitemap.html says when it was written, to the minute: two runs may straddle one
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())
            if path.is_file() and path.name != "sitemap.html"}


def _home(*paths: str) -> dict[str, Any]:
    links = "".join(f'<a href="{path}">{path}</a>' for path in paths)
    return {"body": f"<html><body>{links}</body></html>", "headers": {"Content-Type": "text/html"}}


@pytest.mark.parametrize(("name", "options"), [
    ("basic", ()),
    ("i18n", ("--images",)),
    ("shop", ("--max-urls-per-sitemap", "3", "--strip-param", "utm_*")),
    ("many", ("--max-urls-per-sitemap", "7", "--no-gzip")),
    ("basic", ("--http2",)),  # each worker on httpx's own transport
])
def test_two_workers_write_the_sitemaps_one_writes(tmp_path: Path, name: str,
                                                   options: tuple[str, ...]) -> None:
    with RunningServer(name) as site:
        for workers in ("1", "2"):
            run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / workers),
                          "--workers", workers, "--concurrency", "4", *options)
            assert run.code == 0, run.stderr
        robots = [hit for hit in site.log if hit.path == "/robots.txt"]
    assert _files(tmp_path / "2") == _files(tmp_path / "1")
    assert read_sitemaps(tmp_path / "2", site.url + "/", extensions=True).urls
    assert len(robots) == 2  # once per crawl, not once per worker


def _comparable(report: Path, origin: str) -> dict[str, Any]:
    """A report without what differs between any two runs, one worker or more:
    response times, and the order pages finished in (which of a page's
    referrers are named first, the order of a finding's items)."""
    document = json.loads(report.read_text())
    rows = report_rows(report, origin)
    for row in rows.values():
        row.pop("response_ms", None)
        row["found_on"] = sorted(row["found_on"]) if row["linked_from"] <= 5 else None
        if row["linked_from"] > 1:
            row.pop("anchor", None)
    findings = {name: (found["count"], sorted(json.dumps(item, sort_keys=True)
                                              for item in found["items"]))
                for name, found in document["findings"].items()}
    totals = dict(document["totals"])
    totals.pop("elapsed_seconds")
    return {"rows": rows, "findings": findings, "totals": totals}


@pytest.mark.parametrize(("name", "options"), [
    ("basic", ()),
    # the live sitemap's orphans are fetched by the workers after the links ran out
    ("live-sitemap", ("--compare-sitemap", "auto")),
])
@pytest.mark.slow(7)
def test_an_audit_with_two_workers_reports_what_one_reports(
        tmp_path: Path, name: str, options: tuple[str, ...]) -> None:
    with RunningServer(name) as site:
        for workers in ("1", "2"):
            run = run_cli("audit", site.url + "/", "--workers", workers, "--concurrency", "4",
                          "--report", str(tmp_path / f"{workers}.json"), *options)
            assert run.code in (0, 6), run.stderr
    one = _comparable(tmp_path / "1.json", site.url)
    two = _comparable(tmp_path / "2.json", site.url)
    assert two == one and len(one["rows"]) > 5
    if options:
        assert any(row["orphan"] for row in two["rows"].values())


def test_a_state_recrawl_with_two_workers_sends_validators_and_writes_the_same(
        tmp_path: Path) -> None:
    with RunningServer("i18n", conditional=True) as site:
        for workers in ("1", "2"):
            for run_name in ("first", "second"):
                run = run_cli("crawl", site.url + "/", "--out",
                              str(tmp_path / f"{workers}-{run_name}"), "--workers", workers,
                              "--state", str(tmp_path / f"state-{workers}.db"))
                assert run.code == 0, run.stderr
        second = site.log[len(site.log) // 2:]
    assert _files(tmp_path / "2-first") == _files(tmp_path / "1-first")
    assert _files(tmp_path / "2-second") == _files(tmp_path / "1-second")
    # the last run (two workers, second crawl) asked conditionally for what it knew
    asked = [hit for hit in second if "if-none-match" in hit.headers]
    assert len(asked) >= 5


@pytest.mark.parametrize("asked_by", ["robots.txt", "--delay"])
def test_crawl_delay_spaces_request_starts_across_workers(tmp_path: Path, asked_by: str) -> None:
    robots = "User-agent: *\nCrawl-delay: 0.3\n" if asked_by == "robots.txt" else ""
    options = ("--delay", "0.3") if asked_by == "--delay" else ()
    routes = {"/robots.txt": {"body": robots}}
    with RunningServer("many", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--max-pages", "8",
                      "--concurrency", "4", "--workers", "2", *options)
        hits = [hit for hit in site.log if hit.path != "/robots.txt"]
    assert run.code == 0, run.stderr
    assert len(hits) == 8
    assert_spaced([hit.at for hit in hits], 0.3)
    # both workers did send requests (one connection each at least)
    assert len({hit.client_port for hit in hits}) >= 2


def test_rate_holds_for_the_whole_crawl(tmp_path: Path) -> None:
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--max-pages", "10",
                      "--rate", "10", "--concurrency", "8", "--workers", "2")
        starts = [hit.at for hit in site.log]
    assert run.code == 0, run.stderr
    assert_spaced(starts, 0.1)


def test_concurrency_bounds_requests_in_flight_across_workers(tmp_path: Path) -> None:
    routes = _slow_site(pages=12, delay=0.3)
    with RunningServer("hostile", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--concurrency", "2",
                      "--workers", "2")
        starts = sorted(hit.at for hit in site.log if hit.path.startswith("/slow/"))
    assert run.code == 0, run.stderr
    # every answer takes 0.3 s: two starts 0.25 s apart or closer were in flight together
    in_flight = max(sum(1 for at in starts if start <= at < start + 0.25) for start in starts)
    assert in_flight == 2  # both workers busy, and never more than --concurrency
    # the coordinator's robots.txt connection, kept alive, and one per worker
    assert site.max_open_connections <= 3


def test_a_retry_after_pause_holds_every_worker(tmp_path: Path) -> None:
    # One 429, met by one worker: the other must hold its requests too. The other
    # pages take 0.1 s, so the crawl is still at work when the 429 comes.
    pages = [f"/storm/{n}" for n in range(16)]
    routes = {"/": _home(*pages),
              "/storm/0": {"behaviour": "sequence", "steps": [
                  {"status": 429, "headers": {"Retry-After": "1", "Content-Type": "text/html"},
                   "body": "slow down"},
                  {"body": "<p>fine</p>", "headers": {"Content-Type": "text/html"}}]},
              "/storm/*": {"body": "<p>fine</p>", "delay": 0.1,
                           "headers": {"Content-Type": "text/html"}}}
    with RunningServer("hostile", routes) as site:
        report = tmp_path / "report.json"
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--report",
                      str(report), "--concurrency", "4", "--workers", "2")
        log = list(site.log)
    assert run.code == 0, run.stderr
    rows = report_rows(report, site.url)
    assert all(rows[page]["listed"] for page in pages)
    answered = next(hit.at for hit in log if hit.path == "/storm/0")
    # requests started before the 429 was read arrive at once; then nothing for 1 s
    assert [hit.path for hit in log if answered + 0.05 < hit.at < answered + 0.95] == []
    assert len({hit.client_port for hit in log if hit.at > answered + 0.95}) >= 2


def test_a_session_cookie_reaches_every_worker(tmp_path: Path) -> None:
    routes = {"/": {"headers": {"Set-Cookie": "session=w0rk3rs; Path=/"}}}
    with RunningServer("many", routes) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path), "--concurrency", "4",
                      "--workers", "2")
        after = [hit for hit in site.log if hit.path not in ("/robots.txt", "/")]
    assert run.code == 0, run.stderr
    assert len(after) > 20 and len({hit.client_port for hit in after}) >= 2
    assert all(hit.headers.get("cookie") == "session=w0rk3rs" for hit in after)


# Two crawls in one process, as a job queue's long-lived worker runs them: the
# second after the environment changed (a proxy named), which its workers must see.
_TWO_CRAWLS = """
import asyncio, os, sys
from crawler.config import CrawlConfig
from crawler.engine.coordinator import crawl
url, proxy = sys.argv[1:]
for second in (False, True):
    if second:
        os.environ.pop("NO_PROXY", None)
        os.environ["http_proxy"] = proxy
    done = asyncio.run(crawl(CrawlConfig(start_url=url, workers=2, concurrency=4,
                                            soft_404=False)))
    children = []
    for task in os.listdir("/proc/self/task"):
        try:
            listed = open(f"/proc/self/task/{task}/children").read()
            children += [int(child) for child in listed.split()]
        except FileNotFoundError:  # a thread that ended since the listing
            pass
    servers = [child for child in children
               if b"forkserver" in open(f"/proc/{child}/cmdline", "rb").read()]
    print(sum(1 for record in done.records if record.status == 200), len(servers), flush=True)
"""


@pytest.mark.slow(8)
def test_workers_see_the_environment_their_crawl_starts_with_and_leave_with_it(
        tmp_path: Path) -> None:
    """Workers are forked from a process that imported their code once, not started
    as fresh interpreters; what that process had when it started (the first
    crawl's environment) must not stand in for a later crawl's."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = "*"
    with running_proxy() as (proxy_url, seen), RunningServer("many") as site:
        done = subprocess.run([sys.executable, "-c", _TWO_CRAWLS, site.url + "/", proxy_url],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        first, servers_left, second, servers_left_again = map(int, done.stdout.split())
        served = [hit.path for hit in site.log]
    assert first == second > 20
    # the fork server stopped and reaped with the pool: its CPU and its workers'
    # count as the crawl's children's (time(1), getrusage, the benchmarks)
    assert servers_left == servers_left_again == 0
    assert len(served) == 2 * (second + 1)  # its pages and robots.txt, twice
    second_crawl = served[len(served) // 2:]
    assert sorted(seen) == sorted(site.url + path for path in second_crawl)


# Two crawls at once in one process: the second starts once the first's workers are
# up, after the environment changed (a proxy named). Its workers come from the fork
# server the first crawl started, whose environment has no proxy.
_TWO_CRAWLS_AT_ONCE = """
import asyncio, os, sys, time
from crawler.config import CrawlConfig
from crawler.engine.coordinator import crawl
slow, fast, proxy = sys.argv[1:]

def workers_up():
    for task in os.listdir("/proc/self/task"):
        for child in open(f"/proc/self/task/{task}/children").read().split():
            if b"forkserver" in open(f"/proc/{child}/cmdline", "rb").read():
                return len(open(f"/proc/{child}/task/{child}/children").read().split())
    return 0

async def main():
    first = asyncio.ensure_future(crawl(CrawlConfig(start_url=slow, workers=2, concurrency=4,
                                                      soft_404=False)))
    deadline = time.monotonic() + 30
    while workers_up() < 2:
        assert time.monotonic() < deadline, "the first crawl's workers never came up"
        await asyncio.sleep(0.05)
    os.environ.pop("NO_PROXY", None)
    os.environ["http_proxy"] = proxy
    second = await crawl(CrawlConfig(start_url=fast, workers=2, concurrency=4, soft_404=False))
    first = await first
    for done in (first, second):
        print(sum(1 for record in done.records if record.status == 200))

asyncio.run(main())
"""


@pytest.mark.slow(6)
def test_workers_forked_for_one_crawl_serve_another_with_its_own_environment(
        tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = "*"
    with running_proxy() as (proxy_url, seen), RunningServer(
            "hostile", _slow_site(30, 0.2)) as slow, RunningServer("many") as fast:
        done = subprocess.run(
            [sys.executable, "-c", _TWO_CRAWLS_AT_ONCE, slow.url + "/", fast.url + "/",
             proxy_url], cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        slow_pages, fast_pages = map(int, done.stdout.split())
        fast_served = [fast.url + hit.path for hit in fast.log]
    assert slow_pages == 31 and fast_pages > 20
    assert sorted(seen) == sorted(fast_served)  # every request of the second, none of the first


def _children(pid: int) -> list[int]:
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def _workers(pid: int) -> list[int]:
    """The worker processes ``pid`` started: the children of its fork server (not
    multiprocessing's resource tracker, nor the crawl's own parse child)."""
    servers = [child for child in _children(pid)
               if b"multiprocessing.forkserver" in Path(f"/proc/{child}/cmdline").read_bytes()]
    return [worker for server in servers for worker in _children(server)]


def _slow_site(pages: int = 60, delay: float = 0.3) -> dict[str, dict[str, Any]]:
    return {"/": _home(*(f"/slow/{n}" for n in range(pages))),
            "/slow/*": {"body": "<p>slow</p>", "delay": delay,
                        "headers": {"Content-Type": "text/html"}}}


def _start(site: Any, out: Path, *args: str,
           env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {**{k: v for k, v in os.environ.items() if "proxy" not in k.lower()}, **(env or {})}
    env["NO_PROXY"] = "*"
    # --keep-duplicates and --no-soft-404 as run_cli has them: the slow pages are one
    # body at many URLs, and so is what a made-up URL among them answers
    return subprocess.Popen(
        [sys.executable, "-m", "crawler", "crawl", site.url + "/", "--out", str(out),
         "--workers", "2", "--concurrency", "4", "--keep-duplicates", "--no-soft-404",
         *args],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(condition: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow(8)
@pytest.mark.parametrize("how", ["killed", "stopped"])
def test_a_lost_worker_is_given_up_and_the_others_finish_the_crawl(
        tmp_path: Path, how: str) -> None:
    """Killed (SIGKILL) or stopped (SIGSTOP: wedged, it never answers again), a worker's
    pages go to the other, the crawl ends with every page, and the loss is said."""
    out, report = tmp_path / "out", tmp_path / "report.json"
    with RunningServer("hostile", _slow_site(40, 0.2)) as site:
        process = _start(site, out, "--report", str(report),
                         env={"SITEMAP_CRAWLER_WORKER_SILENCE": "3"})
        _wait_for(lambda: sum(hit.path.startswith("/slow/") for hit in site.log) >= 4)
        workers = _workers(process.pid)
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL if how == "killed" else signal.SIGSTOP)
        _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in stderr, stderr
    said = "exited unexpectedly" if how == "killed" else "stopped answering for 3 s"
    assert lines[0].startswith("sitemap-crawler: warning: a worker process " + said)
    assert "its pages went to the other workers" in lines[0]
    written = read_sitemaps(out, site.url + "/")
    assert len(written.locs) == 41  # every page, the lost worker's included
    assert json.loads(report.read_text())["workers_lost"] == [lines[0].split(": ", 2)[2]
                                                             .split(": killed")[0]]
    assert not Path(f"/proc/{workers[0]}").exists() or "zombie" in _status(workers[0])


def test_an_interrupted_crawl_leaves_no_worker_behind(tmp_path: Path) -> None:
    with RunningServer("hostile", _slow_site()) as site:
        process = _start(site, tmp_path / "out")
        _wait_for(lambda: sum(hit.path.startswith("/slow/") for hit in site.log) >= 4)
        workers = _workers(process.pid)
        assert len(workers) == 2
        process.send_signal(signal.SIGTERM)
        _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    _wait_for(lambda: not any(Path(f"/proc/{pid}").exists() and
                              "zombie" not in _status(pid) for pid in workers), timeout=10)


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


@pytest.mark.parametrize(("options", "message"), [
    (("--workers", "0"), "--workers"),
    (("--workers", "many"), "neither a number nor auto"),
    (("--workers", "3", "--concurrency", "2"), "--workers 3 needs --concurrency 3 or more"),
])
def test_bad_workers_exit_2_in_one_line(tmp_path: Path, options: tuple[str, ...],
                                        message: str) -> None:
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path), *options)
    assert run.code == 2
    assert message in run.stderr and "Traceback" not in run.stderr


def test_workers_auto_and_a_config_file_key(tmp_path: Path) -> None:
    config = tmp_path / "crawl.toml"
    with RunningServer("many") as site:
        for value in ('"auto"', "2"):
            config.write_text(f"workers = {value}\nconcurrency = 4\n")
            out = tmp_path / value.strip('"')
            run = run_cli("crawl", site.url + "/", "--out", str(out), "--config", str(config))
            assert run.code == 0, run.stderr
    assert _files(tmp_path / "auto") == _files(tmp_path / "2")
    config.write_text("workers = true\n")
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "x"),
                  "--config", str(config))
    assert run.code == 2 and "workers must be an integer or a string" in run.stderr


def test_auto_stays_one_process_on_a_small_site(tmp_path: Path) -> None:
    """The default on a site far below the thresholds: no worker process is started
    (nothing but this process and its parse child), and no line about them."""
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "auto"))
        one = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "one"), "--workers", "1")
    assert run.code == 0 and one.code == 0, run.stderr + one.stderr
    assert "worker processes added" not in run.stderr
    assert _files(tmp_path / "auto") == _files(tmp_path / "one")


@pytest.mark.slow(8)
def test_auto_adds_workers_when_the_crawl_is_large_and_busy(tmp_path: Path) -> None:
    """With the thresholds lowered and two workers allowed (a test cannot afford
    2,000 pages on a machine of four cores), the crawl starts alone, adds the
    workers mid-crawl, and writes what one process writes; the workers fetch the
    pages after the switch (each on its own connection)."""
    with RunningServer("many") as site:
        # --rate: 31 pages take four seconds, time for the workers to start and work
        # (two seconds were not always enough with the suite on four processes)
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "auto"),
                      "--concurrency", "2", "--rate", "8",
                      env_extra={"SITEMAP_CRAWLER_AUTO_WORKERS": "4,0,0,2,2"})
        connections = site.connections
        one = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "one"), "--workers", "1")
    assert run.code == 0 and one.code == 0, run.stderr + one.stderr
    assert "worker processes added at page 4" in run.stderr
    assert connections > 2  # this process keeps at most 2; the workers opened their own
    assert _files(tmp_path / "auto") == _files(tmp_path / "one")
