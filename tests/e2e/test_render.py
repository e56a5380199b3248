"""``--render``: a JavaScript site crawled as a browser shows it, over a socket.

The ``spa`` fixture is plain HTML and JavaScript (no build step): links added at
DOMContentLoaded, after a 500 ms timer and after a ``fetch()`` of JSON; a
pushState router and a hash router; pages whose JavaScript adds a noindex,
removes one, moves the canonical, throws, or never settles; a script robots.txt
disallows; a third-party script and image (``localhost`` is another origin than
``127.0.0.1``, and the same server, so its log shows what was never asked for).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import browser_page, chromium_path
from conftest import REPO, ctrl_c_as_in_a_terminal, read_sitemaps, run_cli
from forward_proxy import running_proxy
from siteserver import RunningServer, SiteServer

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

pytestmark = pytest.mark.timeout(180)

APP_PAGES = ["/", "/app/", "/app/about", "/app/contact", "/blocked-script.html",
             "/endless.html", "/fetched.html", "/hash.html", "/lost-link.html",
             "/third-party.html", "/throws.html", "/timer.html"]
SERVER_RENDERED = ["/from-cdn.html", "/from-fetch.html", "/from-timer.html", "/static.html"]
NOT_LISTED = {"/canonical-js.html": "canonical-elsewhere", "/noindex-js.html": "noindex",
              "/noindex-raw.html": "noindex"}
NEVER_REQUESTED = ["/cdn/picture.png", "/private/app.js", "/clicked.html",
                   "/from-private.html"]


def _render_args(mode: str) -> list[str]:
    # endless.html is read at the deadline, so it is short; not so short that a page
    # loaded in a browser just started on a busy machine misses it
    return ["--render", mode, "--render-timeout", "4", "--browser", chromium_path()]


def _rendering(rows: dict[str, dict]) -> dict[str, tuple]:
    """What a failed assertion should show of each page's rendering."""
    return {path: (row.get("rendered"), row.get("render_reason"), row.get("raw_links"),
                   row.get("rendered_links")) for path, row in rows.items()}


def _crawl(tmp_path: Path, *options: str, site_name: str = "spa",
           env: dict[str, str] | None = None) -> tuple[SiteServer, object, list[str], dict]:
    out, report = tmp_path / "out", tmp_path / "crawl.json"
    with RunningServer(site_name) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      *options, timeout=150, env_extra=env)
    assert run.code == 0, run.stderr
    locs = [loc.removeprefix(site.url) for loc in read_sitemaps(out, site.url + "/").locs]
    rows = {row["url"].removeprefix(site.url): row
            for row in json.loads(report.read_text())["urls"]}
    return site, run, sorted(locs), rows


@pytest.mark.slow(18)
def test_rendering_lists_what_a_browser_shows(tmp_path: Path) -> None:
    """The browser restarted every 10 pages: crawler.render.renderer's bound on memory
    must change nothing found. (``--render auto`` on two workers, a tab a page: the
    audit test below, on the same site.)"""
    site, _run, locs, rows = _crawl(tmp_path, *_render_args("always"), env={
        "SITEMAP_CRAWLER_PAGES_PER_BROWSER": "10"})
    assert locs == sorted(APP_PAGES + SERVER_RENDERED), _rendering(rows)
    _asked_as_a_browser_asks(site, rows)
    assert all(rows[path]["rendered"] for path in APP_PAGES + SERVER_RENDERED)
    assert {rows[path]["render_reason"] for path in APP_PAGES} == {"--render always"}


def _asked_as_a_browser_asks(site: SiteServer, rows: dict[str, dict]) -> None:
    """What a rendered crawl of the spa site may have asked of its server, and listed."""
    for path, reason in NOT_LISTED.items():
        assert rows[path]["reason"] == reason, path
    # every document requested once, the bundles once for the whole crawl
    gets = [hit.path for hit in site.log if hit.method == "GET"]
    assert len(gets) == len(set(gets)), sorted(gets)
    assert "/router.js" in gets and "/app.js" in gets and "/api/links.json" in gets
    # robots-disallowed and image requests never reach the server; nor an onclick target
    for path in NEVER_REQUESTED:
        assert path not in site.paths(), path
    widget = [hit for hit in site.log if hit.path == "/cdn/widget.js"]
    assert [hit.headers["host"].split(":")[0] for hit in widget] == ["localhost"]
    # the hash router's views are one page
    assert not [url for url in rows if "#" in url]


def test_without_rendering_the_shell_is_all_there_is(tmp_path: Path) -> None:
    site, _run, locs, rows = _crawl(tmp_path)
    assert locs == ["/"]
    assert "rendered" not in rows["/"]
    assert "/app.js" not in site.paths()


def test_a_crawl_without_render_never_imports_playwright(tmp_path: Path) -> None:
    with RunningServer("spa") as site:
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "crawler", "crawl",
                               site.url + "/", "--out", str(tmp_path / "out")],
                              capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    assert "crawler.engine.coordinator" in modules  # it did crawl
    assert not [name for name in modules if name.startswith(("playwright",
                                                             "crawler.render.renderer"))]


@pytest.mark.slow(16)
def test_audit_says_what_javascript_changed_in_json_csv_and_html(tmp_path: Path) -> None:
    """``--render auto`` on two workers with a browser each, every tab closed after its
    page: the crawl split between processes, and the tabs' bound on memory, must
    change nothing found; and the audit says what JavaScript changed."""
    json_report, csv_report, html_report = (tmp_path / "a.json", tmp_path / "a.csv",
                                            tmp_path / "a.html")
    with RunningServer("spa") as site:
        run = run_cli("audit", site.url + "/", "--report", str(json_report), "--report",
                      str(csv_report), "--report", str(html_report), *_render_args("auto"),
                      "--workers", "2", timeout=150,
                      env_extra={"SITEMAP_CRAWLER_PAGES_PER_TAB": "1"})
    assert run.code == 0, run.stderr
    u = site.url
    document = json.loads(json_report.read_text())
    by_path = {row["url"].removeprefix(u): row for row in document["urls"]}
    listed = sorted(path for path, row in by_path.items() if row["listed"])
    assert listed == sorted(APP_PAGES + SERVER_RENDERED), _rendering(by_path)
    _asked_as_a_browser_asks(site, by_path)
    assert all(by_path[path]["rendered"] for path in APP_PAGES), _rendering(by_path)
    assert not any(by_path[path]["rendered"] for path in SERVER_RENDERED)
    assert by_path["/"]["render_reason"] == "empty mount element #root"
    assert by_path["/static.html"]["render_reason"].startswith("no sign of client-side")
    found = document["findings"]
    links = {item["url"].removeprefix(u): item for item in found["rendered-links"]["items"]}
    assert {"/timer.html", "/fetched.html"} <= set(links), found["render-errors"]["items"]
    assert links["/timer.html"]["first_added"] == [u + "/from-timer.html"]
    assert links["/fetched.html"]["first_added"] == [u + "/from-fetch.html"]
    assert links["/app/about"]["first_added"] == [u + "/app/contact"]
    assert links["/third-party.html"]["first_added"] == [u + "/from-cdn.html"]
    assert links["/"]["added"] == 13 and links["/"]["raw_links"] == 0
    lost = links["/lost-link.html"]
    assert (lost["lost"], lost["first_lost"], lost["added"]) == (1, [u + "/from-fetch.html"], 0)
    changes = {(item["url"].removeprefix(u), item["what"]): (item["raw"], item["rendered"])
               for item in found["render-changes"]["items"]}
    assert changes[("/noindex-js.html", "noindex")] == ("index", "noindex")
    assert changes[("/noindex-raw.html", "noindex-only-in-raw-html")] == ("noindex", "index")
    assert changes[("/canonical-js.html", "canonical")] == (u + "/canonical-js.html",
                                                             u + "/static.html")
    assert changes[("/app/about", "title")] == ("Router", "About")
    errors = [(item["url"].removeprefix(u), item["error"])
              for item in found["render-errors"]["items"]]
    assert errors[0] == ("/blocked-script.html", "robots-blocked:script")  # first
    assert ("/endless.html", "timeout") in errors
    assert ("/throws.html", "js-error") in errors
    thrown = [item for item in found["render-errors"]["items"] if item["error"] == "js-error"]
    assert "boom: this page throws" in thrown[0]["detail"]
    render = document["render"]
    assert render["pages_rendered"] == len(APP_PAGES) + len(NOT_LISTED)
    assert render["third_party_origins"] == [u.replace("127.0.0.1", "localhost")]
    assert render["robots_blocked_requests"] == 1
    rows = {row["url"].removeprefix(u): row for row in csv.DictReader(csv_report.open())}
    assert rows["/timer.html"]["rendered"] == "yes"
    assert rows["/timer.html"]["raw_links"] == "0" and rows["/timer.html"]["rendered_links"] == "1"
    assert rows["/static.html"]["rendered"] == "no"
    assert "render-errors" in rows["/endless.html"]["findings"]
    _look_at(html_report)


def _look_at(report: Path) -> None:
    """The HTML report's rendering sections as a person sees them."""
    shots = REPO / ".pytest_cache" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with browser_page() as page:
        page.goto(report.as_uri())
        assert page.locator('[data-finding="render-errors"]').inner_text() == "3"
        assert "15 of 19 pages rendered" in page.locator("#rendering h2").inner_text()
        assert page.locator("#render-changes tbody tr").count() >= 4
        assert page.locator("#url-table th[data-key=rendered]").count() == 1
        page.locator("#rendering").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "audit-render.png"), full_page=False)


def test_no_browser_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with RunningServer("spa") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--render",
                      "auto", "--browser", str(tmp_path / "no-chromium"))
        found_none = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                             "--render", "always",
                             env_extra={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "is not an executable file" in run.stderr and "playwright install chromium" in (
        run.stderr)
    assert found_none.code == 2, found_none.stderr
    assert "found no Chromium" in found_none.stderr
    assert len(found_none.stderr.strip().splitlines()) == 1
    assert site.log == []  # nothing requested


def test_a_browser_that_will_not_start_is_one_line_and_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    previous = tmp_path / "out"
    previous.mkdir()
    (previous / "sitemap_index.xml").write_text("kept")
    with RunningServer("spa") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(previous), "--render", "always",
                      "--browser", str(broken))
    assert run.code == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "the browser did not start" in run.stderr and str(broken) in run.stderr
    assert (previous / "sitemap_index.xml").read_text() == "kept"


@pytest.mark.slow(11)
def test_a_304_keeps_its_rendered_links_and_is_not_rendered_again(tmp_path: Path) -> None:
    state, out = tmp_path / "state.db", tmp_path / "out"
    with RunningServer("spa", conditional=True) as site:
        args = ["crawl", site.url + "/", "--out", str(out), "--state", str(state),
                *_render_args("auto")]
        first = run_cli(*args, timeout=150)
        assert first.code == 0, first.stderr
        before = sorted(read_sitemaps(out, site.url + "/").locs)
        site.log.clear()
        second = run_cli(*args, "--allow-shrink", timeout=150)
        assert second.code == 0, second.stderr
    assert sorted(read_sitemaps(out, site.url + "/").locs) == before
    # every page answered 304: no script, API call or third-party request was made
    assert {hit.path for hit in site.log} & {"/app.js", "/router.js", "/api/links.json",
                                             "/cdn/widget.js"} == set()
    assert "18 not modified" in second.stderr or "not modified" in second.stderr


def _profiles(pids: set[int]) -> set[bytes]:
    """The ``--user-data-dir`` each of these Chromium processes names: every process of
    one browser names its own, so one found orphaned later is told apart from the
    browsers other tests (in this process or beside it) have running."""
    found = set()
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        found |= {arg for arg in command.split(b"\0") if arg.startswith(b"--user-data-dir=")}
    return found


def _left_of(pids: set[int], profiles: set[bytes]) -> list[bytes]:
    """The command lines of processes still running (not zombies) that are one of
    ``pids`` or name one of ``profiles``."""
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and (int(entry.name) in pids or
                             any(profile in command for profile in profiles)):
            left.append(command[:80])
    return left


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "kill-9"])
def test_no_browser_outlives_the_crawl(tmp_path: Path, how: str) -> None:
    """Whatever stops the crawl, its driver and every process of its browser end too
    (named while it runs: by ancestry, and by the browser's profile folder for those
    that leave the tree; Chromium's crash reporters name neither, and are its own)."""
    with RunningServer("spa") as site:
        process = subprocess.Popen(
            [sys.executable, "-m", "crawler", "crawl", site.url + "/endless.html", "--out",
             str(tmp_path / "out"), "--render", "always", "--render-timeout", "60",
             "--browser", chromium_path()],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=ctrl_c_as_in_a_terminal)
        deadline = time.monotonic() + 60
        while not _renderers_under(process.pid):  # a page is rendering
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.25)
        time.sleep(1.5)
        ours = set(_processes_under(process.pid, b"chrom")) | set(
            _processes_under(process.pid, b"run-driver"))
        profiles = _profiles(ours)
        assert ours and profiles, "the crawl's browser was never seen"
        process.send_signal({"ctrl-c": signal.SIGINT, "sigterm": signal.SIGTERM,
                             "kill-9": signal.SIGKILL}[how])
        process.communicate(timeout=30)
    assert process.returncode == {"ctrl-c": 130, "sigterm": 130, "kill-9": -9}[how]
    deadline = time.monotonic() + 15
    while (left := _left_of(ours, profiles)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, left


def _renderers_under(pid: int) -> list[int]:
    """The Chromium renderer processes the crawl ``pid`` started (any depth)."""
    return list(_processes_under(pid, b"--type=renderer"))


def _processes_under(pid: int, marker: bytes) -> dict[int, list[str]]:
    """The processes descended from ``pid`` whose command line has ``marker``, with it."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker not in command:
            continue
        ancestor = int(entry.name)
        while ancestor > 1:
            if ancestor == pid:
                found[int(entry.name)] = command.decode(errors="replace").split("\0")
                break
            try:
                fields = Path(f"/proc/{ancestor}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                break
            ancestor = int(fields[1])
    return found


@pytest.mark.slow(9)
@pytest.mark.parametrize("crashes", [1, 2])
def test_a_crashed_browser_is_restarted_and_the_page_tried_once_more(
        tmp_path: Path, crashes: int) -> None:
    """The renderer killed while it renders a page: the page is rendered again, alone;
    killed again, the page is read from its raw HTML, with the reason."""
    report = tmp_path / "r.json"
    with RunningServer("spa") as site:
        process = subprocess.Popen(
            [sys.executable, "-m", "crawler", "audit", site.url + "/endless.html",
             "--report", str(report), "--render", "always", "--render-timeout", "4",
             "--browser", chromium_path(), "--max-pages", "1"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        killed = 0
        deadline = time.monotonic() + 60
        while killed < crashes and time.monotonic() < deadline:
            victims = _renderers_under(process.pid)
            if victims:
                _until_no_more_start(process.pid, deadline)  # the page's among them
                for pid in _renderers_under(process.pid):
                    os.kill(pid, signal.SIGKILL)
                killed += 1
                while _renderers_under(process.pid) and time.monotonic() < deadline:
                    time.sleep(0.05)  # the old one gone: the next one is the new browser's
            time.sleep(0.05)
        _out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    row = json.loads(report.read_text())["urls"][0]
    errors = json.loads(report.read_text())["findings"]["render-errors"]["items"]
    kinds = [item["error"] for item in errors]
    if crashes == 1:
        assert row["rendered"] is True and "crash" in kinds and "timeout" in kinds
    else:
        assert row["rendered"] is False
        assert "not rendered: crashed twice" in row["render_reason"]
        assert "crash" in kinds



def _until_no_more_start(pid: int, deadline: float, still: float = 1.0) -> None:
    """Wait until no renderer has started under ``pid`` for ``still`` seconds. A crawl's
    first page brings three, one after another (0.15 s apart here); on a loaded
    machine its page's came later than the half second after the first that the test
    once waited: it killed the others, and the page rendered on, never crashed."""
    seen: set[int] = set()
    since = time.monotonic()
    while time.monotonic() < deadline:
        now = set(_renderers_under(pid))
        if now - seen:
            since = time.monotonic()
        seen |= now
        if now and time.monotonic() - since >= still:
            return
        time.sleep(0.05)


@pytest.mark.slow(6)
def test_a_plain_http_site_is_rendered_over_plain_http(tmp_path: Path) -> None:
    # Chromium upgrades http:// navigations of public names on port 80 to https://
    # unless told not to (loopback and other ports are exempt, so the other tests
    # cannot see it): each page then began with a navigation of the browser's own,
    # aborted (it is not the crawl's document), and reported as a render error.
    start = "http://spa.sitemap-crawler-example.com/"
    with RunningServer("spa") as site, running_proxy(only_to=site.port) as (proxy, _seen):
        run = run_cli("crawl", start, "--out", str(tmp_path / "out"), "--report",
                      str(tmp_path / "crawl.json"), *_render_args("always"),
                      "--max-pages", "3", timeout=120, proxy_env={"http_proxy": proxy})
    assert run.code == 0, run.stderr
    rows = {row["url"]: row for row in json.loads((tmp_path / "crawl.json").read_text())["urls"]}
    assert rows[start]["rendered"] is True
    assert rows[start]["rendered_links"] > 0
    # no navigation of its own: the report would name it among the render errors
    assert "https://" not in (tmp_path / "crawl.json").read_text()


def test_our_disabled_features_keep_the_ones_playwright_disables() -> None:
    # Chromium reads only the last --disable-features: ours must carry Playwright's
    # own, whatever the installed Playwright's are (read from the browser's argv)
    from playwright.sync_api import sync_playwright

    from crawler.render.flags import FLAGS
    # a browser this process launched for an earlier test may not have exited yet
    earlier = _processes_under(os.getpid(), b"--remote-debugging-pipe")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=FLAGS)
        try:
            # one command line, however many processes show it: a process the browser
            # has forked and not yet turned into a zygote or a crash reporter (a
            # moment that lasts on a loaded machine) still shows the browser's own
            argvs = {tuple(argv) for pid, argv in _processes_under(
                os.getpid(), b"--remote-debugging-pipe").items() if pid not in earlier}
        finally:
            browser.close()
    assert len(argvs) == 1, argvs
    argv = next(iter(argvs))
    lists = [arg.removeprefix("--disable-features=").split(",") for arg in argv
             if arg.startswith("--disable-features=")]
    assert len(lists) == 2  # Playwright's, then ours
    playwrights, ours = lists
    assert set(playwrights) - {"msForceBrowserSignIn",
                               "msEdgeUpdateLaunchServicesPreferredVersion"} <= set(ours)


FETCHING = ('<!doctype html><div id="app"></div><script>fetch("/links.json")'
            '.then((answer) => answer.json()).then((paths) => { for (const path of paths) {'
            ' const link = document.createElement("a"); link.href = path;'
            ' document.getElementById("app").appendChild(link); } });</script>')


@contextlib.contextmanager
def _tracked_page(answer: Callable[[Route], None]) -> Iterator[Page]:
    """A page that ``answer`` serves, in headless Chromium with the settle tracker."""
    from playwright.sync_api import sync_playwright

    from crawler.render.flags import FLAGS
    from crawler.render.settle import TRACKER

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=FLAGS)
        try:
            page = browser.new_page()
            page.add_init_script(TRACKER)
            page.route("**/*", answer)
            page.goto("http://127.0.0.1:9/page.html", wait_until="domcontentloaded")
            yield page
        finally:
            browser.close()


@pytest.mark.slow(6)
def test_the_settle_wait_waits_for_a_script_request_the_crawler_has_not_heard_of() -> None:
    # The crawler counts a page's requests as the browser passes them on; on a busy
    # machine a fetch() can wait longer than the quiet period for that, and the page
    # was read without what its answer adds. The page counts its own requests too.
    from crawler.render.settle import QUIET, WAIT_CALM
    held: list[Route] = []

    def answer(route: Route) -> None:
        if route.request.url.endswith("/links.json"):
            held.append(route)  # not passed on yet, as far as the crawler knows
        else:
            route.fulfill(body=FETCHING, content_type="text/html")

    with _tracked_page(answer) as page:
        _since, waiting, html = page.evaluate(WAIT_CALM, [QUIET * 1000, 500, 0])
        assert (waiting, html) == (1, None)  # not calm: the fetch is pending
        assert len(held) == 1
        held[0].fulfill(body='["/found.html"]', content_type="application/json")
        _since, waiting, html = page.evaluate(WAIT_CALM, [QUIET * 1000, 5000, 0])
    assert waiting == 0 and '<a href="/found.html">' in html


READING = ('<!doctype html><div id="app"></div><script>fetch("/links.json")'
           '.then((answer) => { const body = answer.json();'
           ' window.pendingWhileReading = window.__sitemapCrawler.pending; return body; })'
           '.then((paths) => { for (const path of paths) {'
           ' const link = document.createElement("a"); link.href = path;'
           ' document.getElementById("app").appendChild(link); } });</script>')


def test_the_settle_wait_waits_for_a_body_the_script_is_still_reading() -> None:
    # fetch() settles when the answer's head arrives; its body reaches the page's
    # process later, over another channel, and on a busy machine later than the
    # quiet period: the page was read without what the body adds (seen once in CI,
    # under load, on fixtures/sites/spa/fetched.html). Reading a body counts too.
    from crawler.render.settle import QUIET, WAIT_CALM

    def answer(route: Route) -> None:
        if route.request.url.endswith("/links.json"):
            route.fulfill(body='["/found.html"]', content_type="application/json")
        else:
            route.fulfill(body=READING, content_type="text/html")

    with _tracked_page(answer) as page:
        _since, waiting, html = page.evaluate(WAIT_CALM, [QUIET * 1000, 5000, 0])
        reading = page.evaluate("window.pendingWhileReading")
    assert reading == 1  # the body being read kept the page from counting as calm
    assert waiting == 0 and '<a href="/found.html">' in html
