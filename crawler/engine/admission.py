"""Whether a URL the crawl found is fetched, and if not, why.

In this order: it carries a credential given for the crawl (never fetched,
shown redacted); it lies outside the scope (counted and sampled, never in the
seen set); it was seen before; the user's filters refuse it; robots.txt
disallows it; the frontier's limits (depth, pages, query variants, traps,
redirect hops) refuse it. An admitted URL is queued, and kept in the state's
queue so an interrupted run can go on; a refused one is written down with its
reason by the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable

from crawler.core.records import SkippedUrl, Verdict
from crawler.engine.bookkeeping import Bookkeeping
from crawler.engine.secret_scrub import SecretScrub
from crawler.engine.site_rules import SiteRules
from crawler.frontier.frontier import Frontier
from crawler.frontier.job import Job
from crawler.frontier.outside import OutsideLinks
from crawler.urls.normalize import origin_of

ORIGINS_CACHED = 1024


class Admission:
    """The checks every URL passes before the frontier takes it."""

    def __init__(self, rules: SiteRules, frontier: Frontier, books: Bookkeeping,
                 scrub: SecretScrub | None, start_url: str) -> None:
        assert rules.filters is not None
        self.scope, self.policy, self.filters = rules.scope, rules.policy, rules.filters
        self.frontier, self.books, self.scrub = frontier, books, scrub
        self.start_url = start_url
        self.outside = OutsideLinks()
        self._origins: dict[str, Verdict] = {}
        self._secret_urls: set[str] = set()  # skipped once each, shown redacted
        # our host's registered domain, when the crawl works it out elsewhere
        self.ours: Callable[[], str] | None = None

    def consider(self, url: str, depth: int, hops: int = 0, chain: tuple[str, ...] = ()) -> None:
        """Queue a URL found by the crawl, or record why it is not fetched."""
        frontier, books = self.frontier, self.books
        url = self.filters.clean(url)
        if self.scrub is not None and self.scrub.carries(url):
            self.skip_secret(url, depth)
            return
        if not self.scope.contains(url):
            # Never requested, so never in the seen set: counted and sampled, in kilobytes.
            item = self.outside.add(url, depth, self._classify_outside(url))
            if item is not None:
                books.skip(item)
            return
        if not frontier.first_sight(url):
            return
        job = Job(url, depth, hops, chain)
        if (reason := self.filters.refusal(url, self.start_url)) is not None:
            pass
        elif not self.policy.allows(url):
            reason = Verdict.DISALLOWED
        else:
            reason = frontier.offer(job)
        if reason is None:
            books.enqueue(job)
            return
        books.skip(SkippedUrl(url, depth, reason))

    def skip_secret(self, url: str, depth: int) -> None:
        """A URL that carries a credential: never fetched, listed or stored as it is."""
        assert self.scrub is not None
        shown = self.scrub.redact(url)
        if shown not in self._secret_urls:
            self._secret_urls.add(shown)
            self.books.skip(SkippedUrl(shown, depth, Verdict.SECRET_IN_URL))

    def _classify_outside(self, url: str) -> Verdict:
        """Why an out-of-scope URL is not crawled; depends on its origin alone."""
        origin = origin_of(url)
        verdict = self._origins.get(origin)
        if verdict is None:
            if len(self._origins) >= ORIGINS_CACHED:
                self._origins.clear()
            verdict = self._origins[origin] = self.scope.classify_outside(url, self.ours)
        return verdict
