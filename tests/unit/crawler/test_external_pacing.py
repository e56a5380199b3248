"""An external origin's pacing (crawler.http.external): requests that wait together
still leave one interval apart, and the server sees them at least that far apart."""

from __future__ import annotations

import time
from itertools import pairwise

import anyio
import httpx

from crawler.config import CrawlConfig
from crawler.http.external import Origin
from crawler.http.link_check import CheckOptions


def test_requests_waiting_together_leave_an_interval_apart() -> None:
    origin = Origin("http://127.0.0.1:9", CheckOptions.of(
        CrawlConfig(start_url="http://127.0.0.1:9/", external_rate=10)))
    left: list[float] = []

    async def go() -> None:
        async def one() -> None:
            await origin.pace.wait_turn()
            left.append(anyio.current_time())

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(one)
        await origin.client.aclose()

    anyio.run(go)
    assert min(b - a for a, b in pairwise(sorted(left))) >= 0.099


def test_the_interval_counts_from_the_answer_so_a_slow_arrival_does_not_shorten_it() -> None:
    """The gap a server sees is what politeness promises: the first request is 60 ms
    on its way (a new connection, a loaded machine), the second none; the server must
    still see them one interval apart."""
    arrived: list[float] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if not arrived:
            await anyio.sleep(0.06)
        arrived.append(time.monotonic())
        return httpx.Response(200)

    config = CrawlConfig(start_url="http://127.0.0.1:9/", external_rate=5, retries=0,
                         external_max_rate=5)
    origin = Origin("http://127.0.0.1:9", CheckOptions.of(config))
    origin.client = httpx.AsyncClient(transport=httpx.MockTransport(handler))

    async def go() -> None:
        await origin.request("HEAD", "http://127.0.0.1:9/a")
        await origin.request("HEAD", "http://127.0.0.1:9/b")
        await origin.client.aclose()

    anyio.run(go)
    assert arrived[1] - arrived[0] >= 0.2
