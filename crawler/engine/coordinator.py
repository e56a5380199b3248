"""The crawl: setup checks, then fetch tasks on one event loop that share a coordinator.

The coordinator owns the frontier and schedules; admission (``admission.py``),
bookkeeping (``bookkeeping.py``) and the audit's orphan phase (``orphans.py``)
are its parts, and fetching and reading pages is the page source's (this
process, or ``--workers`` processes). Each task takes a job, awaits its page and accepts
the outcome with plain calls: on one event loop those calls never
interleave, so the coordinator needs no lock and no channel, and nothing can
block on a full queue (the circular-channel deadlock of naive crawlers). The
crawl ends when the frontier is empty and nothing is in flight.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from crawler.config import CrawlConfig
from crawler.core.dates import parse_http_date
from crawler.core.errors import CrawlerError, StartUrlError
from crawler.core.records import PageRecord, SkippedUrl, Verdict
from crawler.engine.admission import Admission
from crawler.engine.bookkeeping import Bookkeeping
from crawler.engine.crawl_phases import (
    check_before_fetching,
    listing,
    new_result,
    note_workers,
    start_up,
)
from crawler.engine.orphans import OrphanPhase
from crawler.engine.result import CrawlResult
from crawler.engine.secret_scrub import SecretScrub
from crawler.engine.seeds import SeedCounts, read_url_list
from crawler.engine.site_rules import SiteRules
from crawler.engine.start_up import page_source
from crawler.engine.suffix_child import RegisteredDomain
from crawler.frontier.frontier import Frontier
from crawler.frontier.job import Job
from crawler.http.fetch import Fetcher, FetchOptions
from crawler.store.no_state import NoState
from crawler.urls.filters import UrlFilters
from crawler.urls.normalize import host_of, normalize_url
from crawler.urls.scope import Scope

if TYPE_CHECKING:
    from crawler.engine.adaptive_pages import AdaptivePages
    from crawler.engine.page_fetcher import PageFetcher
    from crawler.engine.soft_404 import DirectoryProbes
    from crawler.engine.worker_pool import WorkerPool
    from crawler.page.read import PageOutcome
    from crawler.store.link_spool import LinkSpool
    from crawler.store.live_sitemap import LiveSitemap
    from crawler.store.state import CrawlState
    from crawler.store.stored import ResumePoint

OUTSIDE = frozenset({Verdict.EXTERNAL, Verdict.OTHER_HOST, Verdict.OUT_OF_SCOPE})
UNAUTHORIZED = 401
ProgressCallback = Callable[[PageRecord, CrawlResult], None]
# reads the site's live sitemaps: (fetcher, scope, robots.txt, URL cleaner, "carries a
# secret?") -> what they list
LiveSitemapReader = Callable[
    [Fetcher, Scope, bytes | None, Callable[[str], str], Callable[[str], bool] | None],
    Awaitable["LiveSitemap"]]


async def crawl(
    config: CrawlConfig,
    *,
    on_record: ProgressCallback | None = None,
    live_sitemap: LiveSitemapReader | None = None,
    seed_sitemap: LiveSitemapReader | None = None,
) -> CrawlResult:
    """Crawl the site ``config`` describes. Raises :class:`StartUrlError` and
    :class:`~crawler.store.state.StateError` (a :class:`ConfigError`) only.

    ``live_sitemap`` (the audit's reader, ``crawler.audit.live_sitemap``, which
    the CLI hands in: XML is not the crawler's business) reads the site's live
    sitemaps once the links are exhausted, and the in-scope URLs they list that
    no link reached are fetched as orphans. ``seed_sitemap`` (the same reader, for
    ``--from-sitemap``) gives URLs to start from beside START_URL."""
    normalized = normalize_url(config.start_url)
    assert normalized is not None  # CrawlConfig validated it
    filters = config.filters()
    start = filters.clean(normalized)
    scope = Scope.for_start(start, config.prefix)
    check_before_fetching(config, start, scope)
    result = new_result(config, start)
    state = open_state(config, scope)
    # the public-suffix list's answer for our host, worked out on another core
    own_domain = RegisteredDomain(host_of(start)).start()
    try:
        point = state.begin(resume=config.resume, settings=config.run_settings())
        async with Fetcher(FetchOptions.of(config)) as fetcher:
            policy = await start_up(fetcher, config, scope, result,
                                     listing=listing(config, seed_sitemap))
            probes = None
            if config.soft_404:
                from crawler.engine.soft_404 import DirectoryProbes, ProbeSite, new_token, probe

                site = ProbeSite(fetcher, scope, policy, scope.origin + "/", new_token())
                config = replace(config, soft_404_probes=await probe(site, result))
                probes = DirectoryProbes(site, result)
            async with page_source(config, fetcher, filters.clean, policy) as pages:
                coordinator = _Coordinator(SiteRules(config, scope, policy, filters), fetcher,
                                           result, on_record=on_record, state=state, pages=pages)
                coordinator.admission.ours = own_domain
                coordinator.probes = probes
                await crawl_pages(coordinator, point, seed_sitemap, live_sitemap)
                if config.check_external:
                    from crawler.engine.external_links import check_external

                    await check_external(config, scope, result, state)
                note_workers(result, pages)
        state.finish()
    finally:
        own_domain.close()
        state.close()
    result.elapsed = anyio.current_time() - result.stats.started
    return result


async def crawl_pages(coordinator: _Coordinator, point: ResumePoint | None,
                       seed_sitemap: LiveSitemapReader | None,
                       live_sitemap: LiveSitemapReader | None) -> None:
    """The pages links lead to (or where a resumed run stopped), then --add-urls', then
    the live sitemap's orphans."""
    config, result = coordinator.config, coordinator.result
    if point is not None and (point.records or point.queue):
        coordinator.restore(point)
    else:
        if not listing(config, seed_sitemap):
            await coordinator.seed(Job(result.start_url, 0))
        await coordinator.seed_lists(seed_sitemap)
    try:
        await coordinator.run()
        if config.add_urls_file is not None:
            coordinator.add_known(config.add_urls_file)
            await coordinator.run()
        if live_sitemap is not None:
            await orphans_of_the_live_sitemap(coordinator, live_sitemap)
    except BaseExceptionGroup as group:
        # anyio wraps what the coordinator raised; a failure of ours (the state file
        # cannot be written) reaches the CLI as itself, for its exit code.
        ours, _rest = group.split(CrawlerError)
        if ours is not None and len(ours.exceptions) == len(group.exceptions) == 1:
            raise ours.exceptions[0] from None
        raise


async def orphans_of_the_live_sitemap(coordinator: _Coordinator,
                                       live_sitemap: LiveSitemapReader) -> None:
    result = coordinator.result
    result.enter("live sitemap")
    scrub = coordinator.scrub
    live = await live_sitemap(coordinator.fetcher, coordinator.scope, result.robots_txt,
                              coordinator.filters.clean, scrub.carries if scrub else None)
    result.live_sitemap = live
    result.enter("orphans")
    coordinator.offer_orphans(live)
    await coordinator.run()


def open_state(config: CrawlConfig, scope: Scope) -> CrawlState | NoState:
    """The --state file (SQLite, loaded only then), or a state that remembers nothing."""
    if not config.state_path:
        return NoState()
    from crawler.store.state import CrawlState

    return CrawlState(Path(config.state_path), scope.root)


class _Coordinator:
    """Schedules one crawl: fetch tasks take the frontier's jobs and hand each outcome
    on. Whether a URL is fetched is the :class:`Admission`'s, what is kept the
    :class:`Bookkeeping`'s, and the live sitemap's orphans the :class:`OrphanPhase`'s."""

    def __init__(
        self,
        rules: SiteRules,
        fetcher: Fetcher,
        result: CrawlResult,
        *,
        on_record: ProgressCallback | None = None,
        state: CrawlState | NoState | None = None,
        pages: PageFetcher | WorkerPool | AdaptivePages | None = None,
    ) -> None:
        config, scope, policy = rules.config, rules.scope, rules.policy
        self.config = config
        self.result = result
        self.fetcher, self.scope = fetcher, scope
        self.adding: SeedCounts | None = None  # --add-urls' phase, once links are done
        self.on_record = on_record
        # one probe in each directory pages are fetched in (soft 404s), when judged
        self.probes: DirectoryProbes | None = None
        self.state = state = state if state is not None else NoState()
        self.run_time = datetime.now(UTC).replace(microsecond=0)
        filters = self.filters = rules.filters or UrlFilters()
        # fetches and reads pages: here, or in worker processes (--workers)
        from crawler.engine.adaptive_pages import AdaptivePages
        from crawler.engine.page_fetcher import PageFetcher

        if pages is None:
            pages = PageFetcher(config, fetcher, filters.clean)
        self.pages = pages
        # the credentials given, looked for in what the site sends back
        scrub = SecretScrub(config.credentials)
        self.scrub = scrub if scrub else None
        self.frontier = Frontier(
            max_depth=config.max_depth,
            max_pages=config.max_pages,
            max_query_variants=config.max_query_variants,
            max_redirects=config.max_redirects,
        )
        if isinstance(pages, AdaptivePages):
            pages.backlog = self.frontier.__len__
        self.books = Bookkeeping(config, scope, policy, filters, result, state)
        self.admission = Admission(replace(rules, filters=filters), self.frontier, self.books,
                                   self.scrub, result.start_url)
        self.orphans = OrphanPhase(config, self.admission, self.books, on_record)
        self.consider = self.admission.consider
        self.outside = self.admission.outside
        if state.remembers:  # the sketches are committed with the pages that fed them
            state.extra_meta = lambda: {"outside": self.outside.dump()}

    async def seed(self, job: Job) -> None:
        """Fetch the start URL alone first: if it is unreachable, nothing else is tried."""
        self.frontier.restore(job.url, fetched=True)
        outcome = await self.fetch(self._with_validators(job))
        if outcome.record.status is None:
            error = outcome.record.error
            raise StartUrlError(
                f"start URL {job.url} is unreachable: {error.value if error else 'no answer'}")
        if outcome.record.status == UNAUTHORIZED:
            raise StartUrlError(f"start URL {job.url} answered 401 Unauthorized: " + (
                "the credentials given were refused (check --auth, --auth-env, --header "
                "and --cookie)" if self.config.credentials else
                "the site wants a login; give it with --auth USER:PASSWORD or --auth-env VAR "
                "(or --header / --cookie)"))
        self.accept(job, outcome)

    async def seed_lists(self, seed_sitemap: LiveSitemapReader | None) -> None:
        """--urls and --from-sitemap: more URLs to start from, judged as links are."""
        consider, seeds = self.consider, self.result.seeds
        if self.config.urls_file is not None:
            counts = seeds["urls"] = SeedCounts()
            for url in read_url_list(self.config.urls_file, counts):
                consider(url, 0)
        if seed_sitemap is not None:
            counts = seeds["from_sitemap"] = SeedCounts()
            live = await seed_sitemap(self.fetcher, self.scope, self.result.robots_txt,
                                      self.filters.clean,
                                      self.scrub.carries if self.scrub else None)
            counts.source = live.source
            for url in live.entries:
                counts.given += 1
                consider(url, 0)
        self.result.stats.queued = len(self.frontier)

    def add_known(self, path: str) -> None:
        """--add-urls: once the links are exhausted, the known URLs they did not reach;
        each is judged (listed, or refused and named) and its links are not followed."""
        self.adding = counts = self.result.seeds["add_urls"] = SeedCounts(judging=True)
        for url in read_url_list(path, counts):
            self.consider(url, 0)

    def restore(self, point: ResumePoint) -> None:
        """Continue an interrupted run from what the state kept of it."""
        books = self.books
        for record in point.records:
            self.frontier.restore(record.url, fetched=True)
            books.keep_unlisted(record)
            books.keep(record)
            if self.state.remembers and (self.result.referrers is not None
                                           or self.result.links is not None):
                # who linked where before the interruption, from what the state kept
                stored = self.state.previous(
                    record.url, with_links=self.result.referrers is not None)
                if stored is not None:
                    books.refer(record.url, stored.links, stored.anchors)
                    if self.result.links is not None and stored.edges is not None:
                        self._graph(self.result.links, record.url, stored.edges)
        self.outside.load(point.outside)
        for item in point.skipped:
            if item.reason in OUTSIDE:
                self.outside.restore(item)
            else:
                self.frontier.restore(item.url)
            self.result.skipped.append(item)
            self.result.stats.skipped += 1
            by = self.result.stats.skipped_by
            by[item.reason.value] = by.get(item.reason.value, 0) + 1
        for job in point.queue:
            self.frontier.restore(job.url, job=job)

    async def fetch(self, job: Job) -> PageOutcome:
        return await self.pages.fetch(job)

    def offer_orphans(self, live: LiveSitemap) -> None:
        self.orphans.offer(live)

    async def _probed(self, job: Job) -> Job:
        """The job with what an unknown URL in its directory showed, where that was a
        page: its reader compares the two (soft 404s)."""
        probes = self.probes
        if probes is None:
            return job
        settled, folder = probes.settled, probes.folder_of(job.url)
        answer = settled[folder] if folder in settled else await probes.answer_for(job.url)
        return job if answer is None else replace(job, probe=answer)

    def _with_validators(self, job: Job) -> Job:
        if not self.state.remembers:  # without --state: no page stored, none to validate
            return job
        validators = self.state.validators(job.url, images=self.config.images,
                                           fragments=self.config.check_fragments,
                                           edges=self.config.links_path is not None)
        if not validators:
            return job
        # built directly: dataclasses.replace costs three times as much, once a page
        return Job(job.url, job.depth, job.hops, job.chain, tuple(validators.items()))

    def accept(self, job: Job, outcome: PageOutcome) -> None:
        """A page's outcome: kept, and the URLs it leads to judged, in one step."""
        if self.scrub is not None:
            for link in self.scrub.scrub_outcome(outcome):
                self.admission.skip_secret(link, outcome.record.depth + 1)
        if self.orphans.active:
            self._held_to_live_sitemap(outcome)
            self.orphans.accept(outcome.record)
            return
        record = outcome.record
        chain = (*job.chain, job.url)
        if record.verdict in (Verdict.REDIRECT, Verdict.REFRESH) and (
                record.redirect_to in chain or record.refresh_to in chain):
            record.verdict = Verdict.REDIRECT_LOOP
        books, consider = self.books, self.consider
        # after the state's word: a 304 becomes the stored page, whose Last-Modified
        # is the stored one where the 304 sent none
        outcome = books.remember(job, outcome, self.run_time)
        self._held_to_live_sitemap(outcome)
        record = outcome.record
        record.fingerprint = outcome.content_hash
        books.keep_unlisted(record)
        books.keep(record)
        books.refer(record.url, outcome.links, outcome.anchors)
        self._count_links_out(outcome)
        if self.result.links is not None:
            self._graph(self.result.links, record.url, outcome.edges)
        if record.video_problems and record.verdict is Verdict.LISTED:
            self.result.stats.videos_left_out += len(record.video_problems)
        if self.adding is not None:
            self.adding.judged(record.url, record.verdict)
        if not self.config.follow or self.adding is not None:
            self._accepted(record)  # list mode, or a known URL added: fetched, not followed
            return
        for target in outcome.siblings:
            if target in (record.redirect_to, record.refresh_to):
                consider(target, job.depth, job.hops + 1, chain)
            else:
                consider(target, job.depth)
        for link in outcome.links if outcome.fresh is None else outcome.fresh:
            consider(link, job.depth + 1)
        if self.config.hreflang:
            # Declared language versions are crawled like links, so the sitemap can
            # name them only if they are real, listed pages (out of scope: never).
            for _code, alternate in record.alternates:
                consider(alternate, job.depth + 1)
        self._accepted(record)

    def _count_links_out(self, outcome: PageOutcome) -> None:
        """The page's links out of the scope, for the three external counts: counted
        by the page's reader where it cut ``links`` short, else here."""
        out = outcome.links_out
        self.outside.page_links(out if out is not None
                                else self.scope.count_outside(outcome.links))

    def _graph(self, graph: LinkSpool, url: str, edges: list[tuple[str, str, str]]
               ) -> None:
        """--links: the page's rows of the link graph, read from it or, for a 304 or a
        resumed run, kept with it in the state."""
        clean = self.filters.clean  # targets spelled as the records are (--strip-param)
        graph.add(url, [(clean(target), text, rel) for target, text, rel in edges],
                  self.scope.contains)

    def _held_to_live_sitemap(self, outcome: PageOutcome) -> None:
        """--compare-sitemap holds the live sitemap's lastmods to each page's
        Last-Modified: the record keeps it, parsed."""
        if self.config.compare_sitemap is not None:
            outcome.record.last_modified = parse_http_date(outcome.last_modified)

    def _accepted(self, record: PageRecord) -> None:
        self.result.stats.queued = len(self.frontier)
        self.books.checkpoint()
        if self.on_record is not None:
            self.on_record(record, self.result)

    async def run(self) -> None:
        """Fetch until the frontier is empty and nothing is in flight.

        Each task takes the frontier's next job, fetches it and accepts its outcome
        itself: the coordinator's steps are plain calls on one event loop, so they
        never interleave, and no channel stands between a fetch and its accounting
        (two memory streams cost four loop turns a page). A task that finds the
        frontier empty while others are fetching parks until an outcome brings jobs.
        """
        # worker processes are kept a job ahead of their fetch tasks; their shares of
        # --concurrency still bound the requests in flight
        tasks = (self.config.concurrency * 2 if getattr(self.pages, "jobs_ahead", False)
                 else self.config.concurrency)
        self._parked = 0
        self._wakeup = anyio.Event()
        async with anyio.create_task_group() as group:
            for _ in range(tasks):
                group.start_soon(self._fetch_loop)
        for job in self.frontier.drain():
            self.books.skip(SkippedUrl(job.url, job.depth, Verdict.MAX_PAGES))
        self.result.outside = self.outside.counts()
        self.result.external_totals = self.outside.totals()

    async def _fetch_loop(self) -> None:
        stats, frontier = self.result.stats, self.frontier
        while True:
            job = frontier.pop()
            if job is None:
                if stats.in_flight == 0:
                    self._wake()  # the crawl is over: every parked task ends too
                    return
                self._parked += 1
                await self._wakeup.wait()
                self._parked -= 1
                continue
            stats.in_flight += 1
            try:
                outcome = await self.fetch(await self._probed(self._with_validators(job)))
            finally:
                stats.in_flight -= 1
            self.accept(job, outcome)
            if self._parked and (frontier or stats.in_flight == 0):
                self._wake()

    def _wake(self) -> None:
        self._wakeup.set()
        self._wakeup = anyio.Event()
