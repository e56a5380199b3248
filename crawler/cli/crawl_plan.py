"""``crawl``'s start-up phase: every option checked, and turned into the options
object of each later phase, before anything is fetched or written.

A mistake in the options must cost nothing: no request, no lock, no file. So
this phase reads the notification keys (IndexNow, Search Console), the news and
section options, the report paths and the sitemap caps, and hands each later
phase only what it needs (:class:`ListingOptions`, :class:`PublishOptions`,
:class:`NotifyPlan`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cli.failure import EXIT_OUTPUT, EXIT_USAGE, Failure
from crawler.cli.report_files import check_paths, check_reports, report_dirs
from crawler.cli.sections import Sections, parse_sections
from crawler.cli.sitemaps import base_url_for, parse_news
from crawler.cli.wiring import crawl_config
from crawler.config import CrawlConfig
from crawler.urls.scope import Scope
from sitemap_writer import BUILTIN_STYLESHEET as BUILTIN
from sitemap_writer import (
    MAX_SITEMAP_BYTES,
    MAX_URLS_PER_SITEMAP,
    OutputError,
    ensure_output_dir,
    smallest_shard_bytes,
)

if TYPE_CHECKING:
    from crawler.cli.indexnow_run import IndexNowPlan
    from crawler.cli.search_console_run import SearchConsolePlan

_ABSOLUTE_OR_PATH = re.compile(r"(https?://[^\s\"<>]+|/[^\s\"<>]*)\Z", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ListingOptions:
    """What turns the crawl's records into the sitemap's entries."""

    scope: Scope
    base: str  # the URL the sitemaps are served from
    hreflang_external: bool
    drop_duplicates: bool
    sections: Sections | None  # --section, --sections auto
    publication: tuple[str, str] | None  # --news NAME:LANGUAGE


@dataclass(frozen=True, slots=True)
class PublishOptions:
    """Where and how the sitemaps are written."""

    out_dir: Path
    max_urls: int
    max_bytes: int
    compressed: bool
    allow_shrink: bool
    stylesheet: str | None
    html: bool = True  # sitemap.html and a page a shard (sitemap_writer.html_view)


@dataclass(frozen=True, slots=True)
class NotifyPlan:
    """Who is told of the published sitemaps (each None when not asked for)."""

    indexnow: IndexNowPlan | None = None
    console: SearchConsolePlan | None = None


@dataclass(frozen=True, slots=True)
class CrawlPlan:
    config: CrawlConfig
    listing: ListingOptions
    publish: PublishOptions
    reports: tuple[Path, ...]
    notify: NotifyPlan
    changes: Path | None = None  # --changes FILE: every change of the run (.json, .csv)
    keep_runs: int = 100  # --keep-runs: the runs --state keeps in its history


def plan_crawl(options: dict[str, Any]) -> CrawlPlan:
    """``crawl``'s options (click's, by name) checked; raises :class:`Failure`."""
    options = dict(options)
    notify = _notify_plan(options)
    publication = parse_news(options.pop("news", None))
    sections = parse_sections(options.pop("section", ()), options.pop("sections_mode", "none"))
    reports: tuple[Path, ...] = options.pop("report_files")
    out_dir: Path = options.pop("out_dir")
    changes = _changes_path(options.pop("changes_path", None))
    keep_runs = _keep_runs(options.pop("keep_runs", 100))
    check_reports(reports)
    check_paths(reports, options.get("state_path"), out_dir)
    if options.get("compare_sitemap") not in (None, "off") and not reports:
        raise Failure("--compare-sitemap needs --report FILE: the comparison is reported "
                      "there", EXIT_USAGE)
    options["news"] = publication is not None
    drop_duplicates = options.pop("drop_duplicates", None)
    # --drop-duplicates (asked for by name): meaningful fingerprints, read by the audit
    if reports or drop_duplicates:  # links and fingerprints, for findings
        options["audit"] = True
    base_url = options.pop("base_url", None)
    hreflang_external = options.pop("hreflang_external")
    stylesheet = options.pop("stylesheet", None)
    writer = {name: options.pop(name) for name in (
        "max_urls_per_sitemap", "max_bytes_per_sitemap", "compressed", "allow_shrink")}
    writer["html"] = options.pop("html", True)
    config = crawl_config(options.pop("start_url"), options)
    if stylesheet is not None and stylesheet != BUILTIN and not _ABSOLUTE_OR_PATH.match(
            stylesheet):
        raise Failure(f"--stylesheet {stylesheet!r} must be 'builtin', an absolute http(s) "
                      "URL or a path such as /sitemap.xsl", EXIT_USAGE)
    scope = Scope.for_start(config.start_url, config.prefix)
    listing = ListingOptions(scope, base_url_for(base_url, scope), hreflang_external,
                             drop_duplicates is not False, sections, publication)
    publish = _publish_options(writer, out_dir, stylesheet)
    _make_output_dirs(out_dir, reports)
    return CrawlPlan(config, listing, publish, reports, notify, changes=changes,
                     keep_runs=keep_runs)


def _changes_path(given: str | None) -> Path | None:
    if given is None:
        return None
    path = Path(given)
    if path.suffix.lower() not in (".json", ".csv") or path.is_dir():
        raise Failure(f"--changes {given}: name a .json or .csv file", EXIT_USAGE)
    return path


def _keep_runs(count: int) -> int:
    if count < 1:
        raise Failure(f"--keep-runs must be 1 or more (got {count})", EXIT_USAGE)
    return count


def _publish_options(options: dict[str, Any], out_dir: Path, stylesheet: str | None
                     ) -> PublishOptions:
    """The writer's options, its caps checked."""
    max_urls = options.pop("max_urls_per_sitemap")
    if not 1 <= max_urls <= MAX_URLS_PER_SITEMAP:
        raise Failure(f"--max-urls-per-sitemap must be 1..50000 (got {max_urls})", EXIT_USAGE)
    max_bytes = options.pop("max_bytes_per_sitemap")
    smallest = smallest_shard_bytes()
    if not smallest <= max_bytes <= MAX_SITEMAP_BYTES:
        raise Failure(f"--max-bytes-per-sitemap must be {smallest}..{MAX_SITEMAP_BYTES}, so that "
                      f"a shard can hold the longest URL a sitemap may list "
                      f"(got {max_bytes})", EXIT_USAGE)
    return PublishOptions(out_dir=out_dir, max_urls=max_urls, max_bytes=max_bytes,
                          compressed=options["compressed"],
                          allow_shrink=options["allow_shrink"], stylesheet=stylesheet,
                          html=options.pop("html", True))


def _notify_plan(options: dict[str, Any]) -> NotifyPlan:
    """IndexNow's and Search Console's keys read and checked (popped from ``options``)."""
    names = ("indexnow_key", "indexnow_env", "indexnow_endpoint", "indexnow_key_location",
             "indexnow_all", "indexnow_dry_run")
    indexnow = {name: options.pop(name, None) for name in names}
    indexnow_plan = None
    if any(indexnow[name] not in (None, False) for name in names if name != "indexnow_endpoint"):
        from crawler.cli.indexnow_run import indexnow_plan as plan  # only for --indexnow

        indexnow_plan = plan(key=indexnow["indexnow_key"], key_env=indexnow["indexnow_env"],
                             endpoint=indexnow["indexnow_endpoint"] or "",
                             everything=bool(indexnow["indexnow_all"]),
                             dry_run=bool(indexnow["indexnow_dry_run"]),
                             key_location=indexnow["indexnow_key_location"],
                             state=options.get("state_path"))
    key = options.pop("search_console_key", None)
    key_env = options.pop("search_console_env", None)
    endpoint = options.pop("search_console_endpoint", "")
    fail_on_submit = options.pop("fail_on_submit", False)
    console = None
    if key is not None or key_env is not None or fail_on_submit:
        from crawler.cli.search_console_run import search_console_plan  # only when asked

        console = search_console_plan(key, key_env, endpoint, fail_on_submit)
    return NotifyPlan(indexnow_plan, console)


def _make_output_dirs(out_dir: Path, reports: tuple[Path, ...]) -> None:
    try:
        ensure_output_dir(out_dir)
        report_dirs(reports)
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None
