"""Running a command: the crawl, then its sitemaps or its reports.

Imported only when a command runs (``crawler.cli.commands`` declares the
commands and their options, which ``--help`` and a usage error need without
the crawler's imports).
"""

from __future__ import annotations

import logging
import re
import time
import traceback
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from crawler.cli import failure
from crawler.cli.crawl_run import internal_errors, run
from crawler.cli.failure import (
    EXIT_INTERRUPTED,
    EXIT_OUTPUT,
    EXIT_SHRINK,
    EXIT_START_URL,
    EXIT_UNEXPECTED,
    EXIT_USAGE,
    Failure,
)
from crawler.cli.invocation import INVOCATION, how_to_resume
from crawler.cli.progress import CrawlDisplay
from crawler.cli.report_files import (
    check_paths,
    check_reports,
    report_dirs,
    write_reports,
)
from crawler.cli.sections import Sections, choose_auto, parse_sections
from crawler.cli.signals import TermAsInterrupt
from crawler.cli.sitemaps import (
    base_url_for,
    namespaces,
    news_entries,
    parse_news,
    print_summary,
    sitemap_entries,
)
from crawler.cli.wiring import crawl_config
from crawler.config import (
    CrawlConfig,
)
from crawler.urls.scope import Scope
from sitemap_writer import (
    BUILTIN_STYLESHEET as BUILTIN,
)
from sitemap_writer import (
    MAX_NEWS_URLS,
    MAX_SITEMAP_BYTES,
    MAX_URLS_PER_SITEMAP,
    NEWS_NAME,
    OutputError,
    SitemapEntry,
    ensure_output_dir,
    output_lock,
    published_url_counts,
    smallest_shard_bytes,
    write_sitemaps,
)

if TYPE_CHECKING:
    from crawler.cli.indexnow_run import IndexNowPlan
    from crawler.cli.search_console_run import SearchConsolePlan

_ABSOLUTE_OR_PATH = re.compile(r"(https?://[^\s\"<>]+|/[^\s\"<>]*)\Z", re.IGNORECASE)



class _Redacted(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return failure.redact(super().format(record))


def _show_unforeseen_errors() -> None:
    """--debug: the traceback of each URL's unforeseen error, on stderr, redacted."""
    handler = logging.StreamHandler()
    handler.setFormatter(_Redacted("sitemap-crawler: debug: %(message)s"))
    logger = logging.getLogger("sitemap_crawler")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def run_crawl(*, debug: bool, quiet: bool, verbose: bool, **options: Any) -> int:
    if debug:
        _show_unforeseen_errors()
    display = CrawlDisplay(quiet=quiet, verbose=verbose,
                           concurrency=max(1, int(options.get("concurrency") or 1)),
                           max_pages=options.get("max_pages"))
    try:
        with TermAsInterrupt():
            if options.pop("audit", False):
                from crawler.cli.audit_run import audit

                return audit(display, quiet=quiet, **options)
            return _crawl_and_write(display, quiet=quiet, **options)
    except Failure as failed:
        return failure.fail(str(failed), failed.code)
    except KeyboardInterrupt:
        latest = display.latest
        done = (f"after {latest.stats.fetched} pages ({latest.stats.listed} listable)"
                if latest else "before the first page")
        return failure.fail(f"interrupted {done}; previous output left untouched; "
                     + _how_to_resume(options.get("state_path")), EXIT_INTERRUPTED)
    except Exception as exc:  # the last line of defence: one line, not a traceback
        if debug:
            click.echo(failure.redact(traceback.format_exc()), err=True, nl=False)
        return failure.fail(f"unexpected error: {exc!r} (run with --debug for details)",
                     EXIT_UNEXPECTED)


def _crawl_and_write(
    display: CrawlDisplay,
    *,
    quiet: bool,
    start_url: str,
    out_dir: Path,
    base_url: str | None,
    max_urls_per_sitemap: int,
    max_bytes_per_sitemap: int,
    compressed: bool,
    report_files: tuple[Path, ...],
    allow_shrink: bool,
    hreflang_external: bool,
    stylesheet: str | None,
    drop_duplicates: bool | None,
    news: str | None = None,
    section: tuple[str, ...] = (),
    sections_mode: str = "none",
    indexnow_key: str | None = None,
    indexnow_env: str | None = None,
    indexnow_endpoint: str = "",
    indexnow_key_location: str | None = None,
    indexnow_all: bool = False,
    indexnow_dry_run: bool = False,
    search_console_key: Path | None = None,
    search_console_env: str | None = None,
    search_console_endpoint: str = "",
    fail_on_submit: bool = False,
    **crawl_options: Any,
) -> int:
    indexnow = None
    if indexnow_key is not None or indexnow_env is not None or indexnow_all or \
            indexnow_dry_run or indexnow_key_location is not None:
        from crawler.cli.indexnow_run import indexnow_plan  # only for --indexnow

        indexnow = indexnow_plan(indexnow_key, indexnow_env, indexnow_endpoint, indexnow_all,
                                 indexnow_dry_run, indexnow_key_location,
                                 crawl_options.get("state_path"))
    console = None
    if search_console_key is not None or search_console_env is not None or fail_on_submit:
        from crawler.cli.search_console_run import search_console_plan  # only when asked

        console = search_console_plan(search_console_key, search_console_env,
                                      search_console_endpoint, fail_on_submit)
    publication = parse_news(news)
    sections = parse_sections(section, sections_mode)
    crawl_options["news"] = publication is not None
    check_reports(report_files)
    check_paths(report_files, crawl_options.get("state_path"), out_dir)
    if crawl_options.get("compare_sitemap") not in (None, "off") and not report_files:
        raise Failure("--compare-sitemap needs --report FILE: the comparison is reported "
                      "there", EXIT_USAGE)
    # --drop-duplicates (asked for by name): meaningful fingerprints, read by the audit
    if report_files or drop_duplicates:  # links and fingerprints, for findings
        crawl_options["audit"] = True
    config = crawl_config(start_url, crawl_options)
    if stylesheet is not None and stylesheet != BUILTIN and not _ABSOLUTE_OR_PATH.match(
            stylesheet):
        raise Failure(f"--stylesheet {stylesheet!r} must be 'builtin', an absolute http(s) "
                      "URL or a path such as /sitemap.xsl", EXIT_USAGE)
    scope = Scope.for_start(config.start_url, config.prefix)
    base = base_url_for(base_url, scope)
    if not 1 <= max_urls_per_sitemap <= MAX_URLS_PER_SITEMAP:
        raise Failure(f"--max-urls-per-sitemap must be 1..50000 (got {max_urls_per_sitemap})",
                      EXIT_USAGE)
    smallest = smallest_shard_bytes()
    if not smallest <= max_bytes_per_sitemap <= MAX_SITEMAP_BYTES:
        raise Failure(f"--max-bytes-per-sitemap must be {smallest}..{MAX_SITEMAP_BYTES}, so that "
                      f"a shard can hold the longest URL a sitemap may list "
                      f"(got {max_bytes_per_sitemap})", EXIT_USAGE)
    try:
        ensure_output_dir(out_dir)
        report_dirs(report_files)
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None

    try:
        with output_lock(out_dir):
            return _crawl_locked(display, config, quiet=quiet, out_dir=out_dir, base=base,
                                 max_urls=max_urls_per_sitemap, max_bytes=max_bytes_per_sitemap,
                                 compressed=compressed, report_files=report_files,
                                 allow_shrink=allow_shrink, publication=publication,
                                 indexnow=indexnow, console=console,
                                 extras=_Extras(scope, hreflang_external, stylesheet,
                                                drop_duplicates is not False, sections))
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None


@dataclass(frozen=True, slots=True)
class _Extras:
    """What goes into the sitemaps beyond loc and lastmod."""

    scope: Scope
    hreflang_external: bool
    stylesheet: str | None
    drop_duplicates: bool = False
    sections: Sections | None = None  # --section, --sections auto


def _crawl_locked(display: CrawlDisplay, config: CrawlConfig, *, quiet: bool, out_dir: Path,
                  base: str, max_urls: int, max_bytes: int, compressed: bool,
                  report_files: tuple[Path, ...], allow_shrink: bool, extras: _Extras,
                  publication: tuple[str, str] | None = None,
                  indexnow: IndexNowPlan | None = None,
                  console: SearchConsolePlan | None = None) -> int:
    """Crawl, then publish; runs while this process holds the output directory."""
    started = time.monotonic()
    result = run(display, config)
    if extras.drop_duplicates:  # by default; --keep-duplicates lists every URL
        from crawler.engine.duplicates import drop_duplicates

        drop_duplicates(result)
    listed = result.listed()
    spilled = getattr(result.records, "spilled", False)
    from crawler.page.hreflang import sitemap_alternates  # after the crawl: off its start

    # Spilled records are read straight through the file where order does not matter:
    # hreflang reads only the pages declaring alternates.
    records = result.records
    alternates, problems = (sitemap_alternates(
        records.declaring_alternates() if spilled else listed,  # type: ignore[attr-defined]
        extras.scope.contains, external=extras.hreflang_external,
        is_listed=records.is_listed if spilled else None)  # type: ignore[attr-defined]
        if config.hreflang else ({}, []))
    sections = extras.sections
    if sections is not None and not sections.patterns:
        choose_auto(sections, lambda: (record.url for record in result.listed()), base)
    split = sections is not None and sections.split
    write_reports(report_files, result, {
        "base_url": base, "hreflang": [asdict(problem) for problem in problems],
        **({"sections": sections.counts(record.url for record in result.listed())}
           if split and report_files and sections is not None else {})})
    hints = config.hints()
    entries: Iterable[SitemapEntry]
    if spilled:
        # Records on disk: the write is the one pass over them all. The namespaces are
        # judged on the few records that declare alternates or carry media, and the
        # count on the written shards, before they are published.
        entries = sitemap_entries(listed, alternates, hints)
        has_alternates, has_images, has_videos = namespaces(
            sitemap_entries(records.declaring_alternates(), alternates, hints),  # type: ignore[attr-defined]
            sitemap_entries(records.carrying_media(), alternates, hints))  # type: ignore[attr-defined]
    else:
        entries = list(sitemap_entries(listed, alternates, hints))
        has_alternates, has_images, has_videos = namespaces(entries, entries)
    articles = (news_entries(listed, publication, datetime.now(UTC))
                if publication is not None else None)
    published_by_section = published_url_counts(out_dir)
    published_before = sum(published_by_section.values())

    def judge(count: int) -> None:
        """Refuse an empty sitemap, or one that lost more than half its URLs."""
        if not count:
            from crawler.audit.report import explain_empty  # only when nothing is listed

            raise Failure(explain_empty(result) + "; previous output kept", EXIT_START_URL)
        if not allow_shrink and count * 2 < published_before:
            raise Failure(
                f"refusing to replace a sitemap of {published_before} URLs with one of "
                f"{count} (more than half gone: an outage or a login wall?); previous "
                "output kept; use --allow-shrink if the site really shrank", EXIT_SHRINK)

    def judge_sections(counts: dict[str, int]) -> None:
        """The same rule, section by section: one that vanished or lost more than half
        its URLs is named, even when the others grew."""
        if allow_shrink:
            return
        lost = [f"{name} {counts.get(name, 0)} (was {before})"
                for name, before in published_by_section.items()
                if name and counts.get(name, 0) * 2 < before]
        if lost:
            raise Failure(
                "refusing to publish: section(s) " + ", ".join(lost) + " lost more than "
                "half their URLs (an outage or a login wall, or sections renamed?); previous "
                "output kept; use --allow-shrink if the site really changed", EXIT_SHRINK)

    previous = None
    if indexnow is not None:
        from crawler.cli.indexnow_run import PreviousSitemap

        previous = PreviousSitemap(out_dir)
    try:
        written = write_sitemaps(
            entries, out_dir=out_dir, base_url=base, compressed=compressed,
            max_urls=max_urls, max_bytes=max_bytes, robots_txt=result.robots_txt,
            write_robots=result.robots_txt_withheld is None,
            alternates=has_alternates, images=has_images, videos=has_videos,
            stylesheet=extras.stylesheet, news=articles, before_publish=judge,
            section_of=sections.section_of if split and sections is not None else None,
            sections=sections.order if split and sections is not None else (),
            before_publish_sections=judge_sections,
        )
    except BaseException:
        if previous is not None:
            previous.close()
        raise
    if config.state_path is not None:
        from crawler.store.state_file import mark_published  # SQLite: with --state only

        mark_published(Path(config.state_path))
    if result.robots_txt_withheld is not None:
        failure.warn(f"robots.txt not written: {result.robots_txt_withheld}; add the line "
              f"'Sitemap: {written.index_url}' to it yourself (any other robots.txt in "
              f"{out_dir} was left as it was)")
    if not quiet:
        if articles is not None:
            display.console.print(f"News sitemap: {min(len(articles), MAX_NEWS_URLS)} "
                                  "article(s) of the last two days"
                                  + (f" in {NEWS_NAME}" if articles else
                                     f" ({NEWS_NAME} not written)"), markup=False)
        print_summary(display, result, written, time.monotonic() - started, out_dir)
        if sections is not None and sections.note:
            display.console.print(sections.note, markup=False)
    submitted = 0
    if console is not None:
        from crawler.cli.search_console_run import submit
        from crawler.http.address_rule import rule_for_config

        submitted = submit(console, written.index_url, config.user_agent,
                           lambda line: display.console.print(line, markup=False)
                           if not quiet else None, rule_for_config(config))
    if indexnow is not None and previous is not None:
        from crawler.cli.indexnow_run import announce
        from crawler.http.address_rule import rule_for_config

        try:
            return announce(
                indexnow, previous,
                (lambda: sitemap_entries(listed, alternates, hints)) if spilled else
                (lambda: entries), base, config.user_agent,
                lambda line: display.console.print(line, markup=False) if not quiet else None,
                rule_for_config(config)) or submitted or internal_errors(result)
        finally:
            previous.close()
    return submitted or internal_errors(result)


def _how_to_resume(state_path: str | None) -> str:
    if state_path is None:
        return "--state FILE makes a crawl resumable"
    return how_to_resume(INVOCATION)
