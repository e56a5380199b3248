"""What a finished crawl hands to its caller: the records and everything kept beside them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from crawler.core.records import CrawlStats, PageRecord, SkippedUrl
from crawler.engine.seeds import SeedCounts

if TYPE_CHECKING:
    from crawler.http.link_check import Certificate, LinkCheck
    from crawler.store.link_spool import LinkSpool
    from crawler.store.live_sitemap import LiveSitemap
    from crawler.store.referrers import Referrers



class Records(Protocol):
    """The crawl's records as its readers use them: a list until a threshold, then
    a file (``crawler.store.record_store.RecordStore``), the same questions either way."""

    @property
    def spilled(self) -> bool: ...  # on disk: read straight through where order is free
    def __iter__(self) -> Iterator[PageRecord]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> PageRecord: ...
    def append(self, record: PageRecord) -> None: ...
    def replace(self, index: int, record: PageRecord) -> None: ...
    def find(self, url: str) -> tuple[int, PageRecord] | None: ...
    def get(self, url: str) -> PageRecord | None: ...
    def by_url(self) -> Iterator[tuple[int, PageRecord]]: ...
    def listed(self) -> Iterable[PageRecord]: ...
    def listed_unordered(self) -> Iterable[PageRecord]: ...
    def declaring_alternates(self) -> Iterable[PageRecord]: ...
    def carrying_media(self) -> Iterable[PageRecord]: ...
    def is_listed(self, url: str) -> bool: ...


def _in_memory() -> Records:
    from crawler.store.record_store import RecordStore

    return RecordStore.of([])


@dataclass(slots=True)
class CrawlResult:
    """Everything a finished crawl hands to the CLI."""

    start_url: str
    # Not in repr: asyncio formats the crawl task's result when the run ends
    # (restoring the SIGINT handler), which cost 0.1 s on 10,000 pages.
    # a list given here (a test, a caller of the library) is kept as a store in memory
    records: Records = field(default_factory=_in_memory, repr=False)
    skipped: list[SkippedUrl] = field(default_factory=list, repr=False)
    robots_txt: bytes | None = field(default=None, repr=False)
    # why the site's robots.txt cannot be republished whole (too large, not fetched):
    # then none is written, rather than one that changes the site's rules
    robots_txt_withheld: str | None = None
    # --workers: why each worker given up was (its jobs went to the others)
    workers_lost: list[str] = field(default_factory=list)
    # --workers auto: the page count at which worker processes were added, if they were
    workers_added_at: int | None = None
    stats: CrawlStats = field(default_factory=CrawlStats)
    robots_status: int | None = None
    robots_error: str | None = None
    # robots.txt Crawl-delay: what it asked, and what was used (capped by --max-crawl-delay)
    crawl_delay_asked: float | None = None
    crawl_delay_used: float | None = None
    elapsed: float = 0.0
    # out-of-scope URLs per reason: distinct count (maybe estimated), how many are rows
    outside: dict[str, dict[str, int | bool]] = field(default_factory=dict)
    # the three external counts: distinct out-of-scope URLs ("estimated" past the
    # exact count), links to them, pages holding them (crawler.frontier.outside)
    external_totals: dict[str, int | bool] = field(default_factory=lambda: {
        "urls": 0, "estimated": False, "links": 0, "pages": 0})
    # audits: which pages (indices into records) link to each in-scope URL
    referrers: Referrers | None = field(default=None, repr=False)
    # --compare-sitemap: what the site's own sitemaps list
    live_sitemap: LiveSitemap | None = field(default=None, repr=False)
    # --render, once an audit's findings are made: pages rendered, third-party origins
    # contacted, requests robots.txt blocked (crawler.audit.render_findings)
    render_summary: dict[str, object] | None = None
    # --check-external: what each out-of-scope link answered (crawler.http.external), the
    # https origins whose certificate expires within --cert-warn-days, and the distinct
    # URLs left unchecked past --max-external (None: not checked)
    external: list[LinkCheck] | None = field(default=None, repr=False)
    expiring: list[Certificate] = field(default_factory=list)
    external_unchecked: int = 0
    # why the external check said nothing of the links it was asked: no external origin
    # reachable, or the run interrupted during it ("interrupted")
    external_note: str | None = None
    # the phase a run was in: pages, live sitemap, external links; and when a run is
    # stopped (Ctrl-C, SIGTERM), the one it did not finish, for the report to say
    phase: str = "pages"
    interrupted: str | None = None
    # told (the phase ended, the phase begun) as each phase gives way to the next: the
    # progress a log shows (crawler.cli.progress)
    on_phase: Callable[[str, str], None] | None = field(default=None, repr=False)
    # the external phase's progress: links checked, links to check, its slowest origin
    # (name, links left) and the seconds its pace says they take
    external_progress: tuple[int, int, str, int, float] | None = None
    # --urls, --from-sitemap, --add-urls: what became of each list (crawler.engine.seeds)
    seeds: dict[str, SeedCounts] = field(default_factory=dict)
    links: LinkSpool | None = field(default=None, repr=False)  # --links: the graph, on disk
    # the soft-404 probes (crawler.engine.soft_404): each URL and what it answered; and
    # the home page, when unknown URLs redirect there
    soft_404_probes: list[dict[str, object]] = field(default_factory=list)
    state_kept: bool = False  # --state: what earlier runs saw was held against this one
    catch_all_home: str | None = None
    extract_names: tuple[str, ...] = ()  # --extract's NAMEs: report columns after the rest

    def __post_init__(self) -> None:
        if isinstance(self.records, list):
            from crawler.store.record_store import RecordStore

            self.records = RecordStore.of(self.records)

    def enter(self, phase: str) -> None:
        """The run moves on to ``phase``; whoever listens is told which one ended."""
        ended, self.phase = self.phase, phase
        if self.on_phase is not None and ended != phase:
            self.on_phase(ended, phase)

    def listed(self) -> Iterable[PageRecord]:
        """The records that belong in the sitemap, sorted by URL (iterable again)."""
        return self.records.listed()
