"""Running a command: the crawl, then its sitemaps or its reports.

Imported only when a command runs (``crawler.cli.commands`` declares the
commands and their options, which ``--help`` and a usage error need without
the crawler's imports).
"""

from __future__ import annotations

import asyncio
import contextlib
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

from crawler.audit.names import CHANGES, FINDINGS
from crawler.cli import failure
from crawler.cli.failure import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
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
from crawler.cli.signals import TermAsInterrupt, signals_held
from crawler.cli.sitemaps import (
    base_url_for,
    namespaces,
    news_entries,
    parse_news,
    print_summary,
    seed_lines,
    sitemap_entries,
)
from crawler.cli.wiring import crawl_config, findings_named, live_reader
from crawler.config import (
    CrawlConfig,
)
from crawler.core.errors import ConfigError, StartUrlError, StorageError, WorkerError
from crawler.engine.coordinator import crawl
from crawler.engine.result import CrawlResult
from crawler.urls.normalize import normalize_url
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
    published_url_count,
    smallest_shard_bytes,
    write_sitemaps,
)

if TYPE_CHECKING:
    from crawler.cli.indexnow_run import IndexNowPlan

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
                return _audit(display, quiet=quiet, **options)
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
    indexnow_key: str | None = None,
    indexnow_env: str | None = None,
    indexnow_endpoint: str = "",
    indexnow_key_location: str | None = None,
    indexnow_all: bool = False,
    indexnow_dry_run: bool = False,
    **crawl_options: Any,
) -> int:
    indexnow = None
    if indexnow_key is not None or indexnow_env is not None or indexnow_all or \
            indexnow_dry_run or indexnow_key_location is not None:
        from crawler.cli.indexnow_run import indexnow_plan  # only for --indexnow

        indexnow = indexnow_plan(indexnow_key, indexnow_env, indexnow_endpoint, indexnow_all,
                                 indexnow_dry_run, indexnow_key_location,
                                 crawl_options.get("state_path"))
    publication = parse_news(news)
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
                                 indexnow=indexnow,
                                 extras=_Extras(scope, hreflang_external, stylesheet,
                                                drop_duplicates is not False))
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None


@dataclass(frozen=True, slots=True)
class _Extras:
    """What goes into the sitemaps beyond loc and lastmod."""

    scope: Scope
    hreflang_external: bool
    stylesheet: str | None
    drop_duplicates: bool = False


def _crawl_locked(display: CrawlDisplay, config: CrawlConfig, *, quiet: bool, out_dir: Path,
                  base: str, max_urls: int, max_bytes: int, compressed: bool,
                  report_files: tuple[Path, ...], allow_shrink: bool, extras: _Extras,
                  publication: tuple[str, str] | None = None,
                  indexnow: IndexNowPlan | None = None) -> int:
    """Crawl, then publish; runs while this process holds the output directory."""
    started = time.monotonic()
    result = _run(display, config)
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
    write_reports(report_files, result, {
        "base_url": base, "hreflang": [asdict(problem) for problem in problems]})
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
    published_before = published_url_count(out_dir)

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
    if indexnow is not None and previous is not None:
        from crawler.cli.indexnow_run import announce
        from crawler.http.address_rule import rule_for_config

        try:
            return announce(
                indexnow, previous,
                (lambda: sitemap_entries(listed, alternates, hints)) if spilled else
                (lambda: entries), base, config.user_agent,
                lambda line: display.console.print(line, markup=False) if not quiet else None,
                rule_for_config(config)) or _internal_errors(result)
        finally:
            previous.close()
    return _internal_errors(result)


def _run(display: CrawlDisplay, config: CrawlConfig) -> CrawlResult:
    """The crawl itself, its setup failures turned into exit codes; a worker given up
    on the way is said."""
    if config.links_path is not None:  # the link graph's writer: only for --links
        from crawler.cli.link_graph import check_links_path, write_link_graph

        check_links_path(config.links_path)
    result = _run_crawl(display, config)
    if config.links_path is not None:
        write_link_graph(Path(config.links_path), result)
    for why in result.workers_lost:
        failure.warn(f"{why}: killed, and its pages went to the other workers")
    return result


def _late_results_ignored(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's error handler: silent about a thread's result that arrives for a
    future the interrupt already cancelled, and the default for anything else.

    Stopping a crawl cancels what waits on threads; the default executor's shutdown
    thread (DNS lookups run there) may still post ``set_result`` to its cancelled
    future, and asyncio printed that as a traceback after the one-line message,
    about once in 50 SIGTERMs with two workers."""
    if isinstance(context.get("exception"), asyncio.InvalidStateError):
        return
    loop.default_exception_handler(context)


def _run_crawl(display: CrawlDisplay, config: CrawlConfig) -> CrawlResult:
    interrupt = TermAsInterrupt.active

    async def main() -> CrawlResult:
        asyncio.get_running_loop().set_exception_handler(_late_results_ignored)
        if interrupt is not None:
            interrupt.task = asyncio.current_task()
        return await crawl(config, on_record=display, live_sitemap=live_reader(config),
                           seed_sitemap=live_reader(config, config.from_sitemap))

    try:
        with display, contextlib.ExitStack() as stack:
            # asyncio's runner, as anyio.run would use: anyio's own machinery (20 ms
            # of imports) then loads while the first request travels (the coordinator).
            # Its event loop is made on entry, whole before a signal may stop it.
            with signals_held():
                runner = stack.enter_context(asyncio.Runner())
            return runner.run(main())
    except asyncio.CancelledError:
        if interrupt is not None and interrupt.fired:  # SIGTERM with Ctrl-C ignored
            raise KeyboardInterrupt from None
        raise
    except StartUrlError as exc:
        raise Failure(str(exc), EXIT_START_URL) from None
    except ConfigError as exc:  # e.g. a state file of another scope
        raise Failure(str(exc), EXIT_USAGE) from None
    except StorageError as exc:  # the state file's disk is full
        raise Failure(f"{exc}; previous output kept", EXIT_OUTPUT) from None
    except WorkerError as exc:  # a worker process was killed, or met a bug of ours
        raise Failure(f"{exc}; previous output kept", EXIT_UNEXPECTED) from None


def _audit(display: CrawlDisplay, *, quiet: bool, start_url: str,
           report_files: tuple[Path, ...], fail_on: str | None,
           compare_with: Path | None = None, keep_duplicates: bool = False,
           **crawl_options: Any) -> int:
    """``audit``: the crawl, its reports, and exit 6 for a finding named by --fail-on."""
    check_reports(report_files)
    check_paths(report_files, crawl_options.get("state_path"))
    wanted = findings_named(fail_on)
    config = crawl_config(start_url, {**crawl_options, "audit": True, "command": "audit"})
    start = config.filters().clean(normalize_url(config.start_url) or config.start_url)
    from crawler.cli.previous_audit import kept_in_state, read_report

    previous = read_report(compare_with, start) if compare_with is not None else None
    state = Path(config.state_path) if config.state_path is not None else None
    try:
        report_dirs(report_files)
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None
    started = time.monotonic()
    try:
        result = _run(display, config)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: report what is known, then exit 130
        if display.latest is None:
            raise
        result = display.latest
        result.interrupted = result.interrupted or _unfinished(result)
        result.elapsed = time.monotonic() - started
        previous, state = None, None  # a part of the site is no change to report or keep
    display.phase = "writing reports"
    if not keep_duplicates:  # listed once, as the sitemap would; the others duplicate-of
        from crawler.engine.duplicates import drop_duplicates

        drop_duplicates(result)
    if result.external_note and result.external_note != "interrupted":
        failure.warn(result.external_note)  # once, not as a broken link each
    scope = Scope.for_start(normalize_url(config.start_url) or config.start_url, config.prefix)
    from crawler.page.hreflang import sitemap_alternates

    _alternates, problems = (sitemap_alternates(result.listed(), scope.contains)
                             if config.hreflang else ({}, []))
    if previous is None and state is not None:
        previous = kept_in_state(state, result.start_url)
    found = write_reports(report_files, result, {
        "hreflang": [asdict(problem) for problem in problems],
        "compared_with": None if previous is None else (
            str(compare_with) if compare_with is not None else "the last audit in --state")},
        previous=previous, snapshot_to=state, failing=wanted,
        terminal=None if report_files else _print_summary)
    if state is not None:  # its reports are its output: nothing to resume
        from crawler.store.state_file import mark_published

        mark_published(state)
    if not quiet and not result.interrupted:  # then the one line below says it all
        for line in seed_lines(result):
            display.console.print(line, markup=False)
        counts = ", ".join(f"{name} {found[name]['count']}" for name in FINDINGS)
        since = ", ".join(f"{name} {found[name]['count']}" for name in CHANGES
                          if found.get(name, {}).get("count"))
        written = (f"report(s): {', '.join(map(str, report_files))}" if report_files
                   else "summary above; --report FILE for every row")
        display.console.print(
            f"audited {result.stats.fetched} pages in {time.monotonic() - started:.1f}s: "
            f"{counts}; {written}", markup=False)
        if previous is not None:
            display.console.print(f"since the last audit: {since or 'no change'}",
                                  markup=False)
    if result.interrupted:
        return failure.fail(f"interrupted ({result.interrupted}); the report(s) say what was "
                            "known then", EXIT_INTERRUPTED)
    present = [name for name in wanted if found.get(name, {}).get("count")]
    if present:
        return failure.fail("findings present: " + ", ".join(
            f"{name} ({found[name]['count']})" for name in present), EXIT_FINDINGS)
    return _internal_errors(result)


def _unfinished(result: CrawlResult) -> str:
    """The phase a stopped audit did not finish, as its reports say it."""
    stats = result.stats
    if result.phase == "pages":
        return (f"pages: {stats.fetched:,} fetched, {stats.queued + stats.in_flight:,} "
                "still to fetch, interrupted")
    if result.phase == "live sitemap":
        return "live sitemap: interrupted while it was read"
    if result.phase == "orphans":
        return "orphans: interrupted while they were fetched"
    return f"{result.phase}: interrupted"


def _print_summary(lines: list[list[tuple[str, str]]]) -> None:
    """``audit`` without ``--report``: the triaged summary on standard output, in colour
    on a terminal only."""
    import sys

    from crawler.audit.summary_text import plain

    if not sys.stdout.isatty():
        sys.stdout.write(plain(lines))
        sys.stdout.flush()
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=True)
    for line in lines:
        text = Text()
        for piece, style in line:
            text.append(piece, style=style or None)
        console.print(text)


def _internal_errors(result: CrawlResult) -> int:
    """EXIT_OK, or EXIT_INTERNAL with one line when some URL met a fault of ours."""
    count = result.stats.internal_errors
    if not count:
        return EXIT_OK
    return failure.fail(f"{count} URL(s) met an internal error (rows internal-error: the "
                        "output is written without them; run with --debug for the "
                        "traceback, and please report it)", EXIT_INTERNAL)


def _how_to_resume(state_path: str | None) -> str:
    if state_path is None:
        return "--state FILE makes a crawl resumable"
    return how_to_resume(INVOCATION)
