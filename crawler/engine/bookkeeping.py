"""What a crawl keeps of each page it fetched and each URL it passed over.

Records and their counters, who links where (audits), the URLs skipped with
their reasons, and the state file's share of all of it. The coordinator
decides; this writes down what was decided, in one place, so that a restored
run, a fetched page and a skipped URL are counted the same way.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from crawler.config import CrawlConfig
from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord, SkippedUrl, Verdict
from crawler.engine.result import CrawlResult
from crawler.frontier.job import Job
from crawler.page.lastmod import choose_lastmod
from crawler.urls.filters import UrlFilters
from crawler.urls.robots import RobotsPolicy
from crawler.urls.scope import Scope

if TYPE_CHECKING:
    from crawler.page.read import PageOutcome
    from crawler.store.no_state import NoState
    from crawler.store.state import CrawlState

    State = CrawlState | NoState


class Bookkeeping:
    """The records, counters, referrers and skipped URLs of one crawl."""

    def __init__(self, config: CrawlConfig, scope: Scope, policy: RobotsPolicy,
                 filters: UrlFilters, result: CrawlResult, state: State) -> None:
        self.config, self.scope, self.policy, self.filters = config, scope, policy, filters
        self.result, self.state = result, state
        # False in the orphan phase: what it finds is reported, never kept for the next run;
        # and from the start without --state, whose NoState keeps nothing (asked for
        # every URL discovered: a million calls a million-page crawl)
        self._keeps_state = state.remembers
        if config.audit or config.check_external:
            from crawler.store.referrers import Referrers  # on disk past a threshold

            result.referrers = Referrers()
        # --check-external: who links to each out-of-scope URL, too
        self.outside_too = config.check_external
        if state.remembers:  # what earlier runs saw; loaded for --state only
            from crawler.store.incremental import remember

            self._replay = remember

    def skip(self, item: SkippedUrl) -> None:
        """A URL the crawl will not fetch, with its reason."""
        self.result.skipped.append(item)
        self.result.stats.skipped += 1
        by = self.result.stats.skipped_by
        by[item.reason.value] = by.get(item.reason.value, 0) + 1
        if self._keeps_state:
            self.state.skip(item)

    def enqueue(self, job: Job) -> None:
        """A URL the frontier took: kept in the state, so an interrupted run resumes it."""
        if self._keeps_state:
            self.state.enqueue(job)

    def stop_keeping(self) -> None:
        """The orphan phase: what it finds is reported, never kept for the next run."""
        self._keeps_state = False

    def checkpoint(self) -> None:
        """A page and what it queued, kept as one transaction."""
        self.state.checkpoint()

    def remember(self, job: Job, outcome: PageOutcome, run_time: datetime) -> PageOutcome:
        """The page as this run knows it: with --state, what earlier runs saw (a 304
        replays the stored page) and its lastmod; without, its lastmod alone."""
        if self.state.remembers:
            outcome, reused = self._replay(self.state, job, outcome,  # type: ignore[arg-type]
                                           self.config.lastmod,
                                           run_time, every_link=self.config.audit,
                                           edges=self.config.links_path is not None)
            self.result.stats.not_modified += reused
        else:
            record = outcome.record
            record.lastmod = choose_lastmod(self.config.lastmod, record.lastmod, None)
        return outcome

    def keep(self, record: PageRecord) -> None:
        """Count a fetched (or restored) page and keep its record."""
        stats = self.result.stats
        self.result.records.append(record)
        stats.fetched += 1
        if record.verdict is Verdict.LISTED:
            stats.listed += 1
        elif record.verdict is Verdict.ERROR:
            stats.errors += 1
            stats.internal_errors += record.error is ErrorKind.INTERNAL

    def keep_unlisted(self, record: PageRecord) -> None:
        """--no-list: an indexable page that stays out of the sitemap; and the page's
        same-origin images robots.txt disallows stay out of it. Applied after the
        state has stored the page, so the state keeps what the page is."""
        if record.verdict is Verdict.LISTED and self.filters.unlisted(record.url):
            record.verdict = Verdict.NO_LIST
        if record.images:
            origin = self.scope.origin
            record.images = tuple(image for image in record.images
                                  if not image.startswith(origin + "/")
                                  or self.policy.allows(image))

    def refer(self, page: str, links: list[str], anchors: dict[str, str]) -> None:
        """Who links where (audits): the page at ``page`` links to ``links``."""
        referrers, contains, clean = self.result.referrers, self.scope.contains, \
            self.filters.clean
        if referrers is None:
            return
        outside_too = self.outside_too
        for link in links:
            cleaned = clean(link)
            if outside_too or contains(cleaned):
                referrers.add(cleaned, page, anchors.get(link))
