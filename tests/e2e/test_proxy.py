"""Proxies from the environment, as wget, curl and pip use them, over real sockets."""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("transport")]


class _Forwarder(BaseHTTPRequestHandler):
    """A forward proxy for plain HTTP: absolute-form request in, origin's answer out."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[str]] = []  # replaced per server by the fixture

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append(self.path)
        target = urllib.parse.urlsplit(self.path)
        upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("proxy-connection", "connection", "host")}
        upstream.request("GET", target.path + (f"?{target.query}" if target.query else ""),
                         headers=headers)
        answer = upstream.getresponse()
        body = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        upstream.close()


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    seen: ClassVar[list[str]] = []  # replaced per server by the fixture
    handler = type("Handler", (_Forwarder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_http_proxy_from_the_environment_is_used(
        tmp_path: Path, proxy: tuple[str, list[str]]) -> None:
    proxy_url, seen = proxy
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--quiet",
                      proxy_env={"http_proxy": proxy_url})
        direct = list(site.paths())
    assert run.code == 0, run.stderr
    assert site.url + "/robots.txt" in seen and site.url + "/" in seen
    assert len(seen) == len(direct)  # every request went through the proxy
    assert site.url + "/" in read_sitemaps(tmp_path / "out", site.url + "/").locs


def test_no_proxy_sends_the_crawl_direct(tmp_path: Path, proxy: tuple[str, list[str]]) -> None:
    proxy_url, seen = proxy
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--quiet",
                      proxy_env={"http_proxy": proxy_url, "no_proxy": "127.0.0.1"})
    assert run.code == 0, run.stderr
    assert seen == []


def test_an_unreachable_proxy_is_named_in_the_error(tmp_path: Path) -> None:
    # Bound but not listening for the whole test: connections are refused, and no
    # other socket (the site's own server) can be given this port meanwhile.
    with socket.socket() as probe, RunningServer("basic") as site:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--retries", "0",
                      proxy_env={"http_proxy": dead})
        assert site.paths() == []
    assert run.code == 3
    assert "proxy-error" in run.stderr and len(run.stderr.strip().splitlines()) == 1
