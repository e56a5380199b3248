"""A kept-alive connection the server closed when the next request came: that request
is asked again once, on a new connection, on every transport (over a real socket)."""

from __future__ import annotations

import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import read_sitemaps, run_cli
from raw_server import RawServer

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("transport")]

PAGES = {"/": b'<!doctype html><title>Home</title><a href="/a.html">a</a><a href="/b.html">b</a>',
         "/a.html": b"<!doctype html><title>A</title>",
         "/b.html": b"<!doctype html><title>B</title>"}


class OneRequestAConnection(RawServer):
    """Answers the first request of each connection and keeps it open; closes it,
    unanswered, when a second request arrives on it (a server whose keep-alive
    timer ran out as the request travelled)."""

    def __init__(self) -> None:
        self.refused = 0
        super().__init__(self._one_request)

    def _one_request(self, conn: socket.socket) -> None:
        pending = b""
        answered = False
        while True:
            while b"\r\n\r\n" not in pending:
                data = conn.recv(65536)
                if not data:
                    return
                pending += data
            head, _, pending = pending.partition(b"\r\n\r\n")
            if answered:
                self.refused += 1
                return  # closed with no answer
            answered = True
            method, target = head.split(b" ")[:2]
            # a proxy is asked for the absolute form: as a proxy it answers the same
            path = urllib.parse.urlsplit(target.decode()).path or "/"
            body = PAGES.get(path, b"")
            status = b"200 OK" if body else b"404 Not Found"
            conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body)
                         + (b"" if method == b"HEAD" else body))


@pytest.fixture
def server() -> Iterator[OneRequestAConnection]:
    running = OneRequestAConnection()
    yield running
    running.close()


@pytest.mark.parametrize("through", ["direct", "proxy"])
def test_a_request_on_a_stale_kept_alive_connection_is_asked_again_on_a_new_one(
        tmp_path: Path, server: OneRequestAConnection, through: str) -> None:
    """Direct, on our client or (``--http2``) httpx's; through a proxy that does the
    same (aiohttp's engine speaks to proxies)."""
    url = f"http://127.0.0.1:{server.port}/"
    proxied = {"http_proxy": url} if through == "proxy" else None
    run = run_cli("crawl", "http://site.test/" if proxied else url, "--out",
                  str(tmp_path / "out"), "--concurrency", "1", "--retries", "0",
                  "--allow-private-network", proxy_env=proxied)
    url = "http://site.test/" if proxied else url
    assert run.code == 0, run.stderr
    assert sorted(read_sitemaps(tmp_path / "out", url).locs) == sorted(
        url.rstrip("/") + path for path in PAGES)
    assert server.refused >= 1  # the stale connection was met, and overcome
