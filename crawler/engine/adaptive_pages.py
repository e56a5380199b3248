"""``--workers auto`` (the default): one process until the crawl proves large and
CPU-bound on a machine with cores to spare, then worker processes.

Worker processes cost a start (a fresh interpreter importing the crawler, ~0.5 s
of CPU each) and a hop per page; on a small site that is all cost, and two
workers made the PostgreSQL docs (1,169 pages) slower than one process. And one
crawling process already keeps up to two cores busy: its event loop, and the
child that parses its pages (``parse_sandbox.py``). So on two cores workers
only add processes competing for the same cores (s10k on this project's 2-core
machine: 1,638 pages/s with two workers against 1,951 with none,
``bench/results/workers-auto-2026-11-25.jsonl``), and ``auto`` never starts
one there: :func:`auto_workers` is half the usable cores (each worker brings
its own parse child), and fewer than two means none.

With two or more to add, pages are fetched here first, and every
:data:`CHECK_EVERY` pages the crawl asks:

* have :data:`MIN_PAGES` pages been fetched, and are :data:`MIN_BACKLOG` more
  waiting in the frontier? (a crawl that is large, not one near its end)
* did this process use at least :data:`BUSY` of a core since the last check?
  (CPU-bound: a slow or distant server leaves the loop idle, and more
  processes would only wait on it in parallel)

When all hold, a :class:`WorkerPool` starts in the background; once it is up,
new pages go to it, and the pages in flight here finish here. The decision is
made once: the pool is never taken down.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from crawler.config import CrawlConfig
from crawler.engine.cores import worker_count
from crawler.engine.page_fetcher import PageFetcher
from crawler.frontier.job import Job
from crawler.http.fetch import Fetcher
from crawler.page.read import PageOutcome
from crawler.urls.robots import RobotsPolicy

if TYPE_CHECKING:
    from crawler.engine.worker_pool import WorkerPool

MIN_PAGES = 2000
MIN_BACKLOG = 2000
BUSY = 0.8
CHECK_EVERY = 250


def auto_workers(concurrency: int) -> int:
    """How many workers ``auto`` may add: half the usable cores (a worker and its
    parse child each want one), never more than ``--concurrency``; 0 or 1 mean none."""
    given = _override()
    if given is not None:
        return given[4]
    return worker_count("auto", concurrency) // 2


def thresholds() -> tuple[int, int, float, int]:
    """(MIN_PAGES, MIN_BACKLOG, BUSY, CHECK_EVERY), unless overridden."""
    given = _override()
    return given[:4] if given is not None else (MIN_PAGES, MIN_BACKLOG, BUSY, CHECK_EVERY)


def _override() -> tuple[int, int, float, int, int] | None:
    """SITEMAP_CRAWLER_AUTO_WORKERS="pages,backlog,busy,every,workers" sets other
    thresholds and worker count: for tests, which cannot afford a crawl of
    thousands of pages on a machine of many cores."""
    given = os.environ.get("SITEMAP_CRAWLER_AUTO_WORKERS")
    if given:
        with contextlib.suppress(ValueError):
            pages, backlog, busy, every, workers = given.split(",")
            return int(pages), int(backlog), float(busy), max(1, int(every)), int(workers)
    return None


class AdaptivePages:
    """Used by the coordinator like a :class:`PageFetcher`; an async context manager."""

    def __init__(self, config: CrawlConfig, fetcher: Fetcher, clean: Callable[[str], str],
                 max_workers: int, robots: RobotsPolicy | None = None) -> None:
        self.config = config
        self.fetcher = fetcher
        self.max_workers = max_workers
        self.robots = robots
        self.local = PageFetcher(config, fetcher, clean, robots)
        self.backlog: Callable[[], int] = lambda: 0  # the frontier's waiting jobs (set later)
        self.pool: WorkerPool | None = None
        self.started_at_page: int | None = None  # when workers were added
        self._fetched = 0
        self._mark = (time.monotonic(), time.process_time())
        self._group: TaskGroup | None = None
        self._closing = anyio.Event()
        self._min_pages, self._min_backlog, self._busy, self._every = thresholds()

    async def __aenter__(self) -> AdaptivePages:
        await self.local.__aenter__()
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._closing.set()
        assert self._group is not None
        try:
            await self._group.__aexit__(None, None, None)
        except BaseExceptionGroup as group:
            if len(group.exceptions) == 1:  # a lost worker's error, as itself
                raise group.exceptions[0] from None
            raise
        finally:
            await self.local.__aexit__(*exc_info)

    @property
    def lost(self) -> list[str]:
        """Why each lost worker was given up (for the report)."""
        return list(self.pool.lost) if self.pool is not None else []

    async def fetch(self, job: Job) -> PageOutcome:
        if self.pool is not None:
            return await self.pool.fetch(job)
        outcome = await self.local.fetch(job)
        self._fetched += 1
        if self._fetched % self._every == 0 and self.started_at_page is None:
            self._consider_workers()
        return outcome

    def _consider_workers(self) -> None:
        now, cpu = time.monotonic(), time.process_time()
        then, cpu_then = self._mark
        self._mark = (now, cpu)
        busy = (cpu - cpu_then) / max(now - then, 1e-9)
        if (self.max_workers > 1 and self._fetched >= self._min_pages
                and self.backlog() >= self._min_backlog and busy >= self._busy):
            self.started_at_page = self._fetched
            assert self._group is not None
            self._group.start_soon(self._run_pool)

    async def _run_pool(self) -> None:
        """The pool's whole life in one task: started, used until the crawl ends, closed.
        (Imported here: a crawl that never adds workers does not load them.)"""
        from crawler.engine.worker_pool import worker_pool

        async with worker_pool(self.config, self.max_workers, self.fetcher,
                               self.robots) as pool:
            if self._closing.is_set():
                return
            self.pool = pool
            await self._closing.wait()
