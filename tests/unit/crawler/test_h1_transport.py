"""The default transport's own promises, over real sockets against raw servers.

What every transport promises (URLs byte for byte, long headers, gzip, deadlines,
keep-alive through 304s and redirects, TLS errors...) is in ``test_fetch.py``;
here is what only a client that reads the wire itself must get right: answers
framed every way HTTP/1.1 allows, interim answers, a connection the server
closed while it sat idle, the limits on an answer's head, and the pool's bound.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
import time
from collections.abc import Callable, Iterator

import anyio
import httpx
import pytest

from crawler.config import CrawlConfig
from crawler.core.errors import ErrorKind
from crawler.http.address_rule import NetworkRule
from crawler.http.fetch import Fetcher, FetchOptions, Response
from crawler.http.h1_transport import H1Transport
from crawler.http.prebuilt import WHEN_SENT
from crawler.http.transports import open_transport

pytestmark = pytest.mark.timeout(30)

Handler = Callable[[socket.socket, int], None]


class RawServer:
    """Accepts connections on 127.0.0.1 and gives each, numbered from 0, to ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self.most_at_once = 0
        self._open = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                number = self.accepted
                self.accepted += 1
                self._open += 1
                self.most_at_once = max(self.most_at_once, self._open)
            threading.Thread(target=self._one, args=(connection, number), daemon=True).start()

    def _one(self, connection: socket.socket, number: int) -> None:
        try:
            with connection:
                self.handler(connection, number)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open -= 1

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def raw_server() -> Iterator[Callable[[Handler], RawServer]]:
    servers: list[RawServer] = []

    def start(handler: Handler) -> RawServer:
        servers.append(RawServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def read_request(connection: socket.socket) -> bytes:
    """One request's head (the crawler sends no bodies)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return data
        data += chunk
    return data


def answer_each(reply: bytes) -> Handler:
    """Answer every request on the connection with ``reply``."""
    def handler(connection: socket.socket, _number: int) -> None:
        while read_request(connection):
            connection.sendall(reply)
    return handler


def answer_slowly(pause: float) -> Handler:
    """Answer every request on the connection ``ok`` after ``pause`` seconds."""
    def handler(connection: socket.socket, _number: int) -> None:
        while read_request(connection):
            time.sleep(pause)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    return handler


def bare_transport(max_connections: int) -> H1Transport:
    return H1Transport(ssl_context=None, max_connections=max_connections,  # type: ignore[arg-type]
                       keepalive_expiry=15.0, max_header_bytes=65536, max_headers=256)


async def get(transport: H1Transport, url: str) -> httpx.Response:
    """One GET through the transport alone, its body read and the response closed."""
    response = await transport.handle_async_request(httpx.Request("GET", url))
    await response.aread()
    await response.aclose()
    return response


def fetch_paths(origin: str, paths: list[str], *, want_body: bool = True,
                method: str = "GET", **config: object) -> list[Response]:
    async def go() -> list[Response]:
        cfg = CrawlConfig(start_url=origin + "/", retries=0, **config)  # type: ignore[arg-type]
        async with Fetcher(FetchOptions.of(cfg)) as fetcher:
            return [await fetcher.fetch(origin + path, want_body=lambda s, t: want_body,
                                        method=method) for path in paths]
    return anyio.run(go)


def test_it_is_the_default_transport_and_aiohttp_is_left_unimported() -> None:
    transport = open_transport("http://127.0.0.1:9/", http2=False, concurrency=4,
                               rule=NetworkRule.open())
    assert isinstance(transport, H1Transport)


@pytest.mark.parametrize("framing", [
    b"Content-Length: 11\r\n\r\nhello world",
    b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\n"
    b"Trailer-Field: x\r\n\r\n",
    b"Connection: close\r\n\r\nhello world",  # delimited by the connection's end
])
def test_every_framing_of_a_body_is_read(raw_server: Callable[[Handler], RawServer],
                                         framing: bytes) -> None:
    def handler(connection: socket.socket, _number: int) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + framing)
        if b"close" in framing:
            connection.shutdown(socket.SHUT_WR)
            time.sleep(0.2)
    server = raw_server(handler)
    (response,) = fetch_paths(server.origin, ["/"])
    assert (response.status, response.error, response.body) == (200, None, b"hello world")


def test_interim_answers_are_skipped(raw_server: Callable[[Handler], RawServer]) -> None:
    server = raw_server(answer_each(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload"
        b"\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nLink: </c>; rel=canonical\r\n\r\nok"))
    (response,) = fetch_paths(server.origin, ["/"])
    assert (response.status, response.body) == (200, b"ok")
    assert response.link == ["</c>; rel=canonical"]  # the final answer's headers only


def test_a_connection_closed_while_idle_is_replaced_without_an_error(
        raw_server: Callable[[Handler], RawServer]) -> None:
    """A server may close a kept-alive connection at any moment (RFC 9112 §9.3.1): the
    next request, sent on it before the client noticed, goes again on a new one."""
    def handler(connection: socket.socket, _number: int) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        read_request(connection)  # the next request arrives: dropped unanswered
    server = raw_server(handler)
    responses = fetch_paths(server.origin, ["/a", "/b", "/c"])
    assert [(r.status, r.error) for r in responses] == [(200, None)] * 3
    assert server.accepted == 3


def test_a_new_connection_closed_unanswered_is_a_network_error(
        raw_server: Callable[[Handler], RawServer]) -> None:
    server = raw_server(lambda connection, _number: read_request(connection) and None)
    (response,) = fetch_paths(server.origin, ["/"])
    assert response.status is None and response.error is ErrorKind.NETWORK
    assert server.accepted == 1  # not tried again on another connection by the transport


@pytest.mark.parametrize(("head", "accepted"), [
    (b"".join(b"X-N%d: v\r\n" % n for n in range(255)), True),  # 256 with Content-Length
    (b"".join(b"X-N%d: v\r\n" % n for n in range(256)), False),
    (b"X-Long: " + b"a" * (64 * 1024 - 20) + b"\r\n", True),
    (b"X-Long: " + b"a" * (64 * 1024 + 1) + b"\r\n", False),
    (b"".join(b"X-N%d: " % n + b"a" * 60_000 + b"\r\n" for n in range(20)), False),  # 1.2 MB
])
def test_the_head_of_an_answer_is_bounded(raw_server: Callable[[Handler], RawServer],
                                          head: bytes, accepted: bool) -> None:
    server = raw_server(answer_each(b"HTTP/1.1 200 OK\r\n" + head + b"Content-Length: 2\r\n\r\nok"))
    (response,) = fetch_paths(server.origin, ["/"])
    if accepted:
        assert (response.status, response.body) == (200, b"ok")
    else:
        assert response.status is None and response.error is ErrorKind.PROTOCOL


def test_a_head_that_never_ends_is_cut_at_its_limit(
        raw_server: Callable[[Handler], RawServer]) -> None:
    def handler(connection: socket.socket, _number: int) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\nX-Endless: ")
        for _ in range(400):  # 40 MB of one header line, unless the client hangs up
            connection.sendall(b"a" * 100_000)
    server = raw_server(handler)
    started = time.monotonic()
    (response,) = fetch_paths(server.origin, ["/"], timeout=20.0)
    assert response.error is ErrorKind.PROTOCOL
    assert time.monotonic() - started < 5


def test_a_head_answer_leaves_the_connection_usable(
        raw_server: Callable[[Handler], RawServer]) -> None:
    server = raw_server(answer_each(b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n"
                                    b"Content-Length: 123456\r\n\r\n"))
    responses = fetch_paths(server.origin, ["/a.pdf", "/b.pdf", "/c.pdf"], method="HEAD",
                            want_body=False)
    assert [(r.status, r.length, r.error) for r in responses] == [(200, 123456, None)] * 3
    assert server.accepted == 1


def test_a_large_body_arrives_whole_through_the_pauses(
        raw_server: Callable[[Handler], RawServer]) -> None:
    body = bytes(range(256)) * (8 * 4096)  # 8 MiB, far past the pause mark
    server = raw_server(answer_each(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
                                    + body))
    (response,) = fetch_paths(server.origin, ["/"], max_page_bytes=16 * 1024 * 1024)
    assert response.error is None and response.body == body


def test_garbage_after_an_answer_does_not_reach_the_next_request(
        raw_server: Callable[[Handler], RawServer]) -> None:
    """Bytes a server sends beyond the answer it declared are no answer to the next
    request: that connection is given up, and the next request goes on a new one."""
    def handler(connection: socket.socket, number: int) -> None:
        read_request(connection)
        extra = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nwrong" if number == 0 else b""
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nright" + extra)
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nright")
    server = raw_server(handler)
    responses = fetch_paths(server.origin, ["/a", "/b"], concurrency=1)
    assert [r.body for r in responses] == [b"right", b"right"]


def test_connections_stay_within_the_limit(raw_server: Callable[[Handler], RawServer]) -> None:
    server = raw_server(answer_slowly(0.05))

    async def go() -> list[int]:
        transport = bare_transport(3)
        statuses: list[int] = []

        async def one(n: int) -> None:
            statuses.append((await get(transport, f"{server.origin}/{n}")).status_code)

        async with anyio.create_task_group() as group:
            for n in range(12):
                group.start_soon(one, n)
        await transport.aclose()
        return statuses

    assert anyio.run(go) == [200] * 12
    assert server.accepted == 3 and server.most_at_once == 3


def test_a_request_cancelled_while_waiting_for_a_connection_gives_up_its_turn(
        raw_server: Callable[[Handler], RawServer]) -> None:
    server = raw_server(answer_slowly(0.2))

    async def go() -> list[int]:
        transport = bare_transport(1)
        statuses: list[int] = []
        async with anyio.create_task_group() as group:
            async def first() -> None:
                statuses.append((await get(transport, server.origin + "/1")).status_code)

            async def impatient() -> None:
                with anyio.move_on_after(0.05):
                    await get(transport, server.origin + "/2")  # waits for the one connection

            group.start_soon(first)
            await anyio.sleep(0.01)
            group.start_soon(impatient)
        statuses.append((await get(transport, server.origin + "/3")).status_code)  # free again
        await transport.aclose()
        return statuses

    assert anyio.run(go) == [200, 200]
    assert server.accepted == 1


def test_answer_headers_are_what_httpx_builds_from_them(
        raw_server: Callable[[Handler], RawServer], monkeypatch: pytest.MonkeyPatch) -> None:
    """The headers are handed to httpx as it stores them; without that shortcut (httpx
    changed) they are built by httpx itself, and read the same either way."""
    server = raw_server(answer_each(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Robots-Tag: noindex\r\n"
        b"x-robots-tag: nofollow\r\nETag: \"caf\xe9\"\r\nContent-Length: 2\r\n\r\nok"))

    async def headers() -> httpx.Headers:
        transport = bare_transport(1)
        response = await get(transport, server.origin)
        await transport.aclose()
        return response.headers

    fast = anyio.run(headers)
    monkeypatch.setattr("crawler.http.h1_transport.append_trusted", lambda: False)
    slow = anyio.run(headers)
    assert fast.raw == slow.raw and fast == slow
    assert fast.get_list("x-robots-tag") == ["noindex", "nofollow"]
    assert fast["content-type"] == slow["Content-Type"] == "text/html"
    assert fast.raw[3] == (b"ETag", b'"caf\xe9"')


def test_when_sent_is_called_as_the_request_goes_before_its_answer_comes(
        raw_server: Callable[[Handler], RawServer]) -> None:
    """The crawl loads its page reader while robots.txt travels: the fetcher's
    ``when_sent`` runs once the request is written, not once it is answered (the
    server here answers only after it ran), and only for the request given it."""
    told = threading.Event()

    def handler(connection: socket.socket, _number: int) -> None:
        while read_request(connection):
            status = b"200 OK" if told.wait(5) else b"500 Too Late"
            connection.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: 2\r\n\r\nok")
    server = raw_server(handler)
    calls: list[str] = []

    def when_sent() -> None:
        calls.append("sent")
        told.set()

    async def go() -> list[Response]:
        cfg = CrawlConfig(start_url=server.origin + "/", retries=0)
        async with Fetcher(FetchOptions.of(cfg)) as fetcher:
            first = await fetcher.fetch(server.origin + "/robots.txt",
                                        want_body=lambda s, t: True, when_sent=when_sent)
            second = await fetcher.fetch(server.origin + "/b", want_body=lambda s, t: True)
            return [first, second]
    first, second = anyio.run(go)
    assert (first.status, first.body, second.status) == (200, b"ok", 200)
    assert calls == ["sent"]


def test_what_when_sent_does_is_not_counted_against_the_timeout(
        raw_server: Callable[[Handler], RawServer]) -> None:
    """The crawl's imports run in the hook while robots.txt travels; a short
    ``--timeout`` must not blame the server for them."""
    server = raw_server(answer_each(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))

    async def go() -> Response:
        cfg = CrawlConfig(start_url=server.origin + "/", retries=0, timeout=0.3)
        async with Fetcher(FetchOptions.of(cfg)) as fetcher:
            return await fetcher.fetch(server.origin + "/robots.txt",
                                       want_body=lambda s, t: True,
                                       when_sent=lambda: time.sleep(0.5))
    answer = anyio.run(go)
    assert (answer.status, answer.body, answer.error) == (200, b"ok", None)


def test_a_request_given_up_after_it_was_sent_leaves_no_stray_error(
        raw_server: Callable[[Handler], RawServer]) -> None:
    """When what runs between sending a request and awaiting its answer raises
    (``when_sent``: the crawl's imports), the connection is dropped and the
    request's answer is never awaited. Its failure must not outlive it: asyncio
    printed "Future exception was never retrieved" and a class name under the
    crawl's one-line error."""
    server = raw_server(answer_slowly(0.2))
    stray: list[dict[str, object]] = []

    async def go() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: stray.append(ctx))

        def when_sent() -> None:
            raise RuntimeError("an import failed")

        request = httpx.Request("GET", server.origin + "/robots.txt",
                                extensions={WHEN_SENT: when_sent})
        async with bare_transport(1) as transport:
            with pytest.raises(RuntimeError, match="an import failed"):
                await transport.handle_async_request(request)
        await anyio.sleep(0.05)  # the connection's loss reaches its protocol
        gc.collect()  # a future's unread exception is reported when it is freed
        await anyio.sleep(0)

    anyio.run(go)
    assert stray == []


def test_the_request_head_is_the_target_as_spelt_and_every_header_in_order() -> None:
    from crawler.http.h1_transport import _request_head
    from crawler.http.prebuilt import RequestFactory

    factory = RequestFactory("http://127.0.0.1:81", [(b"Host", b"127.0.0.1:81"),
                                                     (b"User-Agent", b"bot/1")])
    request = factory.get("http://127.0.0.1:81/a%2Fb;c?q=%7C", (("If-None-Match", '"\xe9"'),))
    assert _request_head(request) == (
        b"GET /a%2Fb;c?q=%7C HTTP/1.1\r\nHost: 127.0.0.1:81\r\nUser-Agent: bot/1\r\n"
        b'If-None-Match: "\xe9"\r\n\r\n')
    # no Host header given: httpx's own comes first, right after the request line
    bare = httpx.Request("HEAD", "http://h:8/x y", headers={"Accept": "*/*"})
    bare.headers = httpx.Headers([(b"Accept", b"*/*")])
    assert _request_head(bare) == b"HEAD /x%20y HTTP/1.1\r\nHost: h:8\r\nAccept: */*\r\n\r\n"


@pytest.mark.parametrize(("name", "value"), [
    (b"X-A", b"one\r\nX-Injected: two"), (b"X-A", b"one\nX-Injected: two"),
    (b"X-A", b"one\rtwo"), (b"X-A\r\nX-B", b"v"), (b"Host", b"h\n"),
])
def test_a_header_holding_a_line_break_is_never_sent(name: bytes, value: bytes) -> None:
    from crawler.http.h1_transport import _request_head

    request = httpx.Request("GET", "http://h/")
    request.headers = httpx.Headers([(b"Accept", b"*/*")])
    request.headers._list.append((name, name.lower(), value))
    with pytest.raises(httpx.LocalProtocolError):
        _request_head(request)
