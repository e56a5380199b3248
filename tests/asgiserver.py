"""A real HTTP/1.1 and HTTP/2 server (hypercorn) on 127.0.0.1:0, for tests.

``AsgiServer(app)`` serves an ASGI ``app`` in a thread of its own; with
``tls=True`` it serves HTTPS under a throw-away trustme CA and offers HTTP/2
by ALPN, so a client that asks for it gets real HTTP/2. Every request is
logged with what the server saw of it: the HTTP version, the raw request
target (bytes, as sent), the headers and the client's port, which tells
one connection from another.
"""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme
from hypercorn.asyncio import serve
from hypercorn.config import Config
from siteserver import SiteServer, resolve, route_for

Scope = dict[str, Any]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class Seen:
    http_version: str
    target: bytes  # raw path and query, exactly as the client sent them
    headers: dict[str, str]
    client_port: int


@dataclass
class AsgiServer:
    app: App
    tls: bool = False
    log: list[Seen] = field(default_factory=list)
    port: int = 0
    ca: trustme.CA | None = None
    ca_file: Path | None = None

    @property
    def origin(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def connections(self) -> set[int]:
        return {seen.client_port for seen in self.log}

    def __enter__(self) -> AsgiServer:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        config = Config()
        # hypercorn takes (and closes) a descriptor of its own
        config.bind = [f"fd://{os.dup(listener.fileno())}"]
        listener.close()
        config.loglevel = "ERROR"
        config.accesslog = None
        config.errorlog = None
        config.graceful_timeout = 0.5
        config.h11_max_incomplete_size = 128 * 1024
        if self.tls:
            self._dir = tempfile.TemporaryDirectory()
            self.ca = trustme.CA()
            cert = self.ca.issue_cert("127.0.0.1")
            folder = Path(self._dir.name)
            cert.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
            cert.private_key_pem.write_to_path(str(folder / "key.pem"))
            self.ca.cert_pem.write_to_path(str(folder / "ca.pem"))
            self.ca_file = folder / "ca.pem"
            config.certfile, config.keyfile = str(folder / "cert.pem"), str(folder / "key.pem")
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        started = threading.Event()

        async def logged(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "lifespan":  # hypercorn's start and stop: nothing to do
                while (await receive())["type"] != "lifespan.shutdown":
                    await send({"type": "lifespan.startup.complete"})
                await send({"type": "lifespan.shutdown.complete"})
                return
            if scope["type"] == "http":
                query = scope.get("query_string") or b""
                self.log.append(Seen(
                    scope["http_version"], scope["raw_path"] + (b"?" + query if query else b""),
                    {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]},
                    scope["client"][1] if scope.get("client") else 0))
            await self.app(scope, receive, send)

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.call_soon(started.set)
            self._loop.run_until_complete(
                serve(logged, config, shutdown_trigger=self._stop.wait))  # type: ignore[arg-type]

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        started.wait(5)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)
        if self.tls:
            self._dir.cleanup()


async def answer(send: Send, status: int = 200, headers: list[tuple[str, str]] | None = None,
                 body: bytes = b"", *, chunks: list[bytes] | None = None,
                 pause: float = 0.0) -> None:
    """Send one response; ``chunks`` are sent ``pause`` seconds apart (a slow drip)."""
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers or []]
    if chunks is None and not any(k == b"content-length" for k, _ in raw):
        raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    for chunk in chunks if chunks is not None else [body]:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if pause:
            await asyncio.sleep(pause)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def site_app(site: SiteServer) -> App:
    """Serve a fixture site (its files and plain routes) the way siteserver does."""
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string") or b""
        target = (scope["raw_path"] + (b"?" + query if query else b"")).decode("latin-1")
        status, headers, body = resolve(site, target, route_for(site, target))
        listed: list[tuple[str, str]] = []
        for name, value in headers.items():
            listed += [(name, item) for item in (value if isinstance(value, list) else [value])]
        await answer(send, status, listed, b"" if status == 304 else body)
    return app
