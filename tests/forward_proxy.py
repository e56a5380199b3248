"""A forward proxy for plain HTTP on 127.0.0.1, for the tests that crawl through one."""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar


class Forwarder(BaseHTTPRequestHandler):
    """Absolute-form request in, the origin's answer out. With ``only_to`` every
    request goes to that port of 127.0.0.1 whatever host it names: a site on a
    public-looking name, reached without DNS or a packet leaving 127.0.0.0/8."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[str]] = []  # replaced per server by running_proxy
    only_to: ClassVar[int | None] = None

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append(self.path)
        target = urllib.parse.urlsplit(self.path)
        host, port = (("127.0.0.1", self.only_to) if self.only_to
                      else (target.hostname, target.port))
        upstream = http.client.HTTPConnection(host, port, timeout=10)
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


@contextmanager
def running_proxy(only_to: int | None = None) -> Iterator[tuple[str, list[str]]]:
    """The proxy's URL and the list of the requests it forwarded, while it runs."""
    seen: list[str] = []
    handler = type("Handler", (Forwarder,), {"seen": seen, "only_to": only_to})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
