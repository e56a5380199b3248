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
import time
from pathlib import Path

import pytest
from browser import chromium_path
from conftest import run_cli
from forward_proxy import running_proxy
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(180)

SECRET = "TOPSECRET-4242"


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


def test_a_rendered_pages_scripts_reach_no_private_address(tmp_path: Path) -> None:
    report = tmp_path / "audit.json"
    with RunningServer(_secret(tmp_path)) as secret:
        with RunningServer(_site(tmp_path, secret.port)) as site, \
                running_proxy(names={"www.public.test": site.port}) as (proxy, _seen):
            run = run_cli("audit", "http://www.public.test/", "--report", str(report),
                          "--render", "always", "--render-timeout", "4",
                          "--browser", chromium_path(), "--compare-sitemap", "off",
                          proxy_env={"http_proxy": proxy}, timeout=150)
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
                      timeout=150)
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
