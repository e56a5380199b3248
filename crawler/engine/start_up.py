"""Before the first page: robots.txt fetched (and kept to republish), the start URL
checked against it, and who will fetch the pages (this process or workers).

Apart from the coordinator (``coordinator.py``), which runs the crawl once these
have answered.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from crawler.config import AUTO_WORKERS, CrawlConfig
from crawler.core import startup_gc
from crawler.core.errors import StartUrlError
from crawler.engine.result import CrawlResult
from crawler.http.fetch import Fetcher
from crawler.urls.normalize import resolve_link
from crawler.urls.robots import RobotsMode, RobotsPolicy, allow_all, policy_from_response
from crawler.urls.scope import Scope

if TYPE_CHECKING:
    from crawler.engine.adaptive_pages import AdaptivePages
    from crawler.engine.page_fetcher import PageFetcher
    from crawler.engine.worker_pool import WorkerPool

ROBOTS_MAX_REDIRECTS = 5
# robots.txt is parsed to 512 KiB (RFC 9309 §2.5: at least 500 KiB), whatever
# --max-page-bytes says, and kept whole up to this for republishing beside the sitemaps.
ROBOTS_KEPT_BYTES = 8 * 1024 * 1024


@asynccontextmanager
async def page_source(config: CrawlConfig, fetcher: Fetcher,
                       clean: Callable[[str], str], robots: RobotsPolicy,
                       ) -> AsyncIterator[PageFetcher | WorkerPool | AdaptivePages]:
    """Who fetches and reads the pages: this process, ``--workers`` processes, or
    (``--workers auto``, the default) this process until the crawl needs more."""
    # imported here: they load while robots.txt is on its way (see while_robots_travels)
    from crawler.engine.adaptive_pages import AdaptivePages, auto_workers
    from crawler.engine.page_fetcher import PageFetcher

    may_add = auto_workers(config.concurrency) if config.workers == AUTO_WORKERS else 0
    if config.workers > 1:
        from crawler.engine.worker_pool import worker_pool  # loaded only to start workers

        async with worker_pool(config, config.workers, fetcher, robots) as pool:
            yield pool
    elif may_add > 1:
        async with AdaptivePages(config, fetcher, clean, may_add, robots) as pages:
            yield pages
    else:
        async with PageFetcher(config, fetcher, clean, robots) as pages:
            yield pages


def check_start(start: str, scope: Scope, policy: RobotsPolicy, result: CrawlResult,
                 listing: bool = False) -> None:
    if result.robots_error is not None:
        raise StartUrlError(
            f"{scope.origin} is unreachable: {result.robots_error} (fetching /robots.txt)")
    if not listing and not policy.allows(start):
        why = (
            f"robots.txt could not be fetched (status {result.robots_status or 'none'}), "
            "which RFC 9309 treats as 'disallow everything'"
            if policy.mode is RobotsMode.DISALLOW_ALL
            else "robots.txt disallows it for our user-agent"
        )
        raise StartUrlError(f"start URL {start} is not allowed: {why} (--ignore-robots)")


def while_robots_travels() -> None:
    """What loads while the first request (robots.txt) is on the wire.

    anyio's event-loop machinery, the page reader (lexbor, the parse child's
    module) and protego are needed only once an answer is in: imported before
    the first request they kept it ~35 ms later; imported here, after the
    request is written, they load during the round trip, which on a real
    network hides them (on loopback the answer waits in the socket). Again
    for a redirect or a retry, at the cost of a look in ``sys.modules``.
    A transport that cannot say when a request went (through a proxy) never
    calls it, and each is imported where it is first used."""
    importlib.import_module("anyio._backends._asyncio")
    importlib.import_module("protego")
    importlib.import_module("crawler.engine.adaptive_pages")  # and the page fetcher
    startup_gc.resume()


async def load_robots(
    fetcher: Fetcher, scope: Scope, config: CrawlConfig, result: CrawlResult,
    when_sent: Callable[[], None] | None = None,
) -> RobotsPolicy:
    """Fetch ``/robots.txt``, following up to 5 redirects wherever they lead (RFC 9309
    §2.3.1.2), and keep it whole for republishing beside the sitemaps.

    With ``--ignore-robots`` it is still read, for that copy only: ignoring the
    rules changes what we fetch, never the rules the site publishes."""
    token = config.robots_token
    url = scope.origin + "/robots.txt"
    for _ in range(ROBOTS_MAX_REDIRECTS + 1):
        answer = await fetcher.fetch(
            url, want_body=lambda status, _type: 200 <= status < 300,
            max_bytes=ROBOTS_KEPT_BYTES + 1, truncate=True, when_sent=when_sent)
        result.robots_status = answer.status
        if answer.status in (301, 302, 303, 307, 308):
            target = resolve_link(url, answer.location or "")
            if target is None:
                break  # nowhere to go: unavailable, like a 4xx
            url = target
            continue
        if answer.status is not None and 200 <= answer.status < 300:
            body = answer.body or b""
            if len(body) > ROBOTS_KEPT_BYTES:
                result.robots_txt_withheld = (
                    f"the site's robots.txt is larger than {ROBOTS_KEPT_BYTES // 2**20} MiB, "
                    "too large to republish whole")
            else:
                result.robots_txt = body
        elif answer.status is None or answer.status >= 500:
            error = answer.error.value if answer.error else "no answer"
            why = (f"answered {answer.status}" if answer.status is not None
                   else f"could not be fetched ({error})")
            result.robots_txt_withheld = f"the site's robots.txt {why}"
            if answer.status is None and not config.ignore_robots:
                result.robots_error = error
        if config.ignore_robots:
            return allow_all(token)
        return policy_from_response(answer.status, answer.body, token)
    return allow_all(token)
