"""Fetcher promises, proven over real sockets on every transport.

Each test runs four ways (the ``mode`` fixture): the default transport (ours,
``crawler.http.h1_transport``) over plain HTTP/1.1 and over TLS, ``--http2``'s
(httpx's own) over plain HTTP/1.1, and ``--http2`` over TLS, where the server is
asked for HTTP/2 by ALPN and the test checks it was spoken. The server is hypercorn in a thread
(tests/asgiserver.py); failures a well-behaved server cannot produce
(garbage, resets) come from raw sockets.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import anyio
import pytest
from asgiserver import AsgiServer, Receive, Scope, Send, answer

from crawler.config import CrawlConfig
from crawler.core.errors import ErrorKind
from crawler.http.fetch import Fetcher, FetchOptions, Response

pytestmark = pytest.mark.timeout(60)


@dataclass(frozen=True)
class Mode:
    http2: bool
    tls: bool

    @property
    def version(self) -> str:
        return "2" if self.tls and self.http2 else "1.1"


MODES = {"default": Mode(False, False), "default-tls": Mode(False, True),
         "http2-plain": Mode(True, False), "http2-tls": Mode(True, True)}


@pytest.fixture(params=list(MODES))
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Mode:
    return MODES[request.param]


def fetch_all(mode: Mode, app: object, requests: list[tuple[str, dict[str, str] | None]],
              monkeypatch: pytest.MonkeyPatch, *, want_body: bool = True,
              **config: object) -> tuple[list[Response], AsgiServer]:
    """``Fetcher.fetch`` of each (path, headers) in turn, from one Fetcher, against a
    server whose every route is ``app``; returns the responses and the server."""
    with AsgiServer(app, tls=mode.tls) as server:  # type: ignore[arg-type]
        if server.ca_file is not None:
            monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))

        async def go() -> list[Response]:
            cfg = CrawlConfig(start_url=server.origin + "/", http2=mode.http2,
                              **config)  # type: ignore[arg-type]
            async with Fetcher(FetchOptions.of(cfg)) as fetcher:
                return [await fetcher.fetch(server.origin + path,
                                            want_body=lambda s, t: want_body and s == 200,
                                            headers=headers) for path, headers in requests]
        responses = anyio.run(go)
    assert {seen.http_version for seen in server.log} <= {mode.version}
    return responses, server


def fetch(mode: Mode, app: object, monkeypatch: pytest.MonkeyPatch, path: str = "/p",
          **config: object) -> Response:
    return fetch_all(mode, app, [(path, None)], monkeypatch, **config)[0][0]


def test_http2_is_spoken_when_asked_for_over_tls(mode: Mode,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, body=b"ok")

    responses, server = fetch_all(mode, app, [("/a", None), ("/b", None), ("/c", None)],
                                  monkeypatch)
    assert [r.body for r in responses] == [b"ok"] * 3
    assert [seen.http_version for seen in server.log] == [mode.version] * 3
    assert len(server.connections()) == 1


def test_retry_after_is_capped(mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        calls.append(time.monotonic())
        if len(calls) == 1:
            await answer(send, 503, [("Retry-After", "3600")])
        else:
            await answer(send, body=b"ok")

    started = time.monotonic()
    response = fetch(mode, app, monkeypatch, max_retry_after=0.2)
    assert response.status == 200 and response.attempts == 2 and response.body == b"ok"
    assert time.monotonic() - started < 5


def test_retries_are_bounded_and_404_is_final(mode: Mode,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        calls.append(scope["path"])
        await answer(send, 500 if scope["path"] == "/e" else 404)

    (error, missing), _ = fetch_all(mode, app, [("/e", None), ("/m", None)], monkeypatch,
                                    retries=1)
    assert (error.status, missing.status) == (500, 404)
    assert calls == ["/e", "/e", "/m"]


def test_url_is_sent_byte_for_byte(mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing re-quotes the URL: escapes of unreserved and reserved characters,
    ``;`` and ``|`` escaped, non-ASCII as UTF-8, all arrive as the crawler spelled them."""
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, body=b"ok")

    target = "/a%2Fb/%7Ex;p%3B%7C/caf%C3%A9;q?q=%20+&r=%7C%3B;s&t=%C3%A9%7e"
    _, server = fetch_all(mode, app, [(target, None)], monkeypatch)
    assert [seen.target for seen in server.log] == [target.encode()]


def test_conditional_headers_and_304(mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        if headers.get(b"if-none-match") == b'"v1"':
            await answer(send, 304, [("ETag", '"v1"')])
        else:
            await answer(send, headers=[("ETag", '"v1"')], body=b"fresh")

    (first, again), _ = fetch_all(mode, app, [("/", None), ("/", {"If-None-Match": '"v1"'})],
                                  monkeypatch)
    assert (first.status, first.body, first.etag) == (200, b"fresh", '"v1"')
    assert (again.status, again.body, again.etag) == (304, None, '"v1"')


def test_repeated_headers_are_all_kept(mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, headers=[("X-Robots-Tag", "noindex"), ("X-Robots-Tag", "nofollow"),
                                    ("Link", '<http://127.0.0.1/c>; rel="canonical"')],
                     body=b"x")

    response = fetch(mode, app, monkeypatch)
    assert response.x_robots_tag == ["noindex", "nofollow"]
    assert response.link == ['<http://127.0.0.1/c>; rel="canonical"']


def test_long_header_lines_are_accepted(mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    # Real sites send Content-Security-Policy and Link headers of 10-20 KB; a
    # header line of up to 64 KiB is read (HTTP/2 caps the whole list at 64 KiB).
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, headers=[("Content-Security-Policy", "a" * 40_000),
                                    ("Link", "<http://127.0.0.1/x>; rel=x, " * 700)],
                     body=b"ok")

    response = fetch(mode, app, monkeypatch)
    assert response.status == 200 and response.body == b"ok"
    assert len(response.link[0]) > 16_000


def test_gzip_and_deflate_bodies_are_decoded_within_the_cap(
        mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    body = b"<p>" + b"a" * 5000
    compressor = zlib.compressobj(wbits=-15)
    raw_deflate = compressor.compress(body) + compressor.flush()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] == "/deflate":
            await answer(send, headers=[("Content-Encoding", "deflate")], body=raw_deflate)
        else:
            await answer(send, headers=[("Content-Encoding", "gzip")], body=gzip.compress(body))

    (gz, deflated), _ = fetch_all(mode, app, [("/gz", None), ("/deflate", None)], monkeypatch)
    assert gz.body == body and deflated.body == body
    assert fetch(mode, app, monkeypatch, path="/gz", max_page_bytes=1000).error is (
        ErrorKind.TOO_LARGE)


def test_a_gzip_bomb_stops_at_the_cap(mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)  # 64 MiB inflated

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, headers=[("Content-Type", "text/html"),
                                    ("Content-Encoding", "gzip")], body=bomb)

    response = fetch(mode, app, monkeypatch, max_page_bytes=1_000_000, retries=0)
    assert response.error is ErrorKind.TOO_LARGE and response.body is None


def test_corrupt_or_unknown_encoding_is_a_decoding_error(
        mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        encoding = "br" if scope["path"] == "/br" else "gzip"
        await answer(send, headers=[("Content-Encoding", encoding)], body=b"not gzip at all")

    (corrupt, brotli), _ = fetch_all(mode, app, [("/gz", None), ("/br", None)], monkeypatch,
                                     retries=0)
    assert corrupt.error is ErrorKind.DECODING and brotli.error is ErrorKind.DECODING


def test_a_slow_drip_is_cut_by_the_total_deadline(mode: Mode,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Every chunk arrives well within any per-read timeout; the body never ends in time.
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, headers=[("Content-Type", "text/html")],
                     chunks=[b"<p>x</p>"] * 40, pause=0.1)

    started = time.monotonic()
    response = fetch(mode, app, monkeypatch, timeout=1.0, retries=0)
    assert response.error is ErrorKind.TIMEOUT and response.body is None
    assert time.monotonic() - started < 3


def test_keep_alive_survives_304_404_and_redirects(mode: Mode,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path == "/moved":
            await answer(send, 301, [("Location", "/new"), ("Content-Type", "text/html")],
                         b"<a href=/new>moved</a>")
        elif path == "/missing":
            await answer(send, 404, [("Content-Type", "text/html")], b"<h1>not here</h1>" * 50)
        elif path == "/same":
            await answer(send, 304, [("ETag", '"1"')])
        else:
            await answer(send, headers=[("Content-Type", "text/html")], body=b"<p>page</p>")

    paths = ["/a", "/moved", "/missing", "/same", "/b", "/moved", "/missing", "/c"]
    responses, server = fetch_all(mode, app, [(p, None) for p in paths], monkeypatch,
                                  concurrency=1)
    assert [r.status for r in responses] == [200, 301, 404, 304, 200, 301, 404, 200]
    assert len(server.connections()) == 1


def test_a_session_cookie_goes_back_to_the_origin(mode: Mode,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, headers=[("Set-Cookie", "session=abc; Path=/")], body=b"ok")

    _, server = fetch_all(mode, app, [("/a", None), ("/b", None)], monkeypatch)
    assert [seen.headers.get("cookie") for seen in server.log] == [None, "session=abc"]


def test_an_untrusted_certificate_is_a_tls_error(mode: Mode,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, body=b"ok")

    with AsgiServer(app, tls=True) as server:  # its CA is not in certifi's bundle
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        response = _fetch_once(server.origin + "/", http2=mode.http2)
    assert response.status is None and response.error is ErrorKind.TLS
    assert server.log == []


def _fetch_once(url: str, **config: object) -> Response:
    async def go() -> Response:
        cfg = CrawlConfig(start_url=url, retries=0, **config)  # type: ignore[arg-type]
        async with Fetcher(FetchOptions.of(cfg)) as fetcher:
            return await fetcher.fetch(url, want_body=lambda s, t: True)
    return anyio.run(go)


@pytest.fixture
def refusing_port() -> Iterator[int]:
    with socket.socket() as probe:  # bound, never listening: connections are refused
        probe.bind(("127.0.0.1", 0))
        yield probe.getsockname()[1]


@pytest.mark.parametrize("http2", [False, True])
def test_a_refused_connection_is_a_connect_error(http2: bool, refusing_port: int) -> None:
    response = _fetch_once(f"http://127.0.0.1:{refusing_port}/", http2=http2)
    assert response.status is None and response.error is ErrorKind.CONNECT


@pytest.mark.parametrize("http2", [False, True])
def test_an_unreachable_proxy_is_a_proxy_error(http2: bool, refusing_port: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{refusing_port}")
    response = _fetch_once("http://127.0.0.1:9/", http2=http2)
    assert response.status is None and response.error is ErrorKind.PROXY


def _raw_server(reply: bytes, *, then_close: bool = True) -> tuple[int, threading.Thread]:
    """A socket that answers the first request with ``reply`` bytes, whatever they are."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def serve() -> None:
        with listener:
            connection, _ = listener.accept()
            with connection:
                connection.recv(65536)
                connection.sendall(reply)
                if not then_close:
                    time.sleep(2)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread


@pytest.mark.parametrize("http2", [False, True])
def test_garbage_instead_of_http_is_a_protocol_error(http2: bool) -> None:
    port, _ = _raw_server(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
    response = _fetch_once(f"http://127.0.0.1:{port}/", http2=http2)
    assert response.status is None and response.error is ErrorKind.PROTOCOL


@pytest.mark.parametrize("http2", [False, True])
def test_a_body_cut_short_is_a_network_error(http2: bool) -> None:
    port, _ = _raw_server(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                          b"Content-Length: 5000\r\n\r\n<p>only part of it")
    response = _fetch_once(f"http://127.0.0.1:{port}/", http2=http2)
    assert response.status == 200 and response.error is ErrorKind.NETWORK
    assert response.body is None


@pytest.mark.parametrize("broken", ["_read_headers", "Inflater.feed"])
def test_a_bug_in_our_own_reading_is_an_internal_error_not_a_network_one(
        mode: Mode, monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    """The network ``try`` covers the network only: a fault in reading the answer's
    headers or inflating its body is this URL's ``internal-error`` row, which the
    crawl reports and --debug shows, never a ``network`` error that looks like the
    site's."""
    import crawler.http.fetch as fetch_module

    def bug(*args: object, **kwargs: object) -> None:
        raise ValueError("a bug of ours")

    owner, _, name = broken.rpartition(".")
    monkeypatch.setattr(getattr(fetch_module, owner) if owner else fetch_module, name, bug)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await answer(send, body=b"<p>hello</p>")

    response = fetch(mode, app, monkeypatch)
    assert response.error is ErrorKind.INTERNAL, (response.error, response.detail)
    assert "a bug of ours" in (response.detail or "")
