"""``crawl``'s last phase: search engines told of the published sitemaps.

Search Console is asked to read the index; IndexNow is sent the URLs added,
changed and removed since the sitemap published before this run. Both go
through the crawl's network rule. Each says one line; a failure is a warning,
or an exit code where the run asked for one (``--fail-on-submit``, IndexNow's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from crawler.cli.crawl_plan import CrawlPlan
from sitemap_writer import WriteResult

if TYPE_CHECKING:
    from crawler.cli.previous_sitemap import PreviousSitemap
    from crawler.cli.publish import Listing

Echo = Callable[[str], None]


def notify(plan: CrawlPlan, listing: Listing, written: WriteResult,
           previous: PreviousSitemap | None, echo: Echo) -> int:
    """The exit code the notifications ask for (0 when none is asked, or all went)."""
    submitted = 0
    if plan.notify.console is None and plan.notify.indexnow is None:
        return 0
    from crawler.http.address_rule import rule_for_config

    rule = rule_for_config(plan.config)
    if plan.notify.console is not None:
        from crawler.cli.search_console_run import submit

        submitted = submit(plan.notify.console, written.index_url, plan.config.user_agent,
                           echo, rule)
    if plan.notify.indexnow is not None and previous is not None:
        from crawler.cli.indexnow_run import announce

        return announce(plan.notify.indexnow, previous, entries=listing.entries,
                        base_url=listing.options.base, user_agent=plan.config.user_agent,
                        echo=echo, rule=rule) or submitted
    return submitted
