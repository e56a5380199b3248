"""The engine's crawl in phases (``coordinator.crawl`` runs them in order): checks
before anything is fetched, a new result, start-up (robots.txt and the start URL),
the pages links lead to, the live sitemap's orphans, and what the workers did."""

from __future__ import annotations

import asyncio

from crawler.config import CrawlConfig
from crawler.core import startup_gc
from crawler.core.errors import StartUrlError
from crawler.engine.result import CrawlResult
from crawler.engine.start_up import check_start, load_robots, while_robots_travels
from crawler.http.fetch import Fetcher
from crawler.render.browser import find_browser, require_playwright
from crawler.store.record_store import RecordStore
from crawler.store.skipped_store import SkippedStore
from crawler.urls.robots import RobotsPolicy
from crawler.urls.scope import Scope


def check_before_fetching(config: CrawlConfig, start: str, scope: Scope) -> None:
    if not scope.contains(start):
        raise StartUrlError(f"start URL {start} is outside the scope {scope.root} (see --prefix)")
    if config.render != "never":  # before anything is fetched: say what is missing
        require_playwright()
        find_browser(config.browser)


def new_result(config: CrawlConfig, start: str) -> CrawlResult:
    result = CrawlResult(start_url=start)
    result.extract_names = tuple(rule.name for rule in config.extraction_rules())
    result.state_kept = config.state_path is not None
    if config.links_path is not None:
        from crawler.store.link_spool import LinkSpool

        result.links = LinkSpool()
    # Past a threshold records and skipped URLs live on disk: peak memory stops
    # growing with the site (crawler.store.record_store, crawler.store.skipped_store).
    result.records = RecordStore()
    result.skipped = SkippedStore()  # type: ignore[assignment]
    # the event loop's clock, which anyio.current_time() reads, without loading
    # anyio's machinery before the first request (see start_up.while_robots_travels)
    result.stats.started = asyncio.get_running_loop().time()
    return result


async def start_up(fetcher: Fetcher, config: CrawlConfig, scope: Scope, result: CrawlResult,
                    *, listing: bool) -> RobotsPolicy:
    """robots.txt read, the start URL allowed by it, its Crawl-delay kept."""
    policy = await load_robots(fetcher, scope, config, result, when_sent=while_robots_travels)
    startup_gc.resume()  # if the transport could not say when robots.txt went
    check_start(result.start_url, scope, policy, result, listing)
    delay = policy.crawl_delay()
    if delay:
        result.crawl_delay_asked = delay
        result.crawl_delay_used = min(delay, config.max_crawl_delay)
        fetcher.gate.raise_interval(result.crawl_delay_used)
    return policy


def listing(config: CrawlConfig, seed_sitemap: object | None) -> bool:
    """List mode (--no-follow with a list): the list is the crawl, and START_URL only
    says where the site is; robots.txt's answer says it is reachable."""
    return not config.follow and (config.urls_file is not None or seed_sitemap is not None)


def note_workers(result: CrawlResult, pages: object) -> None:
    """--workers: the workers given up, and when workers were added (auto)."""
    from crawler.engine.adaptive_pages import AdaptivePages  # loaded by now
    from crawler.engine.page_fetcher import PageFetcher

    if not isinstance(pages, PageFetcher):  # worker processes, or maybe some
        result.workers_lost = list(pages.lost)  # type: ignore[attr-defined]
    if isinstance(pages, AdaptivePages):
        result.workers_added_at = pages.started_at_page
