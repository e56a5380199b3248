"""``crawl``'s listing and publishing phases: from the crawl's records to the
sitemap's entries, then the sitemaps written atomically, refused when they lost
more than half their URLs.

Records may live on disk (a large crawl's record store spills): then the write
is the one pass over them all, and what must be known beforehand (the
namespaces) is judged on the few records that declare alternates or carry
media.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crawler.cli.crawl_plan import ListingOptions, PublishOptions
from crawler.cli.failure import EXIT_SHRINK, EXIT_START_URL, Failure
from crawler.cli.report_files import write_reports
from crawler.cli.sections import choose_auto
from crawler.cli.sitemaps import namespaces, news_entries, sitemap_entries
from crawler.config.hints import Hints
from crawler.core.records import PageRecord
from crawler.engine.result import CrawlResult
from sitemap_writer import (
    NewsEntry,
    SitemapEntry,
    WriteResult,
    published_url_counts,
    write_sitemaps,
)


@dataclass(slots=True)
class Listing:
    """What the sitemap will hold: its entries (a list, or made again on demand when the
    records are on disk), the namespaces they need, and the news articles."""

    result: CrawlResult
    entries: Callable[[], Iterable[SitemapEntry]]
    alternates: bool
    images: bool
    videos: bool
    articles: list[NewsEntry] | None
    options: ListingOptions
    hreflang_problems: list[dict[str, object]]  # what the report says of the alternates

    @property
    def split(self) -> bool:
        sections = self.options.sections
        return sections is not None and sections.split


def list_pages(result: CrawlResult, options: ListingOptions, hints: Hints,
               hreflang: bool) -> Listing:
    """Duplicates dropped (by default), hreflang alternates read, sections chosen."""
    if options.drop_duplicates:  # by default; --keep-duplicates lists every URL
        from crawler.engine.duplicates import drop_duplicates

        drop_duplicates(result)
    from crawler.page.hreflang import sitemap_alternates  # after the crawl: off its start

    records = result.records
    # records on disk are read straight through the file where order does not matter:
    # hreflang reads only the pages declaring alternates
    spilled = records.spilled
    alternates, problems = (sitemap_alternates(
        records.declaring_alternates() if spilled else result.listed(),
        options.scope.contains, external=options.hreflang_external,
        is_listed=records.is_listed if spilled else None) if hreflang else ({}, []))
    sections = options.sections
    if sections is not None and not sections.patterns:
        choose_auto(sections, lambda: (record.url for record in result.listed()), options.base)

    def entries_of(chosen: Iterable[PageRecord]) -> Iterator[SitemapEntry]:
        return sitemap_entries(chosen, alternates, hints)

    if spilled:
        made: Callable[[], Iterable[SitemapEntry]] = lambda: entries_of(result.listed())  # noqa: E731
        kinds = namespaces(entries_of(records.declaring_alternates()),
                           entries_of(records.carrying_media()))
    else:
        held = list(entries_of(result.listed()))
        made = lambda: held  # noqa: E731
        kinds = namespaces(held, held)
    articles = (news_entries(result.listed(), options.publication, datetime.now(UTC))
                if options.publication is not None else None)
    return Listing(result, made, *kinds, articles, options,
                   [asdict(problem) for problem in problems])


def report_crawl(reports: tuple[Path, ...], listing: Listing) -> dict[str, dict[str, Any]]:
    """``crawl --report``: the crawl's report files (nothing when none is asked for);
    the findings, empty without a report."""
    result, sections = listing.result, listing.options.sections
    split = listing.split and bool(reports) and sections is not None
    return write_reports(reports, result, {
        "base_url": listing.options.base, "hreflang": listing.hreflang_problems,
        **({"sections": sections.counts(record.url for record in result.listed())}
           if split and sections is not None else {})},
        sections=sections if split else None)


def publish(listing: Listing, options: PublishOptions, *, robots_txt: bytes | None,
            write_robots: bool) -> WriteResult:
    """The sitemaps, index and robots.txt written and published atomically, unless
    the count says the site fell over (then the previous output is kept)."""
    shrink = _ShrinkRule(listing.result, published_url_counts(options.out_dir),
                         options.allow_shrink)
    sections = listing.options.sections if listing.split else None
    return write_sitemaps(
        listing.entries(), out_dir=options.out_dir, base_url=listing.options.base,
        compressed=options.compressed, max_urls=options.max_urls,
        max_bytes=options.max_bytes, robots_txt=robots_txt, write_robots=write_robots,
        alternates=listing.alternates, images=listing.images, videos=listing.videos,
        stylesheet=options.stylesheet, news=listing.articles, before_publish=shrink.judge,
        section_of=sections.section_of if sections is not None else None,
        sections=sections.order if sections is not None else (),
        before_publish_sections=shrink.judge_sections, html=options.html)


class _ShrinkRule:
    """Refuse an empty sitemap, or one (or a section) that lost more than half its
    URLs: an outage or a login wall, more likely than a site that shrank."""

    def __init__(self, result: CrawlResult, before: dict[str, int], allowed: bool) -> None:
        self.result = result
        self.before = before
        self.total = sum(before.values())
        self.allowed = allowed

    def judge(self, count: int) -> None:
        if not count:
            from crawler.audit.report import explain_empty  # only when nothing is listed

            raise Failure(explain_empty(self.result) + "; previous output kept",
                          EXIT_START_URL)
        if not self.allowed and count * 2 < self.total:
            raise Failure(
                f"refusing to replace a sitemap of {self.total:,} URLs with one of "
                f"{count:,} (more than half gone: an outage or a login wall?); previous "
                "output kept; use --allow-shrink if the site really shrank", EXIT_SHRINK)

    def judge_sections(self, counts: dict[str, int]) -> None:
        """Section by section: one that vanished or lost more than half its URLs is
        named, even when the others grew."""
        if self.allowed:
            return
        lost = [f"{name} {counts.get(name, 0)} (was {before})"
                for name, before in self.before.items()
                if name and counts.get(name, 0) * 2 < before]
        if lost:
            raise Failure(
                "refusing to publish: section(s) " + ", ".join(lost) + " lost more than "
                "half their URLs (an outage or a login wall, or sections renamed?); previous "
                "output kept; use --allow-shrink if the site really changed", EXIT_SHRINK)
