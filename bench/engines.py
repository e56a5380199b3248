"""Which HTTP engine under httpx's transport API costs the crawl least (issue #27).

Each engine fetches the same pages of a synthetic site from a local nginx, 32
requests in flight on keep-alive connections, every body read to the end, in
one process; the figure is that process's CPU (every thread: pyreqwest runs a
Rust runtime beside the loop) divided by the requests. Engines alternate
within each round, so a noisy moment costs every engine alike.

    python bench/engines.py --pages 10000 --requests 6000 --rounds 3

* ``aiohttp``          aiohttp alone (no httpx objects): the floor of today's engine
* ``ours``             the crawler's default transport (crawler.http.h1_transport: an
                       asyncio protocol, llhttp's parser), fed requests as the
                       crawler builds them (crawler.http.prebuilt)
* ``aiohttp-adapter``  the crawler's transport through a proxy, and its default until
                       2026-11-26 (crawler.http.aiohttp_transport), fed the same
* ``pyreqwest``        pyreqwest alone (reqwest/hyper, a compiled wheel)
* ``pyreqwest-httpx``  pyreqwest's own transport for httpx, fed the same requests
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import Nginx, prepare

IN_FLIGHT = 32


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def drive(urls: list[str], one: Callable[[str], Awaitable[int]]) -> int:
    """Fetch every URL, IN_FLIGHT at a time; the bytes read."""
    queue = iter(urls)
    total = 0

    async def lane() -> None:
        nonlocal total
        for url in queue:
            size = await one(url)  # (``total += await`` would read total before the await)
            total += size

    await asyncio.gather(*(lane() for _ in range(IN_FLIGHT)))
    return total


async def run_aiohttp(urls: list[str]) -> int:
    import aiohttp
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=IN_FLIGHT),
                                     auto_decompress=False) as session:
        async def one(url: str) -> int:
            async with session.get(url) as response:
                return len(await response.read())
        return await drive(urls, one)


async def run_httpx_transport(urls: list[str], transport: object) -> int:
    import httpx

    from crawler.http.prebuilt import RequestFactory
    origin = urls[0].split("/", 3)
    factory = RequestFactory("/".join(origin[:3]), [(b"User-Agent", b"bench")])
    assert isinstance(transport, httpx.AsyncBaseTransport)

    async def one(url: str) -> int:
        response = await transport.handle_async_request(factory.get(url))
        size = 0
        try:
            async for chunk in response.stream:  # type: ignore[union-attr]
                size += len(chunk)
        finally:
            await response.aclose()
        return size

    try:
        return await drive(urls, one)
    finally:
        await transport.aclose()


async def run_ours(urls: list[str]) -> int:
    from crawler.http.transports import open_transport
    return await run_httpx_transport(urls, open_transport(urls[0], http2=False,
                                                          concurrency=IN_FLIGHT))


async def run_aiohttp_adapter(urls: list[str]) -> int:
    """The crawler's transport before the lean one: aiohttp's engine under httpx's API
    (still the transport through a proxy)."""
    from crawler.http.aiohttp_transport import AiohttpTransport
    from crawler.http.transports import (
        KEEPALIVE_SECONDS,
        MAX_HEADER_BYTES,
        MAX_HEADERS,
        tls_context,
    )
    return await run_httpx_transport(urls, AiohttpTransport(
        ssl_context=tls_context("http"), max_connections=IN_FLIGHT,
        keepalive_expiry=KEEPALIVE_SECONDS, proxy=None, max_header_bytes=MAX_HEADER_BYTES,
        max_headers=MAX_HEADERS))


def _pyreqwest_client() -> object:
    from pyreqwest.client import ClientBuilder
    return (ClientBuilder().max_connections(IN_FLIGHT).http1_only().gzip(False)
            .brotli(False).deflate(False).zstd(False).build())


async def run_pyreqwest(urls: list[str]) -> int:
    client = _pyreqwest_client()

    async def one(url: str) -> int:
        response = await client.get(url).build().send()  # type: ignore[attr-defined]
        return len(await response.bytes())

    try:
        return await drive(urls, one)
    finally:
        await client.close()  # type: ignore[attr-defined]


async def run_pyreqwest_httpx(urls: list[str]) -> int:
    from pyreqwest.compatibility.httpx import HttpxTransport
    return await run_httpx_transport(urls, HttpxTransport(_pyreqwest_client()))  # type: ignore[arg-type]


async def run_pyreqwest_lean(urls: list[str]) -> int:
    """A minimal adapter (what a crawler-owned one could cost): the URL as built,
    raw headers in, the body as the chunks arrive."""
    import httpx

    from crawler.http.prebuilt import RAW_URL

    client = _pyreqwest_client()

    class Body(httpx.AsyncByteStream):
        def __init__(self, context: object, response: object) -> None:
            self.context, self.reader = context, response.body_reader  # type: ignore[attr-defined]

        async def __aiter__(self):  # type: ignore[no-untyped-def]
            while (chunk := await self.reader.read_chunk()) is not None:
                yield chunk.to_bytes()

        async def aclose(self) -> None:
            await self.context.__aexit__(None, None, None)  # type: ignore[attr-defined]

    class Lean(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            context = client.request(  # type: ignore[attr-defined]
                request.method, request.extensions.get(RAW_URL) or str(request.url)
            ).headers([(k.decode("latin-1"), v.decode("latin-1"))
                       for k, v in request.headers.raw]).build_streamed()
            response = await context.__aenter__()
            return httpx.Response(response.status, headers=list(response.headers.items()),
                                  stream=Body(context, response), request=request)

        async def aclose(self) -> None:
            await client.close()  # type: ignore[attr-defined]

    return await run_httpx_transport(urls, Lean())


ENGINES = {"aiohttp": run_aiohttp, "ours": run_ours,
           "aiohttp-adapter": run_aiohttp_adapter, "pyreqwest": run_pyreqwest,
           "pyreqwest-httpx": run_pyreqwest_httpx, "pyreqwest-lean": run_pyreqwest_lean}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--port", type=int, default=18461)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    names = []
    for name in args.engines.split(","):
        if name.startswith("pyreqwest") and importlib.util.find_spec("pyreqwest") is None:
            print(f"skipping {name}: pip install pyreqwest to measure it", file=sys.stderr)
        else:
            names.append(name)
    args.engines = ",".join(names)
    prepared = prepare("synthetic", args.pages)
    assert prepared is not None
    root, truth, _start = prepared
    with Nginx(root, args.port) as nginx:
        base = nginx.origin
        urls = [base + path for path in sorted(truth)[:args.requests]]
        rows = []
        for round_ in range(args.rounds):
            names = args.engines.split(",")
            names = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in names:
                asyncio.run(ENGINES[name](urls[:64]))  # warm: imports, connections
                cpu, wall = cpu_seconds(), time.perf_counter()
                size = asyncio.run(ENGINES[name](urls))
                cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
                row = {"engine": name, "round": round_, "requests": len(urls), "bytes": size,
                       "cpu_ms_per_request": round(cpu / len(urls) * 1000, 4),
                       "requests_per_s": round(len(urls) / wall)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.results:
        with args.results.open("a") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
    for name in args.engines.split(","):
        mine = sorted(row["cpu_ms_per_request"] for row in rows if row["engine"] == name)
        print(f"{name:16} CPU ms/request median {mine[len(mine) // 2]:.3f} "
              f"[{mine[0]:.3f}-{mine[-1]:.3f}]")


if __name__ == "__main__":
    main()
