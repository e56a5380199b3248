"""A second parse child (crawler.engine.page_fetcher): started when pages heavy to
read wait on the first while the crawling process idles, never when the child keeps
up, the pages are light or the crawling process is the one that is busy, never past
``children``; over real children."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import anyio
import pytest

from crawler.config import CrawlConfig
from crawler.core.response import Response
from crawler.engine import page_fetcher
from crawler.engine.page_fetcher import PageFetcher
from crawler.page.read import PageOutcome


def _reader(pause: float):  # type: ignore[no-untyped-def]
    def read(self: PageFetcher, response: Response, depth: int, now: datetime,
             rendered: bool = False, _probe: object = None) -> PageOutcome:
        end = time.process_time() + pause
        while time.process_time() < end:  # a page with hundreds of links to resolve
            pass
        outcome = PageOutcome.__new__(PageOutcome)
        outcome.__init__(page_fetcher.failed_page(response, depth, RuntimeError("x")).record)
        outcome.record.detail = str(os.getpid())  # who read it
        return outcome
    return read


def _readers(pause: float, in_flight: int, children: int, monkeypatch: pytest.MonkeyPatch
             ) -> tuple[set[str], int]:
    monkeypatch.setattr(PageFetcher, "read", _reader(pause))
    config = CrawlConfig(start_url="http://127.0.0.1:9/")
    pids: set[str] = set()

    async def go() -> int:
        async with PageFetcher(config, object(), children=children) as pages:  # type: ignore[arg-type]
            async def one(n: int) -> None:
                response = Response(url=f"http://127.0.0.1:9/p{n}", status=200,
                                    content_type="text/html", body=b"<p>x")
                outcome = await pages._read(response, 1, datetime.now(UTC))
                pids.add(outcome.record.detail or "")

            for _round in range(3):
                async with anyio.create_task_group() as group:
                    for n in range(in_flight):
                        group.start_soon(one, n)
            return len(pages.sandboxes)

    return pids, anyio.run(go)


def test_pages_waiting_on_the_child_get_a_second_one(monkeypatch: pytest.MonkeyPatch) -> None:
    pids, children = _readers(0.02, 24, 2, monkeypatch)
    assert children == 2 and len(pids) == 2 and str(os.getpid()) not in pids


def test_light_pages_stay_with_one_child_however_many_wait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_fetcher, "PARSE_WINDOW", 0.02)  # looked at often
    pids, children = _readers(0.0002, 200, 2, monkeypatch)  # 0.2 ms a page, 200 waiting
    assert children == 1 and len(pids) == 1


def test_a_child_that_keeps_up_stays_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    pids, children = _readers(0.0, page_fetcher.PARSE_BACKLOG - 1, 2, monkeypatch)
    assert children == 1 and len(pids) == 1


def test_no_second_child_while_the_crawling_process_is_the_busy_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_fetcher, "PARSE_IDLE", 0.0)  # as if it used every cycle,
    monkeypatch.setattr(page_fetcher, "PARSE_WINDOW", 0.0)  # measured from the first page
    pids, children = _readers(0.02, 24, 2, monkeypatch)
    assert children == 1 and len(pids) == 1


def test_one_child_when_only_one_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    pids, children = _readers(0.02, 24, 1, monkeypatch)
    assert children == 1 and len(pids) == 1
