"""The floor of a re-crawl: bare aiohttp conditional GETs, nothing else.

    python bench/floor_304.py STATE_FILE [--concurrency 32]

Reads every URL that answered 200 in the last run, with its ETag and
Last-Modified, from a ``--state`` file, and sends exactly those conditional
requests with one aiohttp session and ``--concurrency`` tasks: no robots.txt,
no frontier, no state writes, no sitemap. The whole process (interpreter and
aiohttp import included) is what ``bench.py --incremental`` times, so its
ratio to the first crawl is the best a second run built on aiohttp could do
on this machine; the crawler's own second run is measured against it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import time

import aiohttp
from yarl import URL


def conditional_requests(state: str) -> list[tuple[str, dict[str, str]]]:
    with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT u.url, p.etag, p.last_modified FROM pages p "
                          "JOIN urls u ON u.id = p.url_id WHERE p.status = 200").fetchall()
    requests = []
    for url, etag, last_modified in rows:
        headers = {"If-None-Match": etag} if etag else {}
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        requests.append((url, headers))
    return requests


async def fetch_all(requests: list[tuple[str, dict[str, str]]], concurrency: int) -> dict:
    statuses: dict[int, int] = {}
    pending = iter(requests)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as session:
        async def worker() -> None:
            for url, headers in pending:
                async with session.get(URL(url, encoded=True), headers=headers,
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
    args = parser.parse_args()
    requests = conditional_requests(args.state)
    started = time.monotonic()
    statuses = asyncio.run(fetch_all(requests, args.concurrency))
    print(json.dumps({"requests": len(requests), "statuses": statuses,
                      "loop_wall": round(time.monotonic() - started, 3)}))


if __name__ == "__main__":
    main()
