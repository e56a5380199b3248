"""Shared test helpers: run the real CLI, read and validate what it wrote."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from lxml import etree

REPO = Path(__file__).resolve().parent.parent
# No piped progress in any CLI a test starts (run_cli or its own subprocess): a line
# every 10 s and at each phase's end would make a test's stderr depend on how long it
# took. tests/e2e/test_progress_never_silent.py turns it on where it is the subject.
os.environ.setdefault("SITEMAP_CRAWLER_PROGRESS_EVERY", "0")
FIXTURES_DIR = REPO / "fixtures" / "sites"
# Our own schemas, written from the protocol text, always; the official ones
# (../shared/schemas, beside a development checkout) as a cross-check when there.
OWN_SCHEMAS = REPO / "tests" / "schemas"
OFFICIAL_SCHEMAS = REPO.parent / "shared" / "schemas"
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
      "xhtml": "http://www.w3.org/1999/xhtml",
      "image": "http://www.google.com/schemas/sitemap-image/1.1"}


# Hypothesis times each example and fails one slower than 200 ms: a timing assertion
# on whatever else the machine runs (a URL-resolution example took 255 ms with the suite
# on six processes). Examples are judged by what they return, never by their speed.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two test processes a core. Many tests wait on a server or a CLI
    run; with one a core the machine idled a third of the time (2 cores: 600 s on two
    processes, 490 s on four; with the fork server, 355 s on four, 374 s on six).
    Since the suite has been CPU-bound (272 s on four, the two cores busy 95 % of
    the run), more processes only share the same CPU."""
    return 2 * (os.cpu_count() or 1)


# Each test process imports every test module, and pytest rewrites each one's asserts
# first: 5 to 6 s of CPU a process, unless the rewritten modules were cached as
# bytecode. A machine with PYTHONDONTWRITEBYTECODE set (CI's is) never caches them, so
# the suite writes them anyway (into __pycache__, which git ignores), and the first
# test process collects alone while the others wait, then read what it cached: 4 s
# of CPU each instead of 9.5 on a fresh clone.
sys.dont_write_bytecode = False


def _collected_flag(config: pytest.Config) -> tuple[Path, bool] | None:
    """The file the first test process writes once it has collected, and whether this
    process is that one; ``None`` outside a run on several processes."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    import tempfile

    flag = Path(tempfile.gettempdir()) / f"sitemap-crawler-collected-{workerinput['testrunuid']}"
    return flag, workerinput["workerid"] == "gw0"


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    found = _collected_flag(session.config)
    if found is not None and not found[1]:
        deadline = time.monotonic() + 60  # past it, collect anyway: only slower
        while not found[0].exists() and time.monotonic() < deadline:
            time.sleep(0.05)


def pytest_collection_finish(session: pytest.Session) -> None:
    found = _collected_flag(session.config)
    if found is not None and found[1]:
        found[0].touch()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest tests first (``@pytest.mark.slow(SECONDS)``, about what one takes
    beside the rest of the suite), the others in their order after them. The test
    processes take one test at a time (``--maxschedchunk 1``), so a 50 s test starts
    at once instead of wherever its file falls, and the suite's last minute is short
    tests spread over every process, not one long test and three idle ones."""
    def seconds(item: pytest.Item) -> float:
        mark = item.get_closest_marker("slow")
        return float(mark.args[0]) if mark is not None else 0.0

    items.sort(key=seconds, reverse=True)  # stable: the rest keep their order


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests talk to 127.0.0.1 only: never through a proxy from the environment."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "*")


# Options added to every "crawl" the CLI runs, set by the ``transport`` fixture.
_TRANSPORT_ARGS: list[str] = []


@pytest.fixture(params=["default", "http2"])
def transport(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a test's crawls on each transport: the default one (aiohttp's engine) and
    ``--http2``'s (httpx's own; HTTP/1.1 on plain http, as these servers are)."""
    _TRANSPORT_ARGS[:] = ["--http2"] if request.param == "http2" else []
    yield request.param
    _TRANSPORT_ARGS.clear()


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str


def run_cli(*args: str, timeout: float = 90, proxy_env: dict[str, str] | None = None,
            env_extra: dict[str, str] | None = None, default_duplicates: bool = False,
            default_soft_404: bool = False, **popen: object) -> CliRun:
    """The CLI in a subprocess; no proxy from the environment unless ``proxy_env`` names one.

    Crawls and audits keep duplicates (``--keep-duplicates``) unless
    ``default_duplicates``: fixture sites serve one file at many URLs (every query of
    a page, ``/slow/N``), distinct pages in their tests' eyes, where a real site's
    same bytes at two URLs are one page listed once (tests/e2e/test_duplicates.py).

    They ask no soft-404 probe (``--no-soft-404``) unless ``default_soft_404``: the
    probes are requests of their own, which the tests that count requests (politeness,
    scope, the first request) would meet; tests/e2e/test_soft_404.py has theirs."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(proxy_env if proxy_env is not None else {"NO_PROXY": "*"})
    env.update(env_extra or {})
    if args and args[0] == "crawl":
        args = (*args, *_TRANSPORT_ARGS)
    if args and args[0] in ("crawl", "audit") and not default_duplicates and not {
            "--drop-duplicates", "--keep-duplicates"} & set(args):
        args = (*args, "--keep-duplicates")
    if args and args[0] in ("crawl", "audit") and not default_soft_404 and not {
            "--soft-404", "--no-soft-404"} & set(args):
        args = (*args, "--no-soft-404")
    if args and args[0] == "audit" and not {"--check-external", "--no-check-external"} & set(
            args):
        # audits check external links by default: fixtures link to example.com, and the
        # tests never reach past 127.0.0.0/8 (the external checks have tests of their own)
        args = (*args, "--no-check-external")
    if popen or os.environ.get("SITEMAP_CRAWLER_TEST_SPAWN"):  # a fresh interpreter each
        done = subprocess.run(
            [sys.executable, "-m", "crawler", *args],
            capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO, **popen,  # type: ignore[arg-type]
        )
        return CliRun(done.returncode, done.stdout, done.stderr)
    return _FORK_SERVER.run(list(args), env, timeout)


class _ForkServer:
    """``python -m crawler ARGS`` forked from one process per test worker that imported
    the crawler once (tests/cli_forkserver.py): the same run, without 0.35 s of CPU
    for Python's imports each time. ``SITEMAP_CRAWLER_TEST_SPAWN=1`` starts a fresh
    interpreter for every run instead."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # one request in flight; replies read by one thread
        self._replies: dict[str, dict[str, Any]] = {}
        self._arrived = threading.Condition()
        self._count = 0

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
            self._process = subprocess.Popen(
                [sys.executable, str(REPO / "tests" / "cli_forkserver.py")], cwd=REPO,
                env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            threading.Thread(target=self._read, args=(self._process,), daemon=True).start()
        return self._process

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            reply = json.loads(line)
            with self._arrived:
                key = reply["id"] + ("/pid" if "pid" in reply else "/code")
                self._replies[key] = reply
                self._arrived.notify_all()

    def _wait(self, key: str, timeout: float | None) -> dict[str, Any] | None:
        with self._arrived:
            self._arrived.wait_for(lambda: key in self._replies, timeout)
            return self._replies.pop(key, None)

    def run(self, args: list[str], env: dict[str, str], timeout: float) -> CliRun:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="cli-run-") as folder:
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            with self._lock:
                self._count += 1
                ident = f"{os.getpid()}-{self._count}"
                process = self._start()
                assert process.stdin is not None
                process.stdin.write(json.dumps({
                    "id": ident, "args": args, "env": env, "cwd": str(REPO),
                    "stdout": str(out), "stderr": str(err)}).encode() + b"\n")
                process.stdin.flush()
                started = self._wait(ident + "/pid", 30)
            assert started is not None, "the fork server did not start the run"
            ended = self._wait(ident + "/code", timeout)
            if ended is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(started["pid"], signal.SIGKILL)
                self._wait(ident + "/code", 30)
                raise subprocess.TimeoutExpired([sys.executable, "-m", "crawler", *args],
                                                timeout)
            return CliRun(ended["code"], out.read_text(errors="replace"),
                          err.read_text(errors="replace"))


_FORK_SERVER = _ForkServer()


class Schemas:
    """Validates against our schema and, where present, the official one too."""

    def __init__(self, name: str) -> None:
        self.checks = [etree.XMLSchema(etree.parse(str(OWN_SCHEMAS / f"{name}.xsd")))]
        official = OFFICIAL_SCHEMAS / f"{name}.xsd"
        if official.exists():
            self.checks.append(etree.XMLSchema(etree.parse(str(official))))

    def assertValid(self, document: etree._Element) -> None:
        for check in self.checks:
            check.assertValid(document)


def _schema(name: str) -> Schemas:
    return Schemas(name)


def report_rows(report: Path, origin: str = "") -> dict[str, dict[str, Any]]:
    """The report's rows by URL (``origin`` stripped), checking first that no URL has
    two rows: a dict would silently keep only the last of them."""
    rows = json.loads(report.read_text())["urls"]
    counts = Counter(row["url"] for row in rows)
    duplicated = sorted(url for url, count in counts.items() if count > 1)
    assert not duplicated, f"URLs with more than one report row: {duplicated[:5]}"
    return {row["url"].removeprefix(origin): row for row in rows}


def read_xml(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


@dataclass
class Written:
    index_locs: list[str]
    urls: list[tuple[str, str | None]]  # (loc, lastmod), in file order across shards
    shard_counts: list[int]
    # per loc: its (hreflang, href) alternates and its image URLs, when it has any
    alternates: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    images: dict[str, list[str]] = field(default_factory=dict)
    changefreq: dict[str, str] = field(default_factory=dict)
    priority: dict[str, str] = field(default_factory=dict)

    @property
    def locs(self) -> list[str]:
        return [loc for loc, _ in self.urls]


def read_sitemaps(out: Path, base_url: str, *, extensions: bool = False,
                  videos: bool = False) -> Written:
    """Parse and XSD-validate the index and every shard it names (with ``extensions``,
    against the schema that checks hreflang and image elements too; with ``videos``,
    video elements as well). A News sitemap the index names is left to its own test."""
    index_schema = _schema("siteindex")
    urlset_schema = _schema("sitemap-video-set" if videos else
                            "sitemap-extensions" if extensions else "sitemap")
    index = etree.fromstring((out / "sitemap_index.xml").read_bytes())
    index_schema.assertValid(index)
    index_locs = [el.text for el in index.findall("sm:sitemap/sm:loc", NS)
                  if not el.text.endswith("/sitemap-news.xml")]
    urls: list[tuple[str, str | None]] = []
    counts: list[int] = []
    written = Written(index_locs, urls, counts)
    for loc in index_locs:
        assert loc.startswith(base_url), loc
        shard = etree.fromstring(read_xml(out / loc[len(base_url):]))
        urlset_schema.assertValid(shard)
        entries = shard.findall("sm:url", NS)
        counts.append(len(entries))
        for url in entries:
            lastmod = url.find("sm:lastmod", NS)
            when = lastmod.text if lastmod is not None else None
            where = url.find("sm:loc", NS).text
            urls.append((where, when))
            links = [(link.get("hreflang"), link.get("href"))
                     for link in url.findall("xhtml:link", NS)]
            if links:
                written.alternates[where] = links
            pictures = [image.text for image in url.findall("image:image/image:loc", NS)]
            if pictures:
                written.images[where] = pictures
            for name, table in (("changefreq", written.changefreq),
                                ("priority", written.priority)):
                element = url.find(f"sm:{name}", NS)
                if element is not None:
                    table[where] = element.text
    return written


def until_sigterm_is_caught(pid: int) -> None:
    """Wait until the process has its SIGTERM handler (the kernel's SigCgt mask): before
    it, the interpreter is still starting and the default action is the kernel's. A
    fixed delay from the fork raced the interpreter's start on a loaded machine (two
    busy loops beside the suite: exit -15, three times in five)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return  # already gone: the test's assertions say how
        caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
        if int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.002)
    raise AssertionError("the command never installed its SIGTERM handler")


def ctrl_c_as_in_a_terminal() -> None:
    """A child's SIGINT at its default, whatever this test run inherited (a suite
    started as a background job of a script has SIGINT ignored, and so would the
    crawls it starts): the Ctrl-C tests press a Ctrl-C a terminal would deliver."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when(args: list[str], ready: Callable[[], bool], *, settle: float = 0.0,
                   timeout: float = 30) -> str:
    """Run the CLI, press Ctrl-C once ``ready()`` holds (and ``settle`` seconds more),
    and check it ends as an interrupted run does (exit 130); its stderr."""
    process = subprocess.Popen([sys.executable, "-m", "crawler", *args], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=ctrl_c_as_in_a_terminal)
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.02)
    time.sleep(settle)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=10)
    assert process.returncode == 130, stderr
    return stderr


# How late a test server's stamp of a request may be on a loaded machine: the stamp is
# taken when the server's thread gets to the request (0.2 s seen with the suite on four
# processes beside two busy loops).
STAMP_LATENESS = 0.25


def assert_spaced(starts: list[float], interval: float, window: int | None = None) -> None:
    """Requests left at least ``interval`` apart, judged from a server's stamps.

    One late stamp lengthens its gap and shortens the next one, so single gaps say
    little on a loaded machine; a late stamp cannot shorten a whole span by more than
    its own lateness, though. So every ``window`` consecutive gaps (all of them by
    default) span at least that many intervals less one stamp's lateness: requests
    let through together, or two clients pacing apart, fall far short of it."""
    gaps = len(starts) - 1
    width = min(window or gaps, gaps)
    for first in range(gaps - width + 1):
        span = starts[first + width] - starts[first]
        assert span >= interval * width - STAMP_LATENESS, (
            f"requests {first}..{first + width} span {span:.3f} s, under {width} x "
            f"{interval} s", [round(b - a, 3) for a, b in pairwise(starts)])


def pytest_sessionfinish(session: pytest.Session) -> None:
    from browser import close_shared_browser

    close_shared_browser()  # the Chromium the page-looking tests share (browser.py)
    found = _collected_flag(session.config)
    if found is not None and found[1]:
        found[0].unlink(missing_ok=True)


PG_DOCS = Path("/usr/share/doc/postgresql-doc-15/html")  # Debian's postgresql-doc-15


def pg_docs() -> Path:
    """The PostgreSQL docs (1,170 pages, 1,675 links out): a real documentation site on
    loopback. CI installs them and requires them; elsewhere a test without them skips."""
    if not PG_DOCS.is_dir():
        if os.environ.get("SITEMAP_CRAWLER_REQUIRE_PG_DOCS"):
            pytest.fail("the PostgreSQL docs are required here (SITEMAP_CRAWLER_REQUIRE_PG_DOCS)"
                        " but not installed: apt-get install postgresql-doc-15")
        pytest.skip("no PostgreSQL docs: apt-get install postgresql-doc-15 (CI installs it)")
    return PG_DOCS
