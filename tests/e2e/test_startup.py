"""Start-up imports only what the command needs: ``--version`` nothing of the crawler,
``--help`` and a usage error no HTTP stack, no parser, no audit (issue #27). Checked
by what is imported, not by timing it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

HEAVY = ("httpx", "aiohttp", "httptools", "selectolax", "anyio", "tldextract", "crawler.engine",
         "crawler.http", "crawler.audit.findings", "crawler.page.read", "lxml", "rich")


def _imported(*args: str) -> tuple[int, set[str], str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "crawler", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    return done.returncode, modules, done.stdout


@pytest.mark.parametrize("args", [["--help"], ["crawl", "--help"], ["audit", "--help"]])
def test_help_imports_no_http_stack_no_parser_no_audit(args: list[str]) -> None:
    code, modules, out = _imported(*args)
    assert code == 0 and "Usage:" in out
    assert "crawler.cli.options" in modules  # the real option definitions
    assert not [name for name in modules if name.startswith(HEAVY)], sorted(
        name for name in modules if name.startswith(HEAVY))


def test_version_imports_nothing_but_the_version() -> None:
    code, modules, out = _imported("--version")
    assert code == 0 and out.startswith("sitemap-crawler, version ")
    assert {name for name in modules if name.startswith("crawler")} <= {
        "crawler", "crawler.__version__", "crawler.__main__", "crawler.cli", "crawler.cli.launch",
        "crawler.cli.invocation", "crawler.core", "crawler.core.credentials",
        "crawler.core.errors"}
    assert "click" not in modules


def test_a_crawl_still_imports_its_engine(tmp_path: object) -> None:
    code, modules, _out = _imported("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path),
                                    "--retries", "0", "--timeout", "1")
    assert code == 3  # nothing listens there
    assert "crawler.engine.coordinator" in modules and "crawler.cli.run" in modules
    # what a crawl never uses: httpx's own command line, the live-sitemap reader
    # without --compare-sitemap, the audit's findings and reports without --report
    assert "httpx._client" in modules and "crawler.http.h1_transport" in modules
    assert "aiohttp" not in modules and "yarl" not in modules  # its engine: for a proxy only
    # worker processes load their module when the crawl starts them; TOML with --config
    assert "crawler.engine.worker_pool" not in modules and "tomllib" not in modules
    assert "httpx._main" not in modules and "crawler.audit.live_sitemap" not in modules
    assert not {"crawler.audit.findings", "crawler.audit.report",
                "crawler.audit.report_html"} & modules
    # structured data, news and videos are read with an audit, --news or --videos only
    assert not {"crawler.page.structured_data", "crawler.page.news_video", "extruct"} & modules
    assert "crawler.audit.live_sitemap" not in modules  # the reader (its data is in store)
    # stderr is not a terminal here: no live display, so no rich (tests/e2e/test_progress.py
    # shows the terminal's)
    assert not [name for name in modules if name == "rich" or name.startswith("rich.")]


def test_plain_lines_show_control_characters_escaped(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    from crawler.cli.progress import PlainConsole

    PlainConsole().print("warning: \x1b[31mred\x07 and\ttab", markup=False)
    assert capsys.readouterr().err == "warning: \\x1b[31mred\\x07 and\ttab\n"


def test_httpx_command_line_still_runs_when_called() -> None:
    """The stand-in for httpx's CLI module imports the real one when called."""
    done = subprocess.run([sys.executable, "-c", (
        "import crawler.http, httpx, sys; sys.argv = ['httpx', '--help']; httpx.main()")],
        cwd=REPO, capture_output=True, text=True, timeout=60)
    assert "Usage: httpx" in done.stdout, done.stderr[-2000:]


def test_the_tls_store_is_back_after_aiohttp_is_imported() -> None:
    """aiohttp is imported with the certificate store pointed at nothing; the user's
    own SSL_CERT_FILE is there again afterwards, and an unset one stays unset."""
    code = ("import os, crawler.http.aiohttp_transport; "
            "print(os.environ.get('SSL_CERT_FILE'), os.environ.get('SSL_CERT_DIR'))")
    env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env={**env, "SSL_CERT_FILE": "/my/ca.pem"})
    assert done.stdout.split() == ["/my/ca.pem", "None"], done.stderr[-2000:]


# Run in a fresh interpreter: a one-page site on a server thread of the same
# process, and a note, as the transport writes the first request (robots.txt),
# of what the crawl has imported by then and whether the garbage collector runs.
_FIRST_REQUEST_PROBE = r"""
import gc, json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from crawler.http import h1_transport

seen = {}
send = h1_transport._Connection.send

def noted(connection, head, head_only):
    if not seen:
        seen.update(modules=sorted(sys.modules), collecting=gc.isenabled(),
                    request=head.split(b" ")[1].decode())
    return send(connection, head, head_only)

h1_transport._Connection.send = noted

class Site(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>one</title><a href=/>home</a>"
        self.send_response(200 if self.path == "/" else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.argv = ["sitemap-crawler", "crawl", f"http://127.0.0.1:{server.server_port}/",
            "--out", sys.argv[1], "--quiet"]
from crawler.cli.launch import main
try:
    main()
except SystemExit as stop:
    seen.update(code=stop.code, after=sorted(sys.modules), collecting_after=gc.isenabled(),
                frozen=gc.get_freeze_count())
print(json.dumps(seen))
"""


def test_the_first_request_goes_before_the_page_reader_loads(tmp_path: object) -> None:
    """anyio's machinery, the page reader (lexbor, the parse child's module), protego
    and SQLite load while robots.txt travels, not before it is asked for; the collector is off
    until then and on again, with start-up's objects frozen, by the end."""
    done = subprocess.run([sys.executable, "-c", _FIRST_REQUEST_PROBE, str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    seen = json.loads(done.stdout)
    assert seen["code"] == 0 and seen["request"] == "/robots.txt", done.stderr[-2000:]
    early = {"crawler.page.read", "selectolax.lexbor", "crawler.engine.parse_sandbox",
             "crawler.engine.page_fetcher", "protego", "sqlite3", "crawler.store.state",
             "anyio._backends._asyncio"}  # anyio's event-loop machinery: 20 ms
    assert {"crawler.engine.coordinator", "httpx", "anyio"} <= set(seen["modules"])
    assert not early & set(seen["modules"]), sorted(early & set(seen["modules"]))
    assert early - {"sqlite3", "crawler.store.state"} <= set(seen["after"])
    assert seen["collecting"] is False
    assert seen["collecting_after"] is True and seen["frozen"] > 10_000


def test_the_http_stack_is_imported_at_the_bottom_of_the_import_nest(tmp_path: object) -> None:
    """httpx is imported straight from the command's runner, not eight imports deep
    under the crawl's modules, where its own tree made CPython 3.11 map and unmap a
    frame chunk some 1,700 times (crawler.cli.run)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "crawler", "crawl",
                           "http://127.0.0.1:9/", "--out", str(tmp_path), "--retries", "0",
                           "--timeout", "1"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 3, done.stderr[-2000:]
    names = [line.rsplit("|", 1)[1].rstrip() for line in done.stderr.splitlines()
             if line.startswith("import time:") and "|" in line]
    # importtime indents a module two spaces for each import it is nested in
    levels = {name.strip(): (len(name) - len(name.lstrip()) - 1) // 2 for name in names}
    # crawler.http (imported by a function: level 0), httpx, then its client
    assert levels["crawler.http"] == 0 and levels["httpx._client"] <= 2, (
        levels["crawler.http"], levels["httpx._client"])
