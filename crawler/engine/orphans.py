"""The audit's second phase: the live sitemap's URLs that no link reached.

Once the links are exhausted, the in-scope URLs the site's own sitemaps list
and the crawl never saw are fetched (the first ``--max-orphans``; the rest
are counted), through the same admission as links (robots.txt, filters,
``--max-pages``). Each is reported as what it is (a 404, a redirect, noindex)
but never listed, its links are not followed, and nothing of the phase is
kept in the state: the next run starts from the links again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from crawler.config import CrawlConfig
from crawler.core.records import PageRecord, Verdict
from crawler.engine.admission import Admission
from crawler.engine.bookkeeping import Bookkeeping
from crawler.engine.result import CrawlResult
from crawler.page.lastmod import choose_lastmod

if TYPE_CHECKING:
    from crawler.store.live_sitemap import LiveSitemap


class OrphanPhase:
    """Queues the orphans of a live sitemap, and accepts what they turn out to be."""

    def __init__(self, config: CrawlConfig, admission: Admission, books: Bookkeeping,
                 on_record: Callable[[PageRecord, CrawlResult], None] | None) -> None:
        self.config, self.admission, self.books, self.on_record = (
            config, admission, books, on_record)
        self.active = False

    def offer(self, live: LiveSitemap) -> None:
        """Queue the in-scope URLs of the live sitemap that no link reached, within the
        crawl's limits (robots.txt, filters, --max-pages); note them in ``live``."""
        self.active = True
        self.books.stop_keeping()
        admission = self.admission
        contains, seen = admission.scope.contains, admission.frontier.seen
        for url in live.entries:
            if not contains(url):
                live.outside_crawl += 1
            elif not seen(url):
                if len(live.orphans) >= self.config.max_orphans:
                    live.orphans_unchecked += 1  # what a site claims is not ours to fetch
                    continue
                live.orphans.append(url)
                admission.consider(url, 0)

    def accept(self, record: PageRecord) -> None:
        """An orphan is what it is but never listed: the sitemap is what links reach."""
        record.lastmod = choose_lastmod(self.config.lastmod, record.lastmod, None)
        if record.verdict is Verdict.LISTED:
            record.verdict = Verdict.ORPHAN
        self.books.keep(record)
        if self.on_record is not None:
            self.on_record(record, self.books.result)
