"""``crawl``: a site's sitemaps, in phases a newcomer reads top to bottom.

    start-up  → crawl  → list    → report  → publish  → notify
    plan_crawl  crawl_site list_pages report_crawl publish notify

Each phase is a function of its own module, taking and returning typed values:
the start-up phase checks every option before anything is fetched
(``crawl_plan.py``); the crawl fetches the pages, then (when asked) the live
sitemap's orphans and the external links (``crawl_site.py``); listing turns
records into the sitemap's entries, publishing writes them atomically
(``publish.py``); notifying tells Search Console and IndexNow (``notify.py``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cli import failure
from crawler.cli.crawl_plan import CrawlPlan, plan_crawl
from crawler.cli.crawl_site import crawl_site, internal_errors
from crawler.cli.failure import EXIT_OUTPUT, Failure
from crawler.cli.notify import Echo, notify
from crawler.cli.progress import CrawlDisplay
from crawler.cli.publish import list_pages, publish, report_crawl
from crawler.cli.sitemaps import print_summary
from sitemap_writer import (
    BUILTIN_STYLESHEET,
    MAX_NEWS_URLS,
    NEWS_NAME,
    OutputError,
    WriteResult,
    output_lock,
)

if TYPE_CHECKING:
    from crawler.cli.indexnow_run import PreviousSitemap
    from crawler.cli.publish import Listing


def crawl_command(display: CrawlDisplay, options: dict[str, Any], *, quiet: bool) -> int:
    """``crawl``: the exit code of the whole run."""
    plan = plan_crawl(options)
    with _holding(plan.publish.out_dir):  # one run at a time writes into a directory
        started = time.monotonic()
        result = crawl_site(display, plan.config)
        listing = list_pages(result, plan.listing, plan.config.hints(), plan.config.hreflang)
        report_crawl(plan.reports, listing)
        with _published_before(plan) as previous:  # what IndexNow compares with
            written = publish(listing, plan.publish, robots_txt=result.robots_txt,
                              write_robots=result.robots_txt_withheld is None)
            _keep_published(plan, result.robots_txt_withheld, written)
            if not quiet:
                _say_published(display, listing, written, time.monotonic() - started, plan)
            echo = _silent if quiet else _echo(display)
            return notify(plan, listing, written, previous, echo) or internal_errors(result)


@contextlib.contextmanager
def _holding(out_dir: Path) -> Iterator[None]:
    try:
        with output_lock(out_dir):
            yield
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None


@contextlib.contextmanager
def _published_before(plan: CrawlPlan) -> Iterator[PreviousSitemap | None]:
    """The sitemap published before this run (for IndexNow only), let go at the end."""
    if plan.notify.indexnow is None:
        yield None
        return
    from crawler.cli.indexnow_run import PreviousSitemap

    previous = PreviousSitemap(plan.publish.out_dir)
    try:
        yield previous
    finally:
        previous.close()


def _keep_published(plan: CrawlPlan, withheld: str | None, written: WriteResult) -> None:
    """The state file told this run published; robots.txt's line asked for if we
    could not write it."""
    if plan.config.state_path is not None:
        from crawler.store.state_file import mark_published  # SQLite: with --state only

        mark_published(Path(plan.config.state_path))
    if withheld is not None:
        failure.warn(f"robots.txt not written: {withheld}; add the line "
                     f"'Sitemap: {written.index_url}' to it yourself (any other robots.txt "
                     f"in {plan.publish.out_dir} was left as it was)")


def _say_published(display: CrawlDisplay, listing: Listing, written: WriteResult,
                   elapsed: float, plan: CrawlPlan) -> None:
    articles = listing.articles
    if articles is not None:
        display.console.print(f"News sitemap: {min(len(articles), MAX_NEWS_URLS)} "
                              "article(s) of the last two days"
                              + (f" in {NEWS_NAME}" if articles else
                                 f" ({NEWS_NAME} not written)"), markup=False)
    print_summary(display, listing.result, written, elapsed, plan.publish.out_dir)
    if plan.publish.stylesheet == BUILTIN_STYLESHEET:
        display.console.print(
            "--stylesheet builtin: browsers are dropping XSLT (Chrome turns it off in its 2026 "
            "releases); " + (f"read the sitemaps in {plan.publish.out_dir / 'sitemap.html'}, "
                            "which needs none" if plan.publish.html else
                            "--html writes sitemap.html, which needs none"), markup=False)
    sections = listing.options.sections
    if sections is not None and sections.note:
        display.console.print(sections.note, markup=False)


def _echo(display: CrawlDisplay) -> Echo:
    return lambda line: display.console.print(line, markup=False)


def _silent(_line: str) -> None:
    """--quiet: the notifications' lines are not said (their failures still are)."""
