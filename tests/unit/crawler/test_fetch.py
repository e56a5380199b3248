"""Fetcher edges against an in-process aiohttp server on 127.0.0.1 (also proven in tests/e2e)."""

from __future__ import annotations

import gzip
import socket
import time
import zlib
from collections.abc import Awaitable, Callable

import anyio
from aiohttp import web
from aiohttp.test_utils import TestServer

from crawler.config import CrawlConfig
from crawler.errors import ErrorKind
from crawler.fetch import Fetcher, Response

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def fetch_all(handler: Handler, requests: list[tuple[str, dict[str, str] | None]],
              **config: object) -> list[Response]:
    """``Fetcher.fetch`` of each (path, headers) in turn, from one Fetcher, against a
    server whose every route is ``handler``."""
    async def go() -> list[Response]:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", handler)
        server = TestServer(app, host="127.0.0.1", port=0)
        await server.start_server()
        try:
            origin = f"http://127.0.0.1:{server.port}"
            cfg = CrawlConfig(start_url=origin + "/", **config)  # type: ignore[arg-type]
            async with Fetcher(cfg) as fetcher:
                return [await fetcher.fetch(origin + path, want_body=lambda s, t: s == 200,
                                            headers=headers) for path, headers in requests]
        finally:
            await server.close()
    return anyio.run(go)


def fetch(handler: Handler, path: str = "/p", **config: object) -> Response:
    return fetch_all(handler, [(path, None)], **config)[0]


def test_retry_after_is_capped() -> None:
    calls = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(time.monotonic())
        if len(calls) == 1:
            return web.Response(status=503, headers={"Retry-After": "3600"})
        return web.Response(text="ok")

    started = time.monotonic()
    response = fetch(handler, max_retry_after=0.2)
    assert response.status == 200 and response.attempts == 2 and response.body == b"ok"
    assert time.monotonic() - started < 5


def test_retries_are_bounded() -> None:
    calls = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(1)
        return web.Response(status=500)

    response = fetch(handler, retries=1)
    assert response.status == 500 and len(calls) == 2


def test_404_is_not_retried() -> None:
    calls = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(1)
        return web.Response(status=404)

    assert fetch(handler).status == 404 and len(calls) == 1


def test_connect_error_becomes_a_value() -> None:
    async def go(port: int) -> Response:
        cfg = CrawlConfig(start_url=f"http://127.0.0.1:{port}/", retries=0)
        async with Fetcher(cfg) as fetcher:
            return await fetcher.fetch(f"http://127.0.0.1:{port}/", want_body=lambda s, t: True)

    with socket.socket() as probe:  # bound, never listening: the port refuses connections
        probe.bind(("127.0.0.1", 0))
        response = anyio.run(go, probe.getsockname()[1])
    assert response.status is None and response.error is ErrorKind.CONNECT


def test_url_is_sent_exactly_as_normalised() -> None:
    seen = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.raw_path)
        return web.Response(text="ok")

    assert fetch(handler, path="/a%2Fb/%7Ex;p?q=%20+&r").status == 200
    assert seen == ["/a%2Fb/%7Ex;p?q=%20+&r"]


def test_conditional_headers_and_304() -> None:
    async def handler(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return web.Response(text="fresh", headers={"ETag": '"v1"'})

    first, again = fetch_all(handler, [("/", None), ("/", {"If-None-Match": '"v1"'})])
    assert (first.status, first.body, first.etag) == (200, b"fresh", '"v1"')
    assert (again.status, again.body, again.etag) == (304, None, '"v1"')


def test_repeated_headers_are_all_kept() -> None:
    async def handler(request: web.Request) -> web.Response:
        response = web.Response(text="x")
        response.headers.add("X-Robots-Tag", "noindex")
        response.headers.add("X-Robots-Tag", "nofollow")
        response.headers.add("Link", '<http://127.0.0.1/c>; rel="canonical"')
        return response

    response = fetch(handler)
    assert response.x_robots_tag == ["noindex", "nofollow"]
    assert response.link == ['<http://127.0.0.1/c>; rel="canonical"']


def test_gzip_and_deflate_bodies_are_decoded_within_the_cap() -> None:
    body = b"<p>" + b"a" * 5000

    async def gz(request: web.Request) -> web.Response:
        return web.Response(body=gzip.compress(body), headers={"Content-Encoding": "gzip"})

    async def raw_deflate(request: web.Request) -> web.Response:
        compressor = zlib.compressobj(wbits=-15)
        data = compressor.compress(body) + compressor.flush()
        return web.Response(body=data, headers={"Content-Encoding": "deflate"})

    assert fetch(gz).body == body
    assert fetch(raw_deflate).body == body
    assert fetch(gz, max_page_bytes=1000).error is ErrorKind.TOO_LARGE


def test_corrupt_or_unknown_encoding_is_a_decoding_error() -> None:
    async def corrupt(request: web.Request) -> web.Response:
        return web.Response(body=b"not gzip at all", headers={"Content-Encoding": "gzip"})

    async def brotli(request: web.Request) -> web.Response:
        return web.Response(body=b"\x00", headers={"Content-Encoding": "br"})

    assert fetch(corrupt, retries=0).error is ErrorKind.DECODING
    assert fetch(brotli, retries=0).error is ErrorKind.DECODING


def test_long_response_headers_are_accepted() -> None:
    # Real sites send Content-Security-Policy and Link headers of 10-20 KB.
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text="ok", headers={"Content-Security-Policy": "a" * 20_000,
                                                "Link": "<http://127.0.0.1/x>; rel=x, " * 700})

    response = fetch(handler)
    assert response.status == 200 and response.body == b"ok"
    assert len(response.link[0]) > 16_000


def test_a_session_cookie_is_sent_back_even_to_an_ip_host() -> None:
    seen: list[str | None] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Cookie"))
        response = web.Response(text="ok")
        response.set_cookie("session", "abc")
        return response

    fetch_all(handler, [("/a", None), ("/b", None)])
    assert seen == [None, "session=abc"]
