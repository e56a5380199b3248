"""Regeneration jobs on RQ with a real redis-server and real ``sitemap-crawler worker``
processes: ten sites enqueued and finished as by hand, a worker killed mid-crawl whose
job finishes on the other worker with the same sitemap, and a failing site tried
again after its retry-after waits, then listed failed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from conftest import REPO, read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(240)
SITES = ["basic", "shop", "i18n", "many", "docs", "facts", "structured", "seeds", "media",
         "feeds"]
WORKER = [sys.executable, "-m", "crawler", "worker", "--job-monitoring-interval", "1",
          "--maintenance-interval", "2"]


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of this test's own, on a Unix socket (no TCP port at all)."""
    server = shutil.which("redis-server")
    if server is None:
        if os.environ.get("SITEMAP_CRAWLER_REQUIRE_REDIS"):
            pytest.fail("redis-server is not installed, and CI says it is")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    sock = tmp_path / "redis.sock"
    process = subprocess.Popen([server, "--port", "0", "--unixsocket", str(sock),
                                "--save", "", "--appendonly", "no"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not sock.exists():
        assert time.monotonic() < deadline, "redis-server did not start"
        time.sleep(0.05)
    yield f"unix://{sock}"
    process.terminate()
    process.wait(timeout=10)


def worker(redis_url: str, *, burst: bool, grace: str = "2") -> subprocess.Popen[str]:
    env = {**os.environ, "SITEMAP_CRAWLER_HEARTBEAT_GRACE": grace, "NO_PROXY": "*"}
    return subprocess.Popen([*WORKER, "--redis", redis_url, *(["--burst"] if burst else [])],
                            cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def _listening_workers(redis_url: str, folder: Path, count: int
                       ) -> list[tuple[subprocess.Popen[str], Path]]:
    """``count`` workers (not burst: they wait for jobs), each once it listens; with
    their log files."""
    env = {**os.environ, "SITEMAP_CRAWLER_HEARTBEAT_GRACE": "2", "NO_PROXY": "*"}
    running = []
    for n in range(count):
        path = folder / f"listening-{n}.log"
        with path.open("w") as log:
            running.append((subprocess.Popen(
                [*WORKER, "--redis", redis_url], cwd=REPO, env=env, text=True, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True), path))
    deadline = time.monotonic() + 60
    while not all("Listening on" in path.read_text() for _process, path in running):
        assert time.monotonic() < deadline, [path.read_text() for _p, path in running]
        time.sleep(0.1)
    return running


def _stopped(running: list[tuple[subprocess.Popen[str], Path]]) -> list[str]:
    """The workers stopped (SIGTERM, then whatever they left behind killed); their logs."""
    for process, _path in running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    for process, _path in running:
        process.wait(timeout=60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    return [path.read_text() for _process, path in running]


def _all_listed(redis_url: str, state: str, count: int, seconds: float) -> None:
    """``jobs`` asked until it lists ``count`` jobs, every one in ``state``."""
    deadline = time.monotonic() + seconds
    while True:
        lines = run_cli("jobs", "--redis", redis_url).stdout.splitlines()
        if len(lines) == count and all(line.startswith(state) for line in lines):
            return
        assert time.monotonic() < deadline, lines
        time.sleep(0.3)


def site_config(folder: Path, name: str, url: str, **extra: str) -> Path:
    config = folder / f"{name}.toml"
    lines = [f'start-url = "{url}/"', f'out = "{name}-out"', f'state = "{name}.state"',
             *(f"{key} = {value}" for key, value in extra.items()), "[job]", 'timeout = "5m"']
    config.write_text("\n".join(lines) + "\n")
    return config


def _listed_until(redis_url: str, state: str, seconds: float) -> tuple[str, list[str]]:
    """``jobs`` asked until its first line is in ``state``: that listing, and every
    first line seen on the way."""
    deadline = time.monotonic() + seconds
    seen: list[str] = []
    while True:
        listing = run_cli("jobs", "--redis", redis_url).stdout
        seen.append(listing.partition("\n")[0])
        if listing.startswith(state):
            return listing, seen
        assert time.monotonic() < deadline, listing
        time.sleep(0.3)


def written(out: Path, url: str) -> list[tuple[str, str | None]]:
    return read_sitemaps(out, url + "/", extensions=True).urls


@pytest.mark.slow(14)
def test_ten_sites_on_two_workers_give_what_crawling_each_by_hand_gives(
        tmp_path: Path, redis_url: str) -> None:
    with ExitStack() as stack:
        servers = {name: stack.enter_context(RunningServer(name)) for name in SITES}
        configs = [site_config(tmp_path, name, site.url) for name, site in servers.items()]
        running = _listening_workers(redis_url, tmp_path, 2)
        try:
            queued = run_cli("enqueue", *map(str, configs), "--redis", redis_url)
            assert queued.code == 0, queued.stderr
            assert queued.stdout.count("queued ") == 10
            _all_listed(redis_url, "finished", 10, 120)
        finally:
            logs = _stopped(running)
        assert all("Successfully completed" in log for log in logs), logs  # both worked
        listing = run_cli("jobs", "--redis", redis_url)
        assert listing.code == 0, listing.stderr
        rows = [line.split(None, 3) for line in listing.stdout.splitlines()]
        assert [row[0] for row in rows] == ["finished"] * 10
        assert all(row[3].startswith("crawled ") for row in rows), rows
        for name, site in servers.items():
            by_hand = tmp_path / f"{name}-by-hand"
            run = run_cli("crawl", site.url + "/", "--out", str(by_hand),
                          "--state", str(tmp_path / f"{name}-by-hand.state"),
                          default_duplicates=True)  # as the jobs crawl: the defaults
            assert run.code == 0, run.stderr
            assert written(tmp_path / f"{name}-out", site.url) == written(by_hand, site.url)


@pytest.mark.slow(14)
def test_a_worker_killed_mid_crawl_loses_nothing_the_other_finishes_the_job(
        tmp_path: Path, redis_url: str) -> None:
    slow = {f"/p{n:02d}.html": {"delay": 0.3} for n in range(30)}
    with RunningServer("many", slow) as site:
        config = site_config(tmp_path, "many", site.url, concurrency="2")
        assert run_cli("enqueue", str(config), "--redis", redis_url).code == 0
        first = worker(redis_url, burst=False)
        deadline = time.monotonic() + 60
        while sum(1 for path in site.paths() if path.startswith("/p")) < 8:
            assert time.monotonic() < deadline, "the job never got going"
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)  # the worker, its work-horse and the crawl
        first.wait(timeout=10)
        fetched_before = len(site.paths())
        second = worker(redis_url, burst=False)
        try:
            listing, _seen = _listed_until(redis_url, "finished", 150)
        finally:
            os.killpg(second.pid, signal.SIGTERM)
            second.wait(timeout=30)
        assert "crawled " in listing
        # resumed, not started over: the pages fetched before the kill were not asked again
        assert len(site.paths()) - fetched_before < 31
        by_hand = tmp_path / "by-hand"
        run = run_cli("crawl", site.url + "/", "--out", str(by_hand))
    assert run.code == 0, run.stderr
    assert written(tmp_path / "many-out", site.url) == written(by_hand, site.url)


@pytest.mark.slow(10)
def test_two_jobs_of_one_site_never_write_at_once_the_second_waits(
        tmp_path: Path, redis_url: str) -> None:
    slow = {f"/p{n:02d}.html": {"delay": 0.1} for n in range(30)}
    with RunningServer("many", slow) as site:
        config = site_config(tmp_path, "many", site.url, concurrency="2")
        # both workers listening before the jobs come: each takes one (burst workers
        # started after the jobs were queued raced, and one could run both)
        running = _listening_workers(redis_url, tmp_path, 2)
        try:
            for _ in range(2):
                assert run_cli("enqueue", str(config), "--redis", redis_url).code == 0
            _all_listed(redis_url, "finished", 2, 90)
        finally:
            logs = _stopped(running)
        listing = run_cli("jobs", "--redis", redis_url).stdout.splitlines()
    assert all("Successfully completed" in log for log in logs), logs  # both ran one
    assert [line.split()[0] for line in listing] == ["finished", "finished"], listing
    assert len(written(tmp_path / "many-out", site.url)) == 31


def test_a_burst_worker_runs_what_is_queued_and_exits(tmp_path: Path, redis_url: str) -> None:
    with RunningServer("basic") as site:
        config = site_config(tmp_path, "basic", site.url)
        assert run_cli("enqueue", str(config), "--redis", redis_url).code == 0
        env = {**os.environ, "SITEMAP_CRAWLER_HEARTBEAT_GRACE": "2", "NO_PROXY": "*"}
        log = tmp_path / "burst.log"
        with log.open("w") as out:  # a file, not a pipe: what the worker forks may outlive it
            process = subprocess.Popen([*WORKER, "--redis", redis_url, "--burst"], cwd=REPO,
                                       env=env, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        try:
            assert process.wait(timeout=120) == 0, log.read_text()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        assert "Successfully completed" in log.read_text()
        assert len(written(tmp_path / "basic-out", site.url)) > 1


def test_a_config_a_job_cannot_run_is_refused_before_anything_is_queued(
        tmp_path: Path, redis_url: str) -> None:
    good = site_config(tmp_path, "good", "http://127.0.0.1:9")
    bad = tmp_path / "bad.toml"
    bad.write_text('start-url = "http://127.0.0.1:9/"\nout = "out"\n')
    run = run_cli("enqueue", str(good), str(bad), "--redis", redis_url)
    assert run.code == 2, run.stderr
    assert "a job needs state in its config" in run.stderr
    assert run_cli("jobs", "--redis", redis_url).stdout == ""  # nothing queued


def test_an_unreachable_redis_is_one_line_without_its_password(tmp_path: Path) -> None:
    run = run_cli("jobs", "--redis", f"unix://:hunter22@{tmp_path}/none.sock")
    assert run.code == 2
    assert "cannot reach Redis" in run.stderr and "hunter22" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


@pytest.mark.slow(10)
def test_a_failing_site_is_tried_again_after_its_waits_then_listed_failed(
        tmp_path: Path, redis_url: str) -> None:
    """The documented worker retries as documented: RQ schedules a failed job's retry,
    and only a worker with a scheduler puts it back on the queue (``rq worker``
    without one ran such a job once, and it vanished from ``jobs``)."""
    root = tmp_path / "down"
    root.mkdir()
    with RunningServer(root, routes={"/": {"status": 503, "body": "down"}}) as site:
        config = site_config(tmp_path, "down", site.url, retries="0")
        config.write_text(config.read_text().replace(
            'timeout = "5m"', 'timeout = "5m"\nretries = 2\nretry-after = [2, 3]'))
        assert run_cli("enqueue", str(config), "--redis", redis_url).code == 0
        running = worker(redis_url, burst=False)
        try:
            listing, seen = _listed_until(redis_url, "failed", 90)
        finally:
            os.killpg(running.pid, signal.SIGTERM)
            running.wait(timeout=30)
        attempts = [hit.at for hit in site.log if hit.path == "/"]
    retrying = [line for line in seen if line.startswith("retrying")]
    assert retrying and "next attempt " in retrying[0], seen
    assert len(attempts) == 3, attempts  # the first try and two retries
    assert attempts[1] - attempts[0] >= 1.5 and attempts[2] - attempts[1] >= 2.5
    assert "start URL" in listing or "503" in listing, listing
