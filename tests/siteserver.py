"""A real HTTP/1.1 server on 127.0.0.1:0 serving a fixture site, for end-to-end tests.

A site is a folder under ``fixtures/sites/``. Files are served as they are
(``{{PORT}}`` in a body becomes the server's port, so a page can link to
``localhost`` on the same port; ``{{HOURS_AGO:N}}`` a date-time N hours ago;
``{{PATH}}`` in a route's body, the path asked for).
An optional ``_routes.json`` maps a path (with its query, if any) to what to
answer instead or in addition::

    {"/old": {"status": 301, "headers": {"Location": "/new"}},
     "/page.html": {"headers": {"Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"}},
     "/slow": {"behaviour": "drip", "delay": 0.5},
     "/s.xml.gz": {"gzip": true},
     "!missing": {"body": "<title>Sorry</title>…"}}

``!missing`` is what a path with no file and no route of its own answers (a
soft-404 site's "not found" page, served with 200; a catch-all redirect);
``!missing /dir/`` what such a path under /dir/ answers (a section with a "not
found" template of its own).

Every request is logged (method, path, headers, time) so tests can assert
what was *never* requested. After a crawl, ``overlay`` can point at the
output directory so the written sitemaps are served back from the same origin.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import mimetypes
import re
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sites"
# How often a test server's loop looks for its shutdown: ``shutdown()`` waits for that
# look, and socketserver's default (0.5 s) made every test with a server wait 0.25 s on
# average at its end (about a thousand of them: a minute of each test process's time).
SHUTDOWN_POLL = 0.02
CONTENT_TYPES = {".html": "text/html", ".htm": "text/html", ".txt": "text/plain",
                 ".xhtml": "application/xhtml+xml", ".pdf": "application/pdf",
                 ".xml": "application/xml", ".gz": "application/gzip"}


@dataclass
class Hit:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    at: float
    client_port: int = 0


@dataclass
class SiteServer:
    root: Path
    routes: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: list[Hit] = field(default_factory=list)
    overlay: Path | None = None
    port: int = 0
    conditional: bool = False  # send ETags and answer If-None-Match with 304
    scheme: str = "http"
    # header (lower case) -> text every request's value must contain, else 401 (a login wall)
    required: dict[str, str] = field(default_factory=dict)
    open_connections: int = 0
    max_open_connections: int = 0
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def paths(self) -> list[str]:
        return [hit.path for hit in self.log]

    def count(self, path: str) -> int:
        return sum(1 for hit in self.log if hit.path == path)


def route_for(site: SiteServer, target: str) -> dict[str, Any]:
    """The route for a request target: exact, then without its query, then the
    prefix routes (keys ending in ``*`` match every path under that prefix)."""
    route = site.routes.get(target) or site.routes.get(target.split("?")[0])
    if route:
        return route
    for key, candidate in site.routes.items():
        if key.endswith("*") and target.startswith(key[:-1]):
            return candidate
    return {}


def resolve(site: SiteServer, target: str, route: dict[str, Any]
            ) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body for a plain (not hostile) route or file."""
    headers = {name: value.replace("{{PORT}}", str(site.port)) if isinstance(value, str)
               else value for name, value in route.get("headers", {}).items()}
    if "body" in route:
        text = route["body"].replace("{{PATH}}", html.escape(target.split("?")[0]))
        body = text.encode(route.get("encoding", "utf-8"))
        return route.get("status", 200), headers, _ports(site, body)
    file = _file(site, urllib.parse.unquote(target.split("?")[0]))
    missing = _missing_route(site, target) if file is None and not route else None
    if missing is not None:
        return resolve(site, target, missing)
    if file is None:
        if "status" in route:
            return route["status"], headers, b""
        return 404, {"Content-Type": "text/html"}, b"<h1>not found</h1>"
    headers.setdefault("Content-Type", CONTENT_TYPES.get(
        file.suffix, mimetypes.guess_type(file.name)[0] or "application/octet-stream"))
    body = _ports(site, file.read_bytes())
    if route.get("gzip"):  # a .gz file made at serve time, so it can name the port
        body = gzip.compress(body)
    return route.get("status", 200), headers, body


def _file(site: SiteServer, path: str) -> Path | None:
    for base in (site.overlay, site.root):
        if base is None:
            continue
        candidate = (base / path.lstrip("/")).resolve()
        if candidate.is_dir():
            candidate = candidate / "index.html"
        if candidate.is_file() and base.resolve() in candidate.parents:
            return candidate
    return None


_HOURS_AGO = re.compile(rb"\{\{HOURS_AGO:(\d+)\}\}")


def _missing_route(site: SiteServer, target: str) -> dict[str, Any] | None:
    """What a path with no file answers: ``!missing /dir/`` for paths under /dir/ (the
    longest such prefix), else ``!missing``."""
    path = target.split("?")[0]
    prefixes = [key.removeprefix("!missing ") for key in site.routes
                if key.startswith("!missing /") and path.startswith(key[len("!missing "):])]
    if prefixes:
        return site.routes["!missing " + max(prefixes, key=len)]
    return site.routes.get("!missing")


def _ports(site: SiteServer, body: bytes) -> bytes:
    """``{{PORT}}``: the server's port; ``{{HOURS_AGO:N}}``: that moment as an ISO 8601
    date-time (UTC), so a page can be "published yesterday" whenever the test runs."""
    body = body.replace(b"{{PORT}}", str(site.port).encode())
    now = datetime.now(UTC).replace(microsecond=0)
    return _HOURS_AGO.sub(lambda match: (now - timedelta(hours=int(match[1]))).isoformat()
                          .encode(), body)


def load_site(site: str | Path, routes: dict[str, dict[str, Any]] | None = None) -> SiteServer:
    """A fixture site and its routes (``_routes.json`` plus ``routes``), not yet served."""
    root = Path(site) if isinstance(site, Path) else FIXTURES / site
    table: dict[str, dict[str, Any]] = {}
    routes_file = root / "_routes.json"
    if routes_file.exists():
        table.update(json.loads(routes_file.read_text()))
    table.update(routes or {})
    return SiteServer(root=root, routes=table)


def _handler(site: SiteServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body leave in two writes: with Nagle's algorithm the second waited
        # for the client's delayed ACK, 40 ms a request on a kept-alive connection, so a
        # 300-page chain took 14 s to crawl instead of 2 (a real server sets this too)
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            with site.lock:
                site.connections += 1
                site.open_connections += 1
                site.max_open_connections = max(site.max_open_connections,
                                                site.open_connections)

        def finish(self) -> None:
            with site.lock:
                site.open_connections -= 1
            super().finish()

        def do_GET(self) -> None:
            site.log.append(Hit("GET", self.path, {k.lower(): v for k, v in self.headers.items()},
                                time.monotonic(),
                                self.client_address[1]))
            if any(value not in (self.headers.get(name) or "")
                   for name, value in site.required.items()):
                self._send(401, {"WWW-Authenticate": 'Basic realm="staging"',
                                 "Content-Type": "text/html"}, b"<h1>login</h1>")
                return
            route = route_for(site, self.path)
            if route.get("delay") and route.get("behaviour") != "drip":
                time.sleep(route["delay"])
            behaviour = route.get("behaviour")
            if behaviour:
                getattr(self, f"_{behaviour}")(route)
                return
            status, headers, body = resolve(site, self.path, route)
            if status == 200 and site.conditional:
                etag = '"' + hashlib.blake2b(body, digest_size=8).hexdigest() + '"'
                headers["ETag"] = etag
                if self.headers.get("If-None-Match") == etag:
                    self._send(304, {"ETag": etag}, b"")
                    return
            self._send(status, headers, body)

        def do_HEAD(self) -> None:
            """The GET's status and headers without its body; a route with
            ``"head": 405`` refuses HEAD as some servers do."""
            site.log.append(Hit("HEAD", self.path, {k.lower(): v for k, v in self.headers.items()},
                                time.monotonic(), self.client_address[1]))
            route = route_for(site, self.path)
            if route.get("head"):
                self._send(route["head"], {"Allow": "GET"}, b"", body_too=False)
                return
            if route.get("delay"):
                time.sleep(route["delay"])
            if route.get("behaviour") == "sequence":  # the n-th request, whatever its method
                n = sum(1 for hit in site.log if hit.path == self.path) - 1
                route = route["steps"][min(n, len(route["steps"]) - 1)]
            status, headers, body = resolve(site, self.path, route)
            self._send(status, headers, body, body_too=False)

        def _send(self, status: int, headers: dict[str, str], body: bytes,
                  *, body_too: bool = True) -> None:
            self.send_response(status)
            for name, value in headers.items():
                for item in value if isinstance(value, list) else [value]:
                    self.send_header(name, item)
            if status != 304:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body_too:
                self.wfile.write(body)

        # --- hostile behaviours --------------------------------------------
        def _drip(self, route: dict[str, Any]) -> None:
            """Send a byte every ``delay`` seconds, forever (bounded by the client)."""
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            try:
                for _ in range(600):
                    self.wfile.write(b"<")
                    self.wfile.flush()
                    time.sleep(route.get("delay", 0.5))
            except OSError:
                pass
            self.close_connection = True

        def _huge(self, route: dict[str, Any]) -> None:
            size = route.get("size", 20 * 1024 * 1024)
            chunk = b"<p>" + b"x" * 65533
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            try:
                sent = 0
                while sent < size:
                    part = chunk[: size - sent]
                    self.wfile.write(part)
                    sent += len(part)
            except OSError:
                pass
            self.close_connection = True

        def _stall(self, route: dict[str, Any]) -> None:
            """Headers promising a short body at once; the body only after ``after`` s: a
            client that reads it waits, one that closes after the headers does not."""
            self.send_response(200)
            for name, value in route.get("headers", {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.flush()
            try:
                time.sleep(route.get("after", 3))
                self.wfile.write(b"x" * 100)
            except OSError:
                pass

        def _gzip_bomb(self, route: dict[str, Any]) -> None:
            body = gzip.compress(b"<p>" + b"\0" * route.get("size", 200 * 1024 * 1024), 9)
            self._send(200, {"Content-Type": "text/html", "Content-Encoding": "gzip"}, body)

        def _hangup(self, route: dict[str, Any]) -> None:
            """The request read, the connection closed without a word of answer."""
            self.close_connection = True
            self.connection.shutdown(2)

        def _reset(self, route: dict[str, Any]) -> None:
            """Promise a body, send half, then drop the connection."""
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "10000")
            self.end_headers()
            self.wfile.write(b"<html><body>" + b"y" * 1000)
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)

        def _sequence(self, route: dict[str, Any]) -> None:
            """Answer the n-th request with the n-th step (the last one repeats)."""
            steps = route["steps"]
            n = sum(1 for hit in site.log if hit.path == self.path) - 1
            step = steps[min(n, len(steps) - 1)]
            if step.get("behaviour"):
                getattr(self, f"_{step['behaviour']}")(step)
                return
            status, headers, body = resolve(site, self.path, step)
            self._send(status, headers, body)

        def _calendar(self, route: dict[str, Any]) -> None:
            """An endless calendar: every month links to the next and the previous one."""
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            month = int(query.get("m", ["0"])[0])
            body = (f'<a href="?m={month + 1}">next</a><a href="?m={month - 1}">prev</a>'
                    '<a href="day/">day</a>').encode()
            self._send(200, {"Content-Type": "text/html"}, body)

        def _storm(self, route: dict[str, Any]) -> None:
            """429 with Retry-After for the first ``count`` requests to any storm path."""
            storm_hits = sum(1 for hit in site.log if hit.path.startswith(route["prefix"]))
            if storm_hits <= route["count"]:
                self._send(429, {"Retry-After": str(route.get("retry_after", 1)),
                                 "Content-Type": "text/html"}, b"slow down")
                return
            self._send(200, {"Content-Type": "text/html"}, b"<p>finally</p>")

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """Hostile behaviours break connections on purpose; that is not news."""


class RunningServer:
    """Context manager: serve ``site`` on a free loopback port in a thread."""

    def __init__(self, site: str | Path, routes: dict[str, dict[str, Any]] | None = None,
                 *, conditional: bool = False, tls: ssl.SSLContext | None = None,
                 required: dict[str, str] | None = None):
        self.site = load_site(site, routes)
        self.site.conditional = conditional
        self.site.required = dict(required or {})
        self._server = _QuietServer(("127.0.0.1", 0), _handler(self.site))
        self.site.port = self._server.server_address[1]
        if tls is not None:  # HTTPS with the given server certificate
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
            self.site.scheme = "https"
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        args=(SHUTDOWN_POLL,), daemon=True)

    def __enter__(self) -> SiteServer:
        self._thread.start()
        return self.site

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
