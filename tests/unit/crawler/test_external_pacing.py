"""An external origin's pacing (crawler.http.external): requests that wait together
still leave one interval apart, each counted from when the last really left."""

from __future__ import annotations

from itertools import pairwise

import anyio

from crawler.config import CrawlConfig
from crawler.http.external import _Origin


def test_requests_waiting_together_leave_an_interval_apart() -> None:
    origin = _Origin("http://127.0.0.1:9", CrawlConfig(start_url="http://127.0.0.1:9/",
                                                         external_rate=10))
    left: list[float] = []

    async def go() -> None:
        async def one() -> None:
            await origin.pace()
            left.append(anyio.current_time())

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(one)
        await origin.client.aclose()

    anyio.run(go)
    assert min(b - a for a, b in pairwise(sorted(left))) >= 0.099
