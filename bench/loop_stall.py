"""How long the crawl ever blocks its event loop.

    python bench/loop_stall.py URL [--state FILE] [--concurrency 32] [--runs 2]

Every request has a deadline and every worker shares one event loop, so work
done on the loop (SQLite commits, parsing a large page) holds every request in
flight. This runs the real crawl (``crawler.engine.coordinator.crawl``) in-process beside a
watchdog task that asks to wake every 5 ms and records how late it wakes: the
longest lateness is the longest stall. ``--runs 2`` with ``--state`` measures
a first crawl and a re-crawl of 304s. Writing the sitemaps happens after the
loop has ended and is not measured here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import anyio

from crawler.config import CrawlConfig
from crawler.engine.coordinator import crawl

TICK = 0.005


async def measured(config: CrawlConfig) -> dict[str, float]:
    stalls: list[float] = []

    async def watchdog() -> None:
        while True:
            asked = time.perf_counter()
            await anyio.sleep(TICK)
            stalls.append(time.perf_counter() - asked - TICK)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        group.start_soon(watchdog)
        result = await crawl(config)
        group.cancel_scope.cancel()
    stalls.sort()
    return {"pages": result.stats.fetched, "wall_s": round(time.perf_counter() - started, 2),
            "longest_stall_ms": round(1000 * stalls[-1], 1),
            "p999_stall_ms": round(1000 * stalls[int(len(stalls) * 0.999)], 1),
            "median_stall_ms": round(1000 * statistics.median(stalls), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url")
    parser.add_argument("--state")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for run in range(1, args.runs + 1):
        config = CrawlConfig(start_url=args.url, concurrency=args.concurrency,
                             state_path=args.state)
        print(json.dumps({"run": run, **anyio.run(measured, config)}), flush=True)


if __name__ == "__main__":
    main()
