"""The ``sitemap-crawler`` command: the one place that joins crawler and writer.

Options become a :class:`CrawlConfig`; the crawl's listed records become
sorted :class:`SitemapEntry` values; the writer publishes them. Every failure
a user can cause or meet ends as one line on stderr and an exit code:

====  ===========================================================
code  meaning
====  ===========================================================
0     sitemaps written
1     unexpected error (``--debug`` shows the traceback)
2     invalid START_URL or option
3     start URL unreachable, out of scope, disallowed, or no
      indexable page found (the previous output is kept)
4     output directory not writable
5     the new sitemap would list under half the URLs of the one in
      --out (an outage or a login wall?); ``--allow-shrink`` overrides
6     ``audit --fail-on``: a named finding is present (reports written)
130   interrupted (SIGINT/SIGTERM); the previous output is kept
====  ===========================================================
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import re
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any, ClassVar, NoReturn, TextIO

import anyio
import click

from crawler.__version__ import __version__
from crawler.audit.findings import FINDINGS, drop_duplicates, findings
from crawler.audit.live_sitemap import read_live_sitemap
from crawler.audit.report import (
    explain_empty,
    iter_rows,
    report_head,
    write_report_csv,
    write_report_json,
)
from crawler.audit.report_html import write_report_html
from crawler.cli.config_file import load_defaults
from crawler.cli.invocation import how_to_resume
from crawler.cli.progress import CrawlDisplay
from crawler.cli.quiet_stream import forgive_stderr
from crawler.config import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_CRAWL_DELAY,
    DEFAULT_MAX_ORPHANS,
    DEFAULT_MAX_PAGE_BYTES,
    DEFAULT_MAX_PARSE_SECONDS,
    DEFAULT_MAX_QUERY_VARIANTS,
    DEFAULT_MAX_RETRY_AFTER,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_USER_AGENT,
    CrawlConfig,
)
from crawler.config.hints import Hints
from crawler.core.credentials import Credentials, build_credentials
from crawler.core.errors import ConfigError, StartUrlError, StorageError, WorkerError
from crawler.core.records import PageRecord
from crawler.engine.coordinator import LiveSitemapReader, crawl
from crawler.engine.result import CrawlResult
from crawler.engine.worker_pool import worker_count
from crawler.http.fetch import Fetcher
from crawler.page.hreflang import sitemap_alternates
from crawler.store.live_sitemap import LiveSitemap
from crawler.store.state import mark_published
from crawler.urls.normalize import normalize_url
from crawler.urls.scope import Scope
from sitemap_writer import (
    BUILTIN_STYLESHEET as BUILTIN,
)
from sitemap_writer import (
    MAX_IMAGES_PER_URL,
    MAX_LOC_LENGTH,
    MAX_SITEMAP_BYTES,
    MAX_URLS_PER_SITEMAP,
    InvalidEntry,
    OutputError,
    SitemapEntry,
    SitemapError,
    WriteResult,
    ensure_output_dir,
    normalize_base_url,
    output_lock,
    published_url_count,
    read_sitemap,
    smallest_shard_bytes,
    write_sitemaps,
    writes_or_prunes,
)

EXIT_OK, EXIT_UNEXPECTED, EXIT_USAGE, EXIT_START_URL, EXIT_OUTPUT, EXIT_SHRINK = 0, 1, 2, 3, 4, 5
EXIT_FINDINGS = 6
EXIT_INTERRUPTED = 130
_ABSOLUTE_OR_PATH = re.compile(r"(https?://[^\s\"<>]+|/[^\s\"<>]*)\Z", re.IGNORECASE)
# The command line as given, to print the exact command that resumes a run.
_INVOCATION: list[str] = []
# The credentials of this run, to hide them from every message printed.
_SECRETS: list[Credentials] = []
_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", click.exceptions.UsageError
)


class Failure(Exception):
    """A failure already phrased for the user, with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sitemap-crawler")
def cli() -> None:
    """Crawl a website and write the XML sitemaps search engines read."""


def _read_config(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    """Eager: the file's settings become this run's defaults before other options are read."""
    if value is not None:
        ctx.default_map = load_defaults(value, ctx.command)


class _Workers(click.ParamType):
    """``--workers``: a positive number or ``auto`` (an integer or a string in a
    --config file)."""

    name = "N|auto"
    int_or_word = True  # what crawler.cli.config_file accepts for it

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int | str:
        if value == "auto":
            return "auto"
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is neither a number nor auto", param, ctx)
        if number < 1 or isinstance(value, bool):
            self.fail(f"{value!r} must be 1 or more, or auto", param, ctx)
        return number


WORKERS = _Workers()


class _Finite(click.types.FloatParamType):
    """A number of seconds or a rate: ``nan`` and ``inf`` parse as floats, and would
    switch a limit off (every comparison with NaN is false) or wait forever."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


FINITE = _Finite()


# Options of every command that crawls (crawl and audit), in --help order.
_CRAWL_OPTIONS = [
    click.option("--config", type=click.Path(dir_okay=False, path_type=Path), is_eager=True,
                  expose_value=False, callback=_read_config,
                  help="TOML file of options by their long names (max-pages = 5000, "
                  "exclude = [\"/cart/*\"]); the command line wins over it."),
    click.option("--prefix", help="Only crawl paths under this prefix "
                  "[default: START_URL's path up to its last '/']."),
    click.option("--concurrency", type=int, default=DEFAULT_CONCURRENCY, show_default=True,
                  help="Requests in flight at once (and the connection pool size)."),
    click.option("--workers", type=WORKERS, default=1, show_default=True, metavar="N|auto",
                  help="Processes fetching and reading pages (N, or auto: one per core). "
                  "--concurrency, --rate and --delay still hold for the whole crawl."),
    click.option("--http2", is_flag=True,
                  help="Use HTTP/2 where an https site offers it: one connection carrying "
                  "--concurrency streams (plain http stays HTTP/1.1)."),
    click.option("--timeout", type=FINITE, default=DEFAULT_TIMEOUT, show_default=True,
                  help="Total seconds allowed per request, body included."),
    click.option("--max-pages", type=int, help="Fetch at most this many URLs."),
    click.option("--max-depth", type=int, help="Follow links at most this deep (start URL = 0)."),
    click.option("--user-agent", default=DEFAULT_USER_AGENT, show_default=True,
                  help="User-Agent header; its leading token is matched in robots.txt."),
    click.option("--ignore-robots", is_flag=True, help="Do not fetch or obey robots.txt."),
    click.option("--max-page-bytes", type=int, default=DEFAULT_MAX_PAGE_BYTES, show_default=True,
                  help="Larger pages (after decompression) are recorded as too large."),
    click.option("--max-parse-seconds", type=FINITE, default=DEFAULT_MAX_PARSE_SECONDS,
                  show_default=True, help="A page not read within this (lexbor is "
                  "quadratic on some broken HTML) is recorded as parse-timeout."),
    click.option("--retries", type=int, default=DEFAULT_RETRIES, show_default=True,
                  help="Retries for timeouts, connection errors, 429 and 5xx."),
    click.option("--rate", type=FINITE, help="At most this many requests per second."),
    click.option("--delay", type=FINITE, default=0.0, show_default=True,
                  help="At least this many seconds between request starts."),
    click.option("--max-retry-after", type=FINITE, default=DEFAULT_MAX_RETRY_AFTER,
                  show_default=True, help="Cap on a server's Retry-After, in seconds."),
    click.option("--max-crawl-delay", type=FINITE, default=DEFAULT_MAX_CRAWL_DELAY,
                  show_default=True, help="Cap on a robots.txt Crawl-delay, in seconds."),
    click.option("--max-query-variants", type=int, default=DEFAULT_MAX_QUERY_VARIANTS,
                  show_default=True, help="Distinct query strings crawled per path."),
    click.option("--state", "state_path", type=click.Path(dir_okay=False),
                  help="SQLite file that remembers validators, fingerprints and links "
                  "between runs."),
    click.option("--resume", is_flag=True, help="Continue the interrupted run kept in --state."),
    click.option("--lastmod", type=click.Choice(["auto", "header", "none"]), default="auto",
                  show_default=True, help="auto: Last-Modified, else (with --state) when the "
                  "content last changed; header: Last-Modified only; none: no lastmod."),
    click.option("--ignore-selector", "ignore_selectors", multiple=True, metavar="CSS",
                  help="Leave matching elements out of change detection (repeatable)."),
    click.option("--exclude", multiple=True, metavar="PATTERN",
                  help="Never request or list matching URLs (repeatable; PATTERN: see above)."),
    click.option("--include", multiple=True, metavar="PATTERN",
                  help="Request only matching URLs, and START_URL (repeatable)."),
    click.option("--no-list", multiple=True, metavar="PATTERN",
                  help="Request matching URLs and follow their links, but never list them "
                  "(repeatable)."),
    click.option("--strip-param", "strip_params", multiple=True, metavar="NAME",
                  help="Remove this query parameter (a glob: utm_*) from every URL before "
                  "de-duplication and before the request (repeatable)."),
    click.option("--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                  help="Send this header to the crawled site's origin only (repeatable; "
                  "visible in ps: prefer --header-env)."),
    click.option("--header-env", "header_env", multiple=True, metavar="VAR",
                  help="Read a 'NAME: VALUE' header from this environment variable "
                  "(repeatable)."),
    click.option("--cookie", "cookies", multiple=True, metavar="NAME=VALUE",
                  help="Send this cookie to the crawled site's origin only (repeatable; "
                  "visible in ps: prefer --cookie-env)."),
    click.option("--cookie-env", "cookie_env", multiple=True, metavar="VAR",
                  help="Read cookies ('NAME=VALUE', or several as 'a=1; b=2') from this "
                  "environment variable (repeatable)."),
    click.option("--auth", metavar="USER:PASSWORD",
                  help="HTTP Basic credentials for the crawled site's origin (visible in ps: "
                  "prefer --auth-env)."),
    click.option("--auth-env", metavar="VAR",
                  help="Read USER:PASSWORD for HTTP Basic from this environment variable."),
    click.option("--hreflang/--no-hreflang", default=True, show_default=True,
                  help="Write the hreflang alternates pages declare (verified: listed and "
                  "reciprocal) into the sitemap."),
    click.option("--images", is_flag=True,
                  help="List each page's images (img src, the largest srcset candidate, "
                  "picture sources) with the image sitemap extension."),
    click.option("--documents", multiple=True, metavar="EXT[,EXT…]",
                  help="List in-scope links to these document types (pdf, docx, …) when they "
                  "answer 200 with that content type; asked for with HEAD, never downloaded."),
    click.option("-q", "--quiet", is_flag=True, help="No progress and no summary."),
    click.option("-v", "--verbose", is_flag=True, help="Log every request (URL, status, time)."),
    click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors."),
]
# Options of the sitemaps crawl writes.
_SITEMAP_OPTIONS = [
    click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path),
                  help="Directory to write the sitemaps, index and robots.txt into."),
    click.option("--base-url", help="Public URL where --out is served "
                  "[default: scheme://host[:port] + prefix]."),
    click.option("--max-urls-per-sitemap", type=int, default=MAX_URLS_PER_SITEMAP,
                  show_default=True, help="URLs per shard (1..50000)."),
    click.option("--max-bytes-per-sitemap", type=int, default=MAX_SITEMAP_BYTES,
                  show_default=True, help="Uncompressed bytes per shard (at most 52428800)."),
    click.option("--gzip/--no-gzip", "compressed", default=True, show_default=True,
                  help="Write shards as .xml.gz or plain .xml."),
    click.option("--hreflang-external", is_flag=True,
                  help="Also write alternates outside the crawl's scope, as pages declare them "
                  "(they cannot be verified)."),
    click.option("--stylesheet", metavar="URL|builtin",
                  help="Add <?xml-stylesheet?> for this XSL URL to every sitemap, or 'builtin' "
                  "to write our own sitemap.xsl beside them."),
    click.option("--changefreq", multiple=True, metavar="PATTERN=WORD|observed",
                  help="<changefreq> by rule, first match winning, or 'observed' (needs --state): "
                  "from the content changes seen across runs (repeatable)."),
    click.option("--priority", multiple=True, metavar="PATTERN=0.8|depth",
                  help="<priority> by rule, first match winning, or 'depth': 1.0 at START_URL, "
                  "0.1 less a level (repeatable)."),
    click.option("--drop-duplicates", is_flag=True,
                  help="List one page of each group with identical content (fewest path "
                  "segments, then shortest URL); the report names the others duplicate-of."),
    click.option("--allow-shrink", is_flag=True,
                  help="Publish even if the new sitemap lists under half the URLs of the old one."),
]


def _with(options: list[Any]) -> Any:
    """Apply click options in list order (decorators apply bottom-up)."""
    def decorate(function: Any) -> Any:
        for option in reversed(options):
            function = option(function)
        return function
    return decorate


@cli.command("crawl")
@click.argument("start_url")
@_with(_SITEMAP_OPTIONS)
@click.option("--report", "report_files", multiple=True, type=click.Path(path_type=Path),
              help="Also write an audit report: .json, .csv, .html (repeatable; see 'audit').")
@click.option("--max-orphans", type=int, default=DEFAULT_MAX_ORPHANS, show_default=True,
              help="For --compare-sitemap: orphans fetched and listed; the rest are counted.")
@click.option("--compare-sitemap", metavar="auto|URL|off", default="off", show_default=True,
              help="For --report: also read the sitemaps the site publishes now (auto: "
              "robots.txt's, else /sitemap.xml and /sitemap_index.xml) and compare.")
@_with(_CRAWL_OPTIONS)
def crawl_command(**options: Any) -> int:
    """Crawl START_URL and write sitemaps into --out.

    \b
    PATTERN is a glob over a URL's path and query after normalisation, where
    * is any run of characters and everything else is literal ('?' too):
      --exclude '/cart/*'  --exclude '*?*sort=*'  --no-list '/tag/*'
    or a Python regular expression after 're:', searched in the same string:
      --exclude 're:^/(search|login)'
    """
    return run_crawl(**options)


@cli.command("audit")
@click.argument("start_url")
@click.option("--report", "report_files", multiple=True, required=True,
              type=click.Path(path_type=Path),
              help="Where to write the report; the format follows the extension: .json "
              "(versioned schema), .csv (one row per URL) or .html (one self-contained "
              "page). Repeatable.")
@click.option("--fail-on", "fail_on", metavar="FINDING[,FINDING…]",
              help=f"Exit 6 when any of these findings is present ({', '.join(FINDINGS)}); "
              "the reports are written first.")
@click.option("--max-orphans", type=int, default=DEFAULT_MAX_ORPHANS, show_default=True,
              help="Orphans of the live sitemap fetched and listed; the rest are counted.")
@click.option("--compare-sitemap", metavar="auto|URL|off", default="auto", show_default=True,
              help="Read the sitemaps the site publishes now (auto: robots.txt's Sitemap: "
              "lines, else /sitemap.xml and /sitemap_index.xml; or this URL) and compare "
              "them with the crawl; orphans they list are fetched, never listed.")
@_with(_CRAWL_OPTIONS)
def audit_command(**options: Any) -> int:
    """Crawl START_URL as 'crawl' does and report on the site's health; no sitemap is written.

    \b
    Findings: broken-links, redirected-links, duplicates, canonical-problems,
    titles, noindex-linked; against the live sitemap: non-indexable-in-sitemap,
    orphans, missing-from-sitemap, sitemap-lastmod, sitemap-errors. Every URL
    row says who links to it (the first five pages, and the anchor text of one).
    """
    return run_crawl(audit=True, **options)


def run_crawl(*, debug: bool, quiet: bool, verbose: bool, **options: Any) -> int:
    display = CrawlDisplay(quiet=quiet, verbose=verbose,
                           concurrency=max(1, int(options.get("concurrency") or 1)),
                           max_pages=options.get("max_pages"))
    try:
        with _signals_interrupt():
            if options.pop("audit", False):
                return _audit(display, quiet=quiet, **options)
            return _crawl_and_write(display, quiet=quiet, **options)
    except Failure as failure:
        return _fail(str(failure), failure.code)
    except KeyboardInterrupt:
        latest = display.latest
        done = (f"after {latest.stats.fetched} pages ({latest.stats.listed} listable)"
                if latest else "before the first page")
        return _fail(f"interrupted {done}; previous output left untouched; "
                     + _how_to_resume(options.get("state_path")), EXIT_INTERRUPTED)
    except Exception as exc:  # the last line of defence: one line, not a traceback
        if debug:
            click.echo(_redact(traceback.format_exc()), err=True, nl=False)
        return _fail(f"unexpected error: {exc!r} (run with --debug for details)",
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
    drop_duplicates: bool,
    **crawl_options: Any,
) -> int:
    _check_reports(report_files)
    _check_paths(report_files, crawl_options.get("state_path"), out_dir)
    if crawl_options.get("compare_sitemap") not in (None, "off") and not report_files:
        raise Failure("--compare-sitemap needs --report FILE: the comparison is reported "
                      "there", EXIT_USAGE)
    if report_files or drop_duplicates:  # links and fingerprints, for findings
        crawl_options["audit"] = True
    config = _config(start_url, crawl_options)
    if stylesheet is not None and stylesheet != BUILTIN and not _ABSOLUTE_OR_PATH.match(
            stylesheet):
        raise Failure(f"--stylesheet {stylesheet!r} must be 'builtin', an absolute http(s) "
                      "URL or a path such as /sitemap.xsl", EXIT_USAGE)
    scope = Scope.for_start(config.start_url, config.prefix)
    base = _base_url(base_url, scope)
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
        _report_dirs(report_files)
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None

    try:
        with output_lock(out_dir):
            return _crawl_locked(display, config, quiet=quiet, out_dir=out_dir, base=base,
                                 max_urls=max_urls_per_sitemap, max_bytes=max_bytes_per_sitemap,
                                 compressed=compressed, report_files=report_files,
                                 allow_shrink=allow_shrink,
                                 extras=_Extras(scope, hreflang_external, stylesheet,
                                                drop_duplicates))
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
                  report_files: tuple[Path, ...], allow_shrink: bool, extras: _Extras) -> int:
    """Crawl, then publish; runs while this process holds the output directory."""
    started = time.monotonic()
    result = _run(display, config)
    if extras.drop_duplicates:
        drop_duplicates(result)
    listed = result.listed()
    spilled = getattr(result.records, "spilled", False)
    alternates, problems = (sitemap_alternates(
        listed, extras.scope.contains, external=extras.hreflang_external,
        is_listed=result.records.is_listed if spilled else None)  # type: ignore[attr-defined]
        if config.hreflang else ({}, []))
    _write_reports(report_files, result, {
        "base_url": base, "hreflang": [asdict(problem) for problem in problems]})
    hints = config.hints()
    entries: Iterable[SitemapEntry]
    if spilled:
        # Records on disk: one pass to count and see what the shards declare, one
        # to write; the entries are never all in memory.
        count, has_alternates, has_images = _survey(_entries(listed, alternates, hints))
        entries = _entries(listed, alternates, hints)
    else:
        entries = list(_entries(listed, alternates, hints))
        count, has_alternates, has_images = _survey(entries)
    if not count:
        raise Failure(explain_empty(result) + "; previous output kept", EXIT_START_URL)
    previous = published_url_count(out_dir)
    if not allow_shrink and count * 2 < previous:
        raise Failure(
            f"refusing to replace a sitemap of {previous} URLs with one of {count} "
            f"(more than half gone: an outage or a login wall?); previous output kept; "
            "use --allow-shrink if the site really shrank", EXIT_SHRINK)
    written = write_sitemaps(
        entries, out_dir=out_dir, base_url=base, compressed=compressed,
        max_urls=max_urls, max_bytes=max_bytes, robots_txt=result.robots_txt,
        write_robots=result.robots_txt_withheld is None,
        alternates=has_alternates, images=has_images,
        stylesheet=extras.stylesheet,
    )
    if config.state_path is not None:
        mark_published(Path(config.state_path))
    if result.robots_txt_withheld is not None:
        _warn(f"robots.txt not written: {result.robots_txt_withheld}; add the line "
              f"'Sitemap: {written.index_url}' to it yourself (any other robots.txt in "
              f"{out_dir} was left as it was)")
    if not quiet:
        _summary(display, result, written, time.monotonic() - started, out_dir)
    return EXIT_OK


def _run(display: CrawlDisplay, config: CrawlConfig) -> CrawlResult:
    """The crawl itself, its setup failures turned into exit codes; a worker given up
    on the way is said."""
    result = _run_crawl(display, config)
    for why in result.workers_lost:
        _warn(f"{why}: killed, and its pages went to the other workers")
    return result


def _run_crawl(display: CrawlDisplay, config: CrawlConfig) -> CrawlResult:
    interrupt = _signals_interrupt.active

    async def main() -> CrawlResult:
        if interrupt is not None:
            interrupt.task = asyncio.current_task()
        return await crawl(config, on_record=display, live_sitemap=_live_reader(config))

    try:
        with display:
            return anyio.run(main)
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


def _live_reader(config: CrawlConfig) -> LiveSitemapReader | None:
    """--compare-sitemap: the audit's reader, with the writer's XML parser."""
    asked = config.compare_sitemap
    if asked is None:
        return None

    async def read(fetcher: Fetcher, scope: Scope, robots_txt: bytes | None,
                   clean: Callable[[str], str],
                   secret: Callable[[str], bool] | None) -> LiveSitemap:
        return await read_live_sitemap(fetcher, asked, scope, robots_txt, read_sitemap, clean,
                                       secret)
    return read


REPORT_FORMATS = {".json": "json", ".csv": "csv", ".html": "html"}


def _check_reports(report_files: tuple[Path, ...]) -> None:
    for path in report_files:
        if path.suffix.lower() not in REPORT_FORMATS:
            raise Failure(f"--report {path}: the format follows the extension, which must be "
                          f"one of {', '.join(REPORT_FORMATS)}", EXIT_USAGE)


def _check_paths(report_files: tuple[Path, ...], state_path: str | None,
                 out_dir: Path | None = None) -> None:
    """Paths that would collide are refused before the first request (exit 2): a
    report that is a directory (it failed only after the whole crawl), a report
    that is the state file (it overwrote the state), a file in --out that the
    writer replaces or prunes (a state named like a shard was deleted)."""
    named: dict[Path, str] = {}
    files = [(f"--report {path}", path) for path in report_files]
    if state_path is not None:
        files.append((f"--state {state_path}", Path(state_path)))
    out = out_dir.resolve() if out_dir is not None else None
    for option, path in files:
        if path.is_dir():
            raise Failure(f"{option} is a directory; name a file", EXIT_USAGE)
        resolved = path.resolve()
        if resolved in named:
            raise Failure(f"{option} is the same file as {named[resolved]}; give each its "
                          "own", EXIT_USAGE)
        named[resolved] = option
        if out is not None and resolved.parent == out and writes_or_prunes(resolved.name):
            raise Failure(f"{option} is a file the sitemaps in --out {out_dir} replace or "
                          "remove; keep it elsewhere", EXIT_USAGE)


def _report_dirs(report_files: tuple[Path, ...]) -> None:
    for path in report_files:
        ensure_output_dir(path.parent if str(path.parent) else Path("."))


def _write_reports(report_files: tuple[Path, ...], result: CrawlResult,
                   extra: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each report streamed to its file, rows made as they are written; the findings
    (computed once for every format) are returned for the summary and --fail-on."""
    found = findings(result) if report_files else {}
    for path in report_files:
        kind = REPORT_FORMATS[path.suffix.lower()]
        with _atomic_text(path) as out:
            if kind == "json":
                write_report_json(out, result, extra, found)
            elif kind == "csv":
                write_report_csv(out, result, found)
            else:
                write_report_html(out, report_head(result, extra, found),
                                  lambda: iter_rows(result))
    return found


def _audit(display: CrawlDisplay, *, quiet: bool, start_url: str,
           report_files: tuple[Path, ...], fail_on: str | None, **crawl_options: Any) -> int:
    """``audit``: the crawl, its reports, and exit 6 for a finding named by --fail-on."""
    _check_reports(report_files)
    _check_paths(report_files, crawl_options.get("state_path"))
    wanted = _findings_named(fail_on)
    config = _config(start_url, {**crawl_options, "audit": True, "command": "audit"})
    try:
        _report_dirs(report_files)
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None
    started = time.monotonic()
    result = _run(display, config)
    scope = Scope.for_start(normalize_url(config.start_url) or config.start_url, config.prefix)
    _alternates, problems = (sitemap_alternates(result.listed(), scope.contains)
                             if config.hreflang else ({}, []))
    found = _write_reports(report_files, result, {
        "hreflang": [asdict(problem) for problem in problems]})
    if config.state_path is not None:  # its reports are its output: nothing to resume
        mark_published(Path(config.state_path))
    if not quiet:
        counts = ", ".join(f"{name} {found[name]['count']}" for name in FINDINGS)
        display.console.print(
            f"audited {result.stats.fetched} pages in {time.monotonic() - started:.1f}s: "
            f"{counts}; report(s): {', '.join(map(str, report_files))}", markup=False)
    present = [name for name in wanted if found[name]["count"]]
    if present:
        return _fail("findings present: " + ", ".join(
            f"{name} ({found[name]['count']})" for name in present), EXIT_FINDINGS)
    return EXIT_OK


def _findings_named(fail_on: str | None) -> list[str]:
    names = [name.strip() for name in (fail_on or "").split(",") if name.strip()]
    unknown = [name for name in names if name not in FINDINGS]
    if unknown:
        raise Failure(f"--fail-on {', '.join(unknown)}: not a finding (one of "
                      f"{', '.join(FINDINGS)})", EXIT_USAGE)
    return names


def _config(start_url: str, options: dict[str, Any]) -> CrawlConfig:
    for name in ("ignore_selectors", "exclude", "include", "no_list", "strip_params",
                 "changefreq", "priority", "documents"):
        options[name] = tuple(options.get(name, ()))
    if "workers" in options:
        options["workers"] = worker_count(options["workers"], options.get("concurrency") or 1)
    if options.get("compare_sitemap") in ("off", ""):
        options["compare_sitemap"] = None
    try:
        credentials = build_credentials(
            headers=options.pop("headers", ()), cookies=options.pop("cookies", ()),
            auth=options.pop("auth", None), auth_env=options.pop("auth_env", None),
            header_env=options.pop("header_env", ()), cookie_env=options.pop("cookie_env", ()),
            environ=os.environ)
        _SECRETS.append(credentials)
        return CrawlConfig(start_url=start_url, credentials=credentials, **options)
    except ConfigError as exc:
        raise Failure(str(exc), EXIT_USAGE) from None


def _base_url(base_url: str | None, scope: Scope) -> str:
    if base_url is None:
        return scope.root[: scope.root.rfind("/") + 1]
    normalized = normalize_url(base_url)
    try:
        if normalized is None:
            raise SitemapError(f"--base-url {base_url!r} must be an absolute http(s) URL")
        base = normalize_base_url(normalized)
    except SitemapError as exc:
        raise Failure(str(exc), EXIT_USAGE) from None
    if not scope.root.startswith(base):
        raise Failure(
            f"--base-url {base} cannot list the crawled URLs under {scope.root}: a sitemap may "
            "only list URLs under the directory it is served from", EXIT_USAGE)
    return base


def _entries(records: Iterable[PageRecord], alternates: dict[str, tuple[tuple[str, str], ...]],
             hints: Hints) -> Iterator[SitemapEntry]:
    for record in records:
        try:
            yield SitemapEntry(record.url, record.lastmod,
                               changefreq=hints.changefreq(record),
                               priority=hints.priority(record),
                               alternates=alternates.get(record.url, ()),
                               images=_valid_images(record.images or ()))
        except InvalidEntry:
            continue  # refused rather than published; the report still lists the page


def _survey(entries: Iterable[SitemapEntry]) -> tuple[int, bool, bool]:
    """How many entries, and whether any carries alternates, or images."""
    count, has_alternates, has_images = 0, False, False
    for count, entry in enumerate(entries, 1):  # noqa: B007 - the count is the point
        has_alternates = has_alternates or bool(entry.alternates)
        has_images = has_images or bool(entry.images)
    return count, has_alternates, has_images


def _valid_images(images: tuple[str, ...]) -> tuple[str, ...]:
    """The images a sitemap may carry (an image URL too long for it is left out)."""
    return tuple(image for image in images[:MAX_IMAGES_PER_URL]
                 if len(image) <= MAX_LOC_LENGTH)


@contextlib.contextmanager
def _atomic_text(path: Path) -> Iterator[TextIO]:
    """A report written beside its final name and renamed over it once complete, so a
    failed or interrupted run leaves the previous report as it was."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path("."))
        with os.fdopen(fd, "w", encoding="utf-8", newline="", buffering=1 << 20) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise Failure(f"cannot write report {path}: {exc.strerror}", EXIT_OUTPUT) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # no partial report left behind


def _summary(display: CrawlDisplay, result: CrawlResult, written: WriteResult,
             elapsed: float, out_dir: Path) -> None:
    stats = result.stats
    asked, used = result.crawl_delay_asked, result.crawl_delay_used
    if asked is not None and used is not None and used < asked:
        display.console.print(f"robots.txt Crawl-delay {asked:g} s capped at {used:g} s "
                              "(--max-crawl-delay)", markup=False)
    rate = stats.fetched / elapsed if elapsed > 0 else 0.0
    changed = [name for name in written.published.changed if name.startswith("sitemap-")]
    display.console.print(
        f"crawled {stats.fetched} pages in {elapsed:.1f}s ({rate:.0f} pages/s, "
        f"{stats.not_modified} not modified): {written.url_count} listed, "
        f"{stats.fetched - written.url_count} excluded, {stats.errors} errors, "
        f"{stats.skipped} skipped; {len(changed)} of {len(written.shards)} sitemap "
        f"shard(s) changed in {out_dir}",
        markup=False,
    )


def _how_to_resume(state_path: str | None) -> str:
    if state_path is None:
        return "--state FILE makes a crawl resumable"
    return how_to_resume(_INVOCATION)


def _redact(text: str) -> str:
    for credentials in _SECRETS:
        text = credentials.redact(text)
    return text


def _warn(message: str) -> None:
    """A line about the output a person must act on: shown even with --quiet."""
    click.echo(f"sitemap-crawler: warning: {_redact(message)}", err=True)


def _fail(message: str, code: int) -> int:
    click.echo(f"sitemap-crawler: error: {_redact(message)}", err=True)
    return code


class _signals_interrupt:
    """Make SIGTERM stop a crawl the way Ctrl-C does (cron and systemd send it).

    Also when Ctrl-C is ignored: a shell starts a script's ``crawl … &`` with
    SIGINT ignored, and it stays ignored, but ``kill`` must still stop the crawl."""

    active: ClassVar[_signals_interrupt | None] = None

    def __enter__(self) -> _signals_interrupt:
        self._previous = signal.getsignal(signal.SIGTERM)
        self.task: asyncio.Task[Any] | None = None  # the crawl's, while it runs
        self.fired = False
        signal.signal(signal.SIGTERM, self._handle)
        _signals_interrupt.active = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        signal.signal(signal.SIGTERM, self._previous)
        _signals_interrupt.active = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if callable(signal.getsignal(signal.SIGINT)):
            # Re-deliver as SIGINT, so asyncio cancels the crawl exactly as for Ctrl-C.
            os.kill(os.getpid(), signal.SIGINT)
            return
        # SIGINT is ignored: do what asyncio's runner does for Ctrl-C, cancel the
        # crawl's task (then _run raises KeyboardInterrupt); outside it, raise now.
        self.fired = True
        task = self.task
        if task is not None and not task.done():
            task.get_loop().call_soon_threadsafe(task.cancel)
        else:
            raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: click's own usage errors, too, become one line and exit 2."""
    _INVOCATION[:] = sys.argv[1:] if argv is None else argv
    forgive_stderr()  # a closed or full stderr must not cost the output
    try:
        code = cli.main(args=_INVOCATION, prog_name="sitemap-crawler", standalone_mode=False)
    except _NO_ARGS_IS_HELP as exc:  # bare "sitemap-crawler": show the help, like git does
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        code = EXIT_USAGE
    except click.UsageError as exc:
        code = _fail(exc.format_message(), EXIT_USAGE)
    except (click.exceptions.Abort, KeyboardInterrupt):  # before or after the crawl
        code = _fail("interrupted; previous output left untouched; "
                     + how_to_resume(_INVOCATION), EXIT_INTERRUPTED)
    except click.ClickException as exc:
        code = _fail(exc.format_message(), exc.exit_code)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_UNEXPECTED
    sys.exit(code or 0)
