"""From a job to its page outcome: the requests one URL needs, then reading it.

This is the whole of what a worker does, whether it is a task of the
coordinator's own event loop or of a worker process (``crawler.worker_pool``):
it keeps no crawl-wide state, so running it in N processes changes nothing
but where the CPU is spent.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

import anyio.to_thread

from crawler.config import CrawlConfig
from crawler.documents import HEAD_REFUSED, content_types, extension
from crawler.frontier import Job
from crawler.http.fetch import Response
from crawler.page import PageOutcome, failed_page, read_page, wants_body

# Pages larger than this are parsed in a worker thread (a 256 KiB page parses in
# about 2 ms; below that the thread hop costs more than it saves).
THREAD_ABOVE = 256 * 1024


class Fetches(Protocol):
    """What a page fetcher needs of :class:`crawler.http.fetch.Fetcher`."""

    async def fetch(self, url: str, **kwargs: object) -> Response: ...


def _no_body(_status: int, _content_type: str | None) -> bool:
    return False


class PageFetcher:
    """Fetches and reads the pages of one crawl with one :class:`Fetcher`."""

    def __init__(self, config: CrawlConfig, fetcher: Fetches,
                 clean: Callable[[str], str] | None = None) -> None:
        self.config = config
        self.fetcher = fetcher
        self.clean = clean if clean is not None else config.filters().clean
        self.ignoring = config.ignore_selectors if config.fingerprints else None
        self.token = config.robots_token  # derived by a regex: once, not per page
        self.documents = content_types(config.documents)

    async def fetch(self, job: Job) -> PageOutcome:
        fetch = self.fetcher.fetch
        headers = job.validators or None
        if self.documents and extension(job.url) in self.config.documents:
            # judged from its headers alone: HEAD, or a GET left unread where HEAD is refused
            response = await fetch(job.url, want_body=_no_body, method="HEAD", headers=headers)
            if response.status in HEAD_REFUSED:  # closed after the headers, never read
                response = await fetch(job.url, want_body=_no_body, drain=False,
                                       headers=headers)
            if wants_body(response.status or 0, response.content_type):
                # an HTML page behind a document's name: read as the page it is
                response = await fetch(job.url, want_body=wants_body, headers=headers)
        else:
            response = await fetch(job.url, want_body=wants_body, headers=headers)
        try:
            arguments = (response, job.depth, self.token, datetime.now(UTC), self.ignoring,
                         self.clean, self.config.images, self.documents, self.config.audit,
                         self.config.hreflang)
            if response.body is not None and len(response.body) > THREAD_ABOVE:
                # Megabytes of HTML take tens of milliseconds or more to parse: off the
                # loop, where every request in flight would wait for them.
                return await anyio.to_thread.run_sync(read_page, *arguments)
            return read_page(*arguments)
        except Exception as exc:  # one page never ends the crawl: it is that page's error
            return failed_page(response, job.depth, exc)
