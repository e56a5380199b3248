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
from crawler.cli.run_record import RunOutcome, keep
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
    from crawler.cli.previous_sitemap import PreviousSitemap
    from crawler.cli.publish import Listing
    from crawler.cli.run_changes import RunChanges
    from crawler.engine.result import CrawlResult


def crawl_command(display: CrawlDisplay, options: dict[str, Any], *, quiet: bool) -> int:
    """``crawl``: the exit code of the whole run."""
    plan = plan_crawl(options)
    outcome = RunOutcome("crawl")
    with _holding(plan.publish.out_dir):  # one run at a time writes into a directory
        started = time.monotonic()
        result = crawl_site(display, plan.config)
        # what follows a crawl is loaded after it: the first request waits for nothing
        from crawler.cli.publish import list_pages, report_crawl
        from crawler.cli.run_changes import say_changes

        listing = list_pages(result, plan.listing, plan.config.hints(), plan.config.hreflang)
        outcome.found = report_crawl(plan.reports, listing) or None
        outcome.reports = [str(path) for path in plan.reports]
        with _published_before(plan) as previous:  # what IndexNow and the summary compare
            written = _publish(plan, listing, result, outcome)
            outcome.changes = _changes(plan, previous, listing)
            if not quiet:
                _say_published(display, listing, written, time.monotonic() - started, plan)
                if outcome.changes is not None and plan.config.state_path is not None:
                    say_changes(_echo(display), outcome.changes, written.index_url,
                                listing.options.base)
            echo = _silent if quiet else _echo(display)
            code = notify(plan, listing, written, previous, _heard(echo, outcome))
            outcome.exit_code = code or internal_errors(result)
            _keep_history(plan, result, outcome)
            return outcome.exit_code


def _publish(plan: CrawlPlan, listing: Listing, result: CrawlResult, outcome: RunOutcome
             ) -> WriteResult:
    """The sitemaps published; refused (the shrink rule, a full disk), the history says
    why before the run ends with it."""
    from crawler.cli.publish import publish

    try:
        written = publish(listing, plan.publish, robots_txt=result.robots_txt,
                          write_robots=result.robots_txt_withheld is None)
    except Failure as exc:
        outcome.published, outcome.refused, outcome.exit_code = False, str(exc), exc.code
        _keep_history(plan, result, outcome)
        raise
    outcome.published = True
    _keep_published(plan, result.robots_txt_withheld, written)
    return written


def _changes(plan: CrawlPlan, previous: PreviousSitemap | None, listing: Listing
             ) -> RunChanges | None:
    """What the run changed (with --state or --changes), written to --changes."""
    if plan.config.state_path is None and plan.changes is None:
        return None
    from crawler.cli.run_changes import run_changes, write_changes

    changes = run_changes(previous, listing.entries(), listing.result.listed())
    if plan.changes is not None:
        try:
            write_changes(plan.changes, changes)
        except OSError as exc:
            raise Failure(f"cannot write --changes {plan.changes}: {exc.strerror}",
                          EXIT_OUTPUT) from None
    return changes


def _keep_history(plan: CrawlPlan, result: CrawlResult, outcome: RunOutcome) -> None:
    if plan.config.state_path is not None:
        keep(Path(plan.config.state_path), result, outcome, plan.keep_runs)


def _heard(echo: Echo, outcome: RunOutcome) -> Echo:
    """The notifications' lines said, and kept for the history."""
    def both(line: str) -> None:
        outcome.notifications.append(line)
        echo(line)
    return both


@contextlib.contextmanager
def _holding(out_dir: Path) -> Iterator[None]:
    try:
        with output_lock(out_dir):
            yield
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None


@contextlib.contextmanager
def _published_before(plan: CrawlPlan) -> Iterator[PreviousSitemap | None]:
    """The sitemap published before this run (for IndexNow and what changed), let go at
    the end."""
    if plan.notify.indexnow is None and plan.config.state_path is None and (
            plan.changes is None):
        yield None
        return
    from crawler.cli.previous_sitemap import PreviousSitemap

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
