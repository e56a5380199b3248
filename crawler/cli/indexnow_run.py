"""``--indexnow``: after a run publishes, the URLs added, changed (lastmod moved) or
removed since the sitemap it replaced, sent to IndexNow (crawler.http.indexnow).

"Since the previous run" is read from the sitemap the previous run published in
``--out``, before it is replaced (crawler.cli.previous_sitemap): it is what
search engines were last told, whatever happened to the state in between. A
first run (no sitemap yet) sends nothing, unless ``--indexnow-all``.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from crawler.cli import failure
from crawler.cli.failure import EXIT_INDEXNOW, EXIT_USAGE, Failure
from crawler.cli.previous_sitemap import Changes, PreviousSitemap

if TYPE_CHECKING:
    from crawler.http.address_rule import NetworkRule
    from sitemap_writer import SitemapEntry


@dataclass(slots=True)
class IndexNowPlan:
    key: str
    endpoint: str
    everything: bool = False
    dry_run: bool = False
    key_location: str | None = None


def indexnow_plan(*, key: str | None, key_env: str | None, endpoint: str, everything: bool,
                  dry_run: bool, key_location: str | None, state: str | None
                  ) -> IndexNowPlan | None:
    """The options checked before any request; None when IndexNow is not asked for."""
    from crawler.http.indexnow import KEY

    if key_env is not None:
        if key is not None:
            raise Failure("--indexnow and --indexnow-env: give the key one way", EXIT_USAGE)
        key = os.environ.get(key_env)
        if not key:
            raise Failure(f"--indexnow-env {key_env}: the variable is not set", EXIT_USAGE)
    if key is None:
        if everything or dry_run or key_location:
            raise Failure("--indexnow-all, --indexnow-dry-run and --indexnow-key-location "
                          "need --indexnow KEY or --indexnow-env NAME", EXIT_USAGE)
        return None
    failure.SECRETS.append(key)  # from here on, no message shows it
    if not KEY.fullmatch(key):
        raise Failure("--indexnow: the key must be 8 to 128 letters, digits or dashes",
                      EXIT_USAGE)
    if state is None:
        raise Failure("--indexnow needs --state FILE: it sends what changed since the "
                      "last run", EXIT_USAGE)
    for option, url in (("--indexnow-endpoint", endpoint),
                        ("--indexnow-key-location", key_location)):
        if url is not None and urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise Failure(f"{option} must be an http(s) URL", EXIT_USAGE)
    return IndexNowPlan(key, endpoint, everything, dry_run, key_location)


def announce(plan: IndexNowPlan, previous: PreviousSitemap, *,
             entries: Callable[[], Iterable[SitemapEntry]], base_url: str,
             user_agent: str, echo: Callable[[str], None], rule: NetworkRule | None = None
             ) -> int:
    """Send (or with --indexnow-dry-run, print) what changed; the exit code. Both the key
    file and the endpoint are asked under the crawl's network ``rule``."""
    from crawler.http.address_rule import NetworkRule as Rule
    from crawler.http.indexnow import IndexNowError, Submission, key_file_holds_key, submit

    rule = rule or Rule.open()

    if previous.exists:
        changes = previous.changes(entries())
    elif plan.everything:
        changes = Changes(added=[entry.loc for entry in entries()])
    else:
        echo("IndexNow: first run, nothing sent (--indexnow-all sends every URL)")
        return 0
    host = urllib.parse.urlsplit(base_url).hostname or ""
    counts = (f"{len(changes.added):,} added, {len(changes.changed):,} changed, "
              f"{len(changes.removed):,} removed")
    endpoint_host = urllib.parse.urlsplit(plan.endpoint).netloc
    if plan.dry_run:
        for kind, urls in (("added", changes.added), ("changed", changes.changed),
                           ("removed", changes.removed)):
            for url in urls:
                click.echo(f"{kind}\t{url}")
        echo(f"IndexNow dry run: {len(changes):,} URL(s) would be sent to {endpoint_host} "
             f"({counts})")
        return 0
    if not changes:
        echo("IndexNow: nothing changed, nothing sent")
        return 0
    origin = base_url[: base_url.index("/", base_url.index("//") + 2)]
    key_file = plan.key_location or f"{origin}/{plan.key}.txt"
    problem = key_file_holds_key(key_file, plan.key, user_agent, rule)
    if problem is not None:
        return failure.fail(f"IndexNow: nothing sent: {problem} ({key_file}); put a file "
                            "named after the key, holding the key, at the site's root, or "
                            "name it with --indexnow-key-location", EXIT_INDEXNOW)
    try:
        sent = submit(Submission(plan.endpoint, host, plan.key, plan.key_location,
                                 user_agent, rule=rule), changes.urls())
    except IndexNowError as exc:
        return failure.fail(f"IndexNow: {exc} ({exc.sent:,} of {len(changes):,} URL(s) sent)",
                            EXIT_INDEXNOW)
    echo(f"IndexNow: {sent} URL(s) sent to {endpoint_host} ({counts})")
    return 0
