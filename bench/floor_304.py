"""The floor of a re-crawl: the same conditional GETs through the same HTTP stack, nothing else.

    python bench/floor_304.py STATE_FILE [--concurrency 32] [--stack httpx|aiohttp] [--http2]

Reads every URL that answered 200 in the last run, with its ETag and
Last-Modified, from a ``--state`` file, and sends exactly those conditional
requests from ``--concurrency`` tasks: no robots.txt, no frontier, no state
writes, no sitemap. ``--stack httpx`` (the default) sends them the way the
crawler does — httpx requests built by its request factory, through the
transport API of the transport the crawler would use (aiohttp's engine, or
httpx's own with ``--http2``), bodies read through ``aiter_raw`` — so a
second run's time divided by this one's is what the crawler adds to its HTTP
stack. ``--stack aiohttp`` is bare
aiohttp, the floor of earlier measurements. The whole process (interpreter
and imports included) is what ``bench.py --incremental`` times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import time


def conditional_requests(state: str) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT u.url, p.etag, p.last_modified FROM pages p "
                          "JOIN urls u ON u.id = p.url_id WHERE p.status = 200").fetchall()
    requests = []
    for url, etag, last_modified in rows:
        headers = [("If-None-Match", etag)] if etag else []
        if last_modified:
            headers.append(("If-Modified-Since", last_modified))
        requests.append((url, tuple(headers)))
    return requests


async def through_httpx(requests: list[tuple[str, tuple[tuple[str, str], ...]]],
                        concurrency: int, http2: bool) -> dict[int, int]:
    import httpx

    from crawler.http.fetch import _origin
    from crawler.http.prebuilt import RequestFactory
    from crawler.http.transports import open_transport

    statuses: dict[int, int] = {}
    pending = iter(requests)
    origin = _origin(requests[0][0])
    factory = RequestFactory(origin, [(b"Host", origin.partition("://")[2].encode()),
                                      (b"User-Agent", b"floor/1"),
                                      (b"Accept-Encoding", b"gzip, deflate")])
    transport: httpx.AsyncBaseTransport = open_transport(origin + "/", http2=http2,
                                                         concurrency=concurrency)
    async with transport:
        async def worker() -> None:
            for url, headers in pending:
                response = await transport.handle_async_request(factory.get(url, headers))
                async for _ in response.aiter_raw():
                    pass
                await response.aclose()
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return statuses


async def through_aiohttp(requests: list[tuple[str, tuple[tuple[str, str], ...]]],
                          concurrency: int) -> dict[int, int]:
    import aiohttp
    from yarl import URL

    statuses: dict[int, int] = {}
    pending = iter(requests)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as session:
        async def worker() -> None:
            for url, headers in pending:
                async with session.get(URL(url, encoded=True), headers=dict(headers),
                                       allow_redirects=False) as response:
                    await response.read()
                    statuses[response.status] = statuses.get(response.status, 0) + 1
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("state")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--stack", choices=("httpx", "aiohttp"), default="httpx")
    parser.add_argument("--http2", action="store_true")
    args = parser.parse_args()
    requests = conditional_requests(args.state)
    started = time.monotonic()
    if args.stack == "httpx":
        statuses = asyncio.run(through_httpx(requests, args.concurrency, args.http2))
    else:
        statuses = asyncio.run(through_aiohttp(requests, args.concurrency))
    print(json.dumps({"requests": len(requests), "statuses": statuses,
                      "loop_wall": round(time.monotonic() - started, 3)}))


if __name__ == "__main__":
    main()
