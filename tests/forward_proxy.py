"""A forward proxy for plain HTTP on 127.0.0.1, for the tests that crawl through one."""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

from siteserver import SHUTDOWN_POLL


class Forwarder(BaseHTTPRequestHandler):
    """Absolute-form request in, the origin's answer out. With ``only_to`` every
    request goes to that port of 127.0.0.1 whatever host it names: a site on a
    public-looking name, reached without DNS or a packet leaving 127.0.0.0/8."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as the site server: no delayed-ACK stall a request
    seen: ClassVar[list[str]] = []  # replaced per server by running_proxy
    only_to: ClassVar[int | None] = None
    # host name -> port of 127.0.0.1: sites on public-looking names; other hosts are
    # asked where they are (what a real proxy does, here only ever on 127.0.0.0/8)
    names: ClassVar[dict[str, int]] = {}

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._forward("GET")

    def do_HEAD(self) -> None:
        self._forward("HEAD")

    def _forward(self, method: str) -> None:
        self.seen.append(self.path)
        target = urllib.parse.urlsplit(self.path)
        if self.only_to:
            host, port = "127.0.0.1", self.only_to
        elif target.hostname in self.names:
            host, port = "127.0.0.1", self.names[target.hostname]
        else:
            host, port = target.hostname, target.port
        assert host is not None and (host in ("127.0.0.1", "::1", "localhost")), host
        upstream = http.client.HTTPConnection(host, port, timeout=10)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("proxy-connection", "connection", "host")}
        try:
            upstream.request(method, target.path + (f"?{target.query}" if target.query
                                                    else ""), headers=headers)
            answer = upstream.getresponse()
        except OSError:
            self.send_error(502)
            return
        body = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(body)
        upstream.close()


@contextmanager
def running_proxy(only_to: int | None = None, names: dict[str, int] | None = None
                  ) -> Iterator[tuple[str, list[str]]]:
    """The proxy's URL and the list of the requests it forwarded, while it runs."""
    seen: list[str] = []
    handler = type("Handler", (Forwarder,), {"seen": seen, "only_to": only_to,
                                             "names": names or {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
