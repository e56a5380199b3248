"""Fetcher edges with httpx.MockTransport (each is also proven over a socket in tests/e2e)."""

from __future__ import annotations

import gzip
import time
import zlib

import anyio
import httpx

from crawler.config import CrawlConfig
from crawler.errors import ErrorKind
from crawler.fetch import Fetcher


def fetch(handler, **config: object):
    async def go():
        cfg = CrawlConfig(start_url="http://h/", **config)  # type: ignore[arg-type]
        async with Fetcher(cfg, transport=httpx.MockTransport(handler)) as fetcher:
            return await fetcher.fetch("http://h/p", want_body=lambda s, t: s == 200)
    return anyio.run(go)


def test_retry_after_is_capped() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(time.monotonic())
        if len(calls) == 1:
            return httpx.Response(503, headers={"Retry-After": "3600"})
        return httpx.Response(200, text="ok")

    started = time.monotonic()
    response = fetch(handler, max_retry_after=0.2)
    assert response.status == 200 and response.attempts == 2
    assert time.monotonic() - started < 5


def test_retries_are_bounded() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(500)

    response = fetch(handler, retries=1)
    assert response.status == 500 and len(calls) == 2


def test_404_is_not_retried() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(404)

    assert fetch(handler).status == 404 and len(calls) == 1


def test_connect_error_becomes_a_value() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    response = fetch(handler, retries=0)
    assert response.status is None and response.error is ErrorKind.CONNECT


def test_gzip_and_deflate_bodies_are_decoded_within_the_cap() -> None:
    body = b"<p>" + b"a" * 5000

    def gz(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Encoding": "gzip"},
                              stream=httpx.ByteStream(gzip.compress(body)))

    def raw_deflate(request: httpx.Request) -> httpx.Response:
        compressor = zlib.compressobj(wbits=-15)
        data = compressor.compress(body) + compressor.flush()
        return httpx.Response(200, headers={"Content-Encoding": "deflate"},
                              stream=httpx.ByteStream(data))

    assert fetch(gz).body == body
    assert fetch(raw_deflate).body == body
    assert fetch(gz, max_page_bytes=1000).error is ErrorKind.TOO_LARGE


def test_corrupt_or_unknown_encoding_is_a_decoding_error() -> None:
    def corrupt(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Encoding": "gzip"},
                              stream=httpx.ByteStream(b"not gzip at all"))

    def brotli(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Encoding": "br"},
                              stream=httpx.ByteStream(b"\x00"))

    assert fetch(corrupt, retries=0).error is ErrorKind.DECODING
    assert fetch(brotli, retries=0).error is ErrorKind.DECODING
