"""--check-external at the end of a crawl: every distinct out-of-scope http(s) URL a
page links to, checked once (crawler.http.external), with what ``--state`` remembers
of earlier runs reused for ``--external-cache-days``."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from crawler.config import CrawlConfig
from crawler.engine.result import CrawlResult
from crawler.http.external import OFFLINE
from crawler.http.link_check import NOT_CHECKED, UNREACHABLE, Certificate, CheckOptions, LinkCheck
from crawler.http.link_checks import check_links
from crawler.store.no_state import NoState
from crawler.store.state import CrawlState
from crawler.urls.scope import Scope

DAY = 86400.0


async def check_external(config: CrawlConfig, scope: Scope, result: CrawlResult,
                         state: CrawlState | NoState) -> None:
    """Fill ``result.external``, ``.expiring`` and ``.external_unchecked``."""
    if result.referrers is None:
        return
    urls = _links_out(config, scope, result)
    wanted: frozenset[str] = frozenset()
    if config.check_fragments:  # pages elsewhere that links point into: their anchors read
        wanted = frozenset(url for record in result.records
                           for url, _fragment in record.fragment_links
                           if not scope.contains(url))
    total = len(urls)
    result.external = partial = []
    result.enter("external links")
    result.external_progress = (0, total, "", 0, 0.0)

    def progress(checked: int, total: int, origin: str, origin_left: int,
                 eta: float) -> None:
        result.external_progress = (checked, total, origin, origin_left, eta)

    try:
        checks, certificates, offline = await check_links(
            urls, CheckOptions.of(config), cached=_cache(config, state), want_ids=wanted,
            on_check=partial.append, on_progress=progress)
    except BaseException:  # stopped (Ctrl-C, SIGTERM): keep what is known, say the rest
        asked = {check.url for check in partial}
        now = time.time()
        partial += [LinkCheck(url, error=NOT_CHECKED, checked_at=now) for url in urls
                    if url not in asked]
        result.interrupted = f"external links: {len(asked):,} of {total:,} checked"
        result.external_note = "interrupted"
        raise
    _keep(config, result, state, (checks, certificates, offline))


def _links_out(config: CrawlConfig, scope: Scope, result: CrawlResult) -> list[str]:
    """The out-of-scope http(s) URLs pages link to, in URL order, --max-external at
    most (how many more is kept as ``external_unchecked``)."""
    assert result.referrers is not None
    urls: list[str] = []
    left = 0
    for url, _entry in result.referrers.in_url_order():
        if scope.contains(url) or not url.startswith(("http://", "https://")):
            continue
        if len(urls) < config.max_external:
            urls.append(url)
        else:
            left += 1
    result.external_unchecked = left
    return urls


def _cache(config: CrawlConfig, state: CrawlState | NoState
           ) -> Callable[[str], LinkCheck | None]:
    """The answers --state kept from the last --external-cache-days."""
    known = (state.external_checks(time.time() - config.external_cache_days * DAY)
             if config.external_cache_days > 0 else {})

    def cached(url: str) -> LinkCheck | None:
        row = known.get(url)
        if row is None:
            return None
        checked, status, final, hops, error, disallowed = row
        return LinkCheck(url, status, final, hops, error, disallowed=bool(disallowed),
                         checked_at=checked, cached=True)
    return cached


def _keep(config: CrawlConfig, result: CrawlResult, state: CrawlState | NoState,
          checked: tuple[list[LinkCheck], list[Certificate], bool]) -> None:
    """The answers into the result (and the state, for the next run)."""
    checks, certificates, offline = checked
    result.external = checks
    if offline:
        result.external_note = OFFLINE
    soon = datetime.now(UTC) + timedelta(days=config.cert_warn_days)
    result.expiring = [cert for cert in certificates if cert.expires <= soon]
    state.keep_external_checks(
        (check.url, check.checked_at, check.status, check.final_url, check.hops,
         check.error, int(check.disallowed)) for check in checks
        # what was not asked is not remembered: the next run asks it
        if not check.cached and not check.unchecked and check.error != UNREACHABLE)
