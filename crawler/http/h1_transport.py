"""httpx's transport API on a lean HTTP/1.1 client: the default transport.

A crawl of a fast site is bound by the crawling process's CPU, and on the
synthetic 10,000 pages a third of it went to aiohttp's client machinery: a
``ClientRequest``, a ``ClientResponse``, a ``StreamReader``, a timer
context, trace hooks and its connector, 0.13 ms of CPU a request, where an
asyncio protocol that writes the request and hands back what the socket
delivered costs a third of that (``bench/engines.py``). A crawler needs
little of a general client: one origin, no cookies of the client's own (the
fetcher keeps them), no redirects (the frontier follows them), no body to
send, the deadline set by the fetcher. So requests go out here:

* **llhttp parses the answers** (``httptools``, the parser of Node.js and
  uvicorn): status line, headers, chunked and length-delimited bodies, all
  in C; nothing here reads HTTP syntax but the request we write;
* **one request a connection at a time**, connections kept alive in a pool
  of at most ``max_connections``, an idle one closed after
  ``keepalive_expiry`` seconds, and a request whose reused connection turns
  out closed by the server before any answer tried once more on a new one
  (a server may close an idle connection at any moment: RFC 9112 §9.3.1);
* **the URL goes out exactly as the crawler spelt it** (the request's raw
  path and query, or the prebuilt string the fetcher attached), never
  re-quoted;
* **limits on the answer's head**: a header line of up to
  ``max_header_bytes`` (real pages carry 10-20 KB ``Content-Security-Policy``
  and ``Link`` headers), at most ``max_headers`` of them, and 16 such lines'
  worth in all, counted as the bytes arrive (llhttp itself sets no limit, so
  a head that never ends would otherwise grow until the deadline);
* **back-pressure**: a body the fetcher reads slower than it arrives (or
  stops reading at its cap) pauses the socket past 256 KB;
* **every failure is the httpx exception that says what happened**, a TLS
  failure raised from its :class:`ssl.SSLError` so the fetcher can say "TLS".

Through a proxy the requests go by aiohttp's engine instead
(``aiohttp_transport.py``), which speaks to HTTP proxies and tunnels
``https`` through them; ``transports.py`` decides, once per crawl.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx

from crawler.http.address_rule import NetworkRule
from crawler.http.h1_connection import Connection as _Connection
from crawler.http.h1_connection import Stale as _Stale
from crawler.http.prebuilt import RAW_URL, WHEN_SENT, append_trusted

HTTP_11 = {"http_version": b"HTTP/1.1"}
# A head may take this many times max_header_bytes in all (1 MiB by default).
HEAD_LINES_IN_ALL = 16
_DEFAULT_PORTS = {b"http": 80, b"https": 443}


class H1Transport(httpx.AsyncBaseTransport):
    """HTTP/1.1 connections to the origins a crawl asks, pooled and kept alive."""

    def __init__(self, *, ssl_context: ssl.SSLContext, max_connections: int,
                 keepalive_expiry: float, max_header_bytes: int, max_headers: int,
                 rule: NetworkRule | None = None) -> None:
        self._ssl = ssl_context
        self._rule = rule or NetworkRule.open()
        self._limit = max(1, max_connections)
        self._keepalive = keepalive_expiry
        self._max_header_bytes = max_header_bytes
        self._max_headers = max_headers
        self._idle: dict[tuple[bytes, bytes, int], collections.deque[_Connection]] = {}
        self._open = 0  # connections open or being opened
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        scheme = url.raw_scheme
        port = url.port or _DEFAULT_PORTS.get(scheme, 80)
        key = (scheme, url.raw_host, port)
        head = _request_head(request)
        head_only = request.method == "HEAD"
        fresh = False  # after a stale connection, the next is a new one, never pooled
        while True:
            connection, reused = await self._connection(key, fresh=fresh)
            try:
                status, headers = await _ask(connection, head, head_only,
                                             request.extensions.get(WHEN_SENT))
            except _Stale:
                self._discard(connection)
                if reused:
                    # closed by the server while idle: once more, on a new connection (the
                    # other idle ones to this origin are likely as old: they are let go)
                    self._drop_idle(key)
                    fresh = True
                    continue
                raise httpx.ReadError(
                    "the server closed the connection without answering") from None
            except BaseException:
                connection.abandon()
                self._discard(connection)
                raise
            return httpx.Response(status, headers=_headers(headers),
                                  stream=_Body(self, connection), request=request,
                                  extensions=HTTP_11)

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            while idle:
                idle.pop().close()
        self._idle.clear()

    def _drop_idle(self, key: tuple[bytes, bytes, int]) -> None:
        idle = self._idle.get(key)
        while idle:
            self._discard(idle.pop())

    async def _connection(self, key: tuple[bytes, bytes, int], *, fresh: bool = False
                          ) -> tuple[_Connection, bool]:
        """An idle connection to ``key``'s origin (reused) or, ``fresh``, a new one."""
        idle = None if fresh else self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.usable(now, self._keepalive):
                return connection, True
            self._discard(connection)
        while self._open >= self._limit:
            if not self._close_an_idle_connection():
                waiter = asyncio.get_running_loop().create_future()
                self._waiting.append(waiter)
                try:
                    await waiter
                except BaseException:
                    if waiter.done() and not waiter.cancelled():
                        self._wake_one()  # woken, but leaving: the turn passes on
                    raise
                reused = None if fresh else self._idle.get(key)
                if reused:
                    connection = reused.pop()
                    if connection.usable(time.monotonic(), self._keepalive):
                        return connection, True
                    self._discard(connection)
        self._open += 1
        try:
            return await self._connect(key), False
        except BaseException:
            self._open -= 1
            self._wake_one()
            raise

    async def _connect(self, key: tuple[bytes, bytes, int]) -> _Connection:
        scheme, raw_host, port = key
        host = raw_host.decode("ascii")
        connection = _Connection(key, self._max_header_bytes, self._max_headers,
                                 self._max_header_bytes * HEAD_LINES_IN_ALL)
        loop = asyncio.get_running_loop()
        # the rule of crawler.http.address_rule: only the addresses it returns are dialled
        addresses = await self._rule.addresses(host, port)
        for index, (_family, address) in enumerate(addresses):
            try:
                if scheme == b"https":
                    await loop.create_connection(lambda: connection, address, port,
                                                 ssl=self._ssl, server_hostname=host)
                else:
                    await loop.create_connection(lambda: connection, address, port)
            except ssl.SSLError as exc:
                raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
            except OSError as exc:
                if index + 1 < len(addresses):
                    continue  # the next address of the name, as create_connection would
                raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
            break
        return connection

    def _close_an_idle_connection(self) -> bool:
        """Make room for a connection to another origin by closing an idle one."""
        for idle in self._idle.values():
            if idle:
                self._discard(idle.popleft())
                return True
        return False

    def _discard(self, connection: _Connection) -> None:
        if not connection.discarded:
            connection.discarded = True
            connection.close()
            self._open -= 1
            self._wake_one()

    def _wake_one(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _release(self, connection: _Connection) -> None:
        """A finished answer: its connection goes back to the pool or is closed."""
        if connection.reusable() and not self._closed:
            connection.idle_since = time.monotonic()
            self._idle.setdefault(connection.key, collections.deque()).append(connection)
            self._wake_one()
        else:
            self._discard(connection)


def _headers(fields: list[tuple[bytes, bytes, bytes]]) -> httpx.Headers | list[tuple[bytes, bytes]]:
    """The answer's headers for ``httpx.Response``: handed over as httpx stores them
    (name, lower-cased name, value), which spares it normalising each one again, where
    that was checked to be what httpx builds (:func:`~crawler.http.prebuilt.append_trusted`)."""
    if append_trusted():
        headers = httpx.Headers()
        headers._list = fields
        return headers
    return [(name, value) for name, _lower, value in fields]


def _ask(connection: _Connection, head: bytes, head_only: bool,
         when_sent: Callable[[], None] | None
         ) -> Awaitable[tuple[int, list[tuple[bytes, bytes, bytes]]]]:
    """Send a request's head on ``connection``; what awaits the answer's status and
    headers (the connection's own future: a coroutine around it cost a microsecond
    a request)."""
    connection.send(head, head_only)
    if when_sent is not None:
        when_sent()
    return connection.answer()


def _request_head(request: httpx.Request) -> bytes:
    """The request line and headers, as bytes, the target exactly as the crawler spelt it.

    Names and values are checked for line breaks all at once (joined, a NUL
    between them), not one by one: half the cost, on every request."""
    raw = request.extensions.get(RAW_URL)
    if raw is not None:
        rest = raw.partition("://")[2]
        slash = rest.find("/")
        target = rest[slash:].encode("ascii") if slash >= 0 else b"/"
    else:
        target = request.url.raw_path
    fields = request.headers.raw
    names = b"\0".join([name for name, _value in fields])
    values = b"\0".join([value for _name, value in fields])
    if b"\r" in names or b"\n" in names or b"\r" in values or b"\n" in values:
        raise httpx.LocalProtocolError("a header holds a line break")
    # the crawl's own requests name the Host first: the search ends there
    host = b"" if any(name.lower() == b"host" for name, _value in fields) else (
        b"Host: %s\r\n" % request.url.netloc)
    return b"%s %s HTTP/1.1\r\n%s%s\r\n" % (
        request.method.encode("ascii"), target, host,
        b"".join([b"%s: %s\r\n" % field for field in fields]))


class _Body(httpx.AsyncByteStream):
    """The answer's body as it arrives; closing it hands the connection back."""

    def __init__(self, transport: H1Transport, connection: _Connection) -> None:
        self._transport = transport
        self._connection = connection
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        while True:
            data = connection.take()
            if data is not None:
                yield data
                continue
            if connection.error is not None:
                raise connection.error
            if connection.complete:
                return
            waiter = connection.body_waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                connection.body_waiter = None

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._transport._release(self._connection)
