"""What an audit tells a site owner to fix, computed from one crawl's records — pure.

Each finding has a name (what ``--fail-on`` takes), a count and its items;
every item names the URLs involved and, where links are the cause, the pages
that carry them ("found on"), so the report answers "where do I fix it?".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from crawler.audit.grouping import Where
from crawler.audit.live_findings import live_findings
from crawler.audit.names import EXTERNAL_FINDINGS, LIVE_FINDINGS, RENDER_FINDINGS
from crawler.audit.render_findings import RenderFindings
from crawler.core.records import PageRecord, Verdict
from crawler.engine.duplicates import duplicate_groups, keeper_order
from crawler.engine.result import CrawlResult
from crawler.store.record_store import RecordStore
from crawler.store.referrers import among_first
from crawler.store.skipped_store import SkippedStore
from crawler.urls.normalize import origin_of

REDIRECTS = (Verdict.REDIRECT, Verdict.REDIRECT_LOOP)
# the findings about a page itself, told by template and path prefix when many
GROUPED = ("missing-descriptions", "missing-h1", "multiple-h1", "titles")


class RecordLookup(Protocol):
    """Records by URL: a dict, or a :class:`RecordStore` (which may be on disk)."""

    def get(self, url: str, /) -> PageRecord | None: ...


def findings(result: CrawlResult) -> dict[str, dict[str, Any]]:
    """Every finding, each as ``{"count": n, "items": [...]}``, in a fixed order.

    The records are read once, in crawl order: on a site of a million pages they are
    on disk (:mod:`crawler.store.record_store`), and every pass costs seconds."""
    records, skipped = RecordStore.of(result.records), SkippedStore.of(result.skipped)
    where = _found_on(result)
    pages = _PageFindings(result, records, skipped, where)
    for record in records:
        pages.add(record)
    # Items by URL, so a report reads the same whichever page came first: pages are
    # read concurrently, and the records are in the order they were answered.
    computed = {
        **pages.by_name(),
        **_external(result, where),
        "broken-fragments": _broken_fragments(pages.pointing, records, result),
        **live_findings(result, records, skipped),
        **pages.rendering.findings(),
    }
    rendering = pages.rendering
    result.render_summary = rendering.summary() if rendering.asked else None
    found = {name: {"count": len(items), "items": items} for name, items in computed.items()}
    for name, where_they_are in pages.where_found.items():
        groups = where_they_are.summary()
        if groups is not None:
            found[name]["groups"] = groups
    found["soft-404"]["probes"] = result.soft_404_probes  # the report names them
    for names, why in _not_checked(result, rendering.asked):
        for name in names:
            found[name]["not_checked"] = why
    so_far = _pages_so_far(result)
    if so_far is not None:  # stopped among the pages: what they say is not the site's
        for name in _READ_OFF_PAGES:
            found[name]["so_far"] = so_far
    return found


# the findings read off the pages themselves: partial when the run stopped among them
_READ_OFF_PAGES = ("broken-links", "redirected-links", "soft-404", "duplicates",
                   "canonical-problems", "titles", "noindex-linked", "missing-descriptions",
                   "duplicate-descriptions", "missing-h1", "multiple-h1",
                   "structured-data-errors", "incomplete-videos", "broken-fragments")


def _pages_so_far(result: CrawlResult) -> str | None:
    """``233 of 1,163 pages`` when the run was stopped before its last page."""
    if not result.interrupted or result.phase != "pages":
        return None
    stats = result.stats
    return f"{stats.fetched:,} of {stats.fetched + stats.queued + stats.in_flight:,} pages"


MANY_HOME_REDIRECTS = 5  # URLs redirecting to the home page: from this many, pages gone


class _PageFindings:
    """The findings read off each record, in one pass over them all."""

    def __init__(self, result: CrawlResult, records: RecordStore, skipped: SkippedStore,
                 where: Callable[[str], dict[str, Any]]) -> None:
        self.records, self.skipped, self.where = records, skipped, where
        self.referrers = result.referrers
        self.catch_all_home = result.catch_all_home
        self.homes = {origin_of(result.start_url) + "/", result.start_url}
        # URLs redirecting to the home page while no probe did: pages gone, once many do
        self.home_redirects: list[dict] = []
        self.lists: dict[str, list[dict]] = defaultdict(list)
        self.rendering = RenderFindings()
        self.dropped: dict[str, list[str]] = defaultdict(list)  # kept URL -> its duplicates
        # where the per-page findings live: their templates and path prefixes
        self.where_found = {name: Where() for name in GROUPED}
        # (target, fragment) -> [how many pages link there, the first five of them by URL]
        self.pointing: dict[tuple[str, str], list[Any]] = {}

    def linked(self, url: str) -> bool:
        return self.referrers is not None and self.referrers.count(url) > 0

    def add(self, record: PageRecord) -> None:
        self.rendering.add(record)
        for link in record.fragment_links:
            entry = self.pointing.setdefault(link, [0, []])
            entry[0] += 1
            among_first(entry[1], record.url)
        if record.duplicate_of is not None:
            self.dropped[record.duplicate_of].append(record.url)
        self._links_to(record)
        self._soft_404(record)
        if record.canonical is not None and record.canonical != record.url:
            problem = _canonical_problem(record.canonical, self.records, self.skipped)
            if problem is not None:
                self.lists["canonical-problems"].append(
                    {"url": record.url, "canonical": record.canonical, "problem": problem})
        if record.verdict is Verdict.LISTED and record.content_type and (
                "html" in record.content_type):
            self._what_it_says(record)
        if record.video_problems and record.verdict is Verdict.LISTED:
            self.lists["incomplete-videos"].append(
                {"url": record.url, "problems": list(record.video_problems)})
        if record.lastmod_note is not None:
            problem, before, now = record.lastmod_note
            self.lists["misleading-last-modified"].append(
                {"url": record.url, "problem": problem, "before": before, "now": now})
        if record.structured_errors:
            self.lists["structured-data-errors"].append(
                {"url": record.url, "types": list(record.structured_types),
                 "errors": list(record.structured_errors)})

    def _links_to(self, record: PageRecord) -> None:
        """A page other pages link to that is broken, redirects, or is noindex."""
        url, verdict = record.url, record.verdict
        if not self.linked(url):
            return
        if record.error is not None or (record.status or 0) >= 400:
            self.lists["broken-links"].append(
                {"url": url, "status": record.status,
                 "error": record.error.value if record.error else None, **self.where(url)})
        if verdict in REDIRECTS:
            chain, final = final_target(record, self.records)
            self.lists["redirected-links"].append(
                {"url": url, "use_instead": final, "hops": len(chain) - 1, "chain": chain,
                 **self.where(url)})
        if verdict is Verdict.NOINDEX:
            self.lists["noindex-linked"].append({"url": url, **self.where(url)})

    def _soft_404(self, record: PageRecord) -> None:
        """A "not found" page answering 200; or, where unknown URLs redirect to the
        home page (a probe did), a URL that does too: not a page moved, a page gone."""
        url = record.url
        if record.verdict is Verdict.SOFT_404:
            self.lists["soft-404"].append({"url": url, "why": record.soft_404,
                                           "title": record.title, **self.where(url)})
        elif record.verdict not in REDIRECTS or _home_itself(url):
            return
        elif self.catch_all_home is not None and record.redirect_to == self.catch_all_home:
            self.lists["soft-404"].append(
                {"url": url, "why": "redirects to the home page, as URLs that exist "
                 "nowhere do", "title": None, **self.where(url)})
        elif record.redirect_to in self.homes:
            self.home_redirects.append({"url": url, "title": None, **self.where(url)})

    def soft_404s(self) -> list[dict]:
        """The soft 404s, with the URLs redirecting home where :data:`MANY_HOME_REDIRECTS`
        or more do: one or two may be the home page's other names; a pattern of them is
        removed pages sent home, which search engines treat as soft 404s."""
        found, home = self.lists["soft-404"], self.home_redirects
        if len(home) >= MANY_HOME_REDIRECTS:
            why = f"redirects to the home page, as {len(home):,} URLs of this site do"
            found = found + [{"url": item["url"], "why": why, **item} for item in home]
        return _by_url(found)

    def _what_it_says(self, record: PageRecord) -> None:
        """A listed HTML page's title, description and headings."""
        url, lists, where_found = record.url, self.lists, self.where_found
        if record.word_count is not None:  # what the page says was read
            if not record.description:
                lists["missing-descriptions"].append({"url": url})
                where_found["missing-descriptions"].add(url, record.template)
            if record.h1_count == 0:
                lists["missing-h1"].append({"url": url})
                where_found["missing-h1"].add(url, record.template)
            elif record.h1_count > 1:
                lists["multiple-h1"].append({"url": url, "h1_count": record.h1_count,
                                             "h1": record.h1})
                where_found["multiple-h1"].add(url, record.template)
        if record.title is None:
            lists["missing-titles"].append({"url": url, "problem": "missing-title"})
            where_found["titles"].add(url, record.template)
        elif record.title == "":
            lists["empty-titles"].append({"url": url, "problem": "empty-title"})
            where_found["titles"].add(url, record.template)

    def by_name(self) -> dict[str, list[dict]]:
        """The per-page findings, each sorted by URL, in the reports' order."""
        lists, records = self.lists, self.records
        return {
            "broken-links": _by_url(lists["broken-links"]),
            "redirected-links": _by_url(lists["redirected-links"]),
            "soft-404": self.soft_404s(),
            "duplicates": _duplicates(records, self.dropped),
            "canonical-problems": _by_url(lists["canonical-problems"]),
            "titles": _by_url(lists["missing-titles"]) + _by_url(lists["empty-titles"]) + [
                {"title": title, "problem": "duplicate-title", "urls": sorted(urls)}
                for title, urls in sorted(records.groups("html_title"))],  # type: ignore[arg-type]
            "noindex-linked": _by_url(lists["noindex-linked"]),
            "missing-descriptions": _by_url(lists["missing-descriptions"]),
            "duplicate-descriptions": [
                {"description": description, "urls": sorted(urls)}  # type: ignore[arg-type]
                for description, urls in sorted(records.groups("html_description"))],
            "missing-h1": _by_url(lists["missing-h1"]),
            "multiple-h1": _by_url(lists["multiple-h1"]),
            "structured-data-errors": _by_url(lists["structured-data-errors"]),
            "incomplete-videos": _by_url(lists["incomplete-videos"]),
            "misleading-last-modified": _by_url(lists["misleading-last-modified"]),
        }


def _home_itself(url: str) -> bool:
    """``/index.html`` or ``/docs/`` redirecting to the home page is the home page's
    own spelling, not a page gone."""
    name = url.rsplit("/", 1)[-1].split("?", 1)[0].lower()
    return name == "" or name.startswith(("index.", "default."))


def _not_checked(result: CrawlResult, rendered: bool) -> list[tuple[tuple[str, ...], str]]:
    """The findings whose check was not made, and why: a report says "not checked"
    where a count of 0 would claim the site is clean."""
    missing: list[tuple[tuple[str, ...], str]] = []
    external = tuple(name for name in EXTERNAL_FINDINGS if name != "unchecked-external-links")
    stopped = "not reached: the run was interrupted" if result.interrupted else None
    if result.external is None:
        missing.append((external, stopped or "--no-check-external"))
    elif result.external_note:  # asked, and nothing could be reached, or cut short
        missing.append((("broken-external-links", "redirected-external-links"),
                        result.external_note))
    if result.live_sitemap is None:
        missing.append((LIVE_FINDINGS, stopped or "--compare-sitemap off"))
    elif result.live_sitemap.source == "none":  # nothing to hold the crawl against
        missing.append((tuple(name for name in LIVE_FINDINGS if name != "no-sitemap"),
                        "no sitemap"))
    if not rendered:
        missing.append((RENDER_FINDINGS, "--render never"))
    if not result.state_kept:
        missing.append((("misleading-last-modified",), "no --state: nothing to compare with"))
    if not result.soft_404_probes:
        missing.append((("soft-404",), "--no-soft-404"))
    return missing


def _by_url(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: item["url"])


def _external(result: CrawlResult, where: Callable[[str], dict[str, Any]]
              ) -> dict[str, list[dict[str, Any]]]:
    """broken-external-links, redirected-external-links, unchecked-external-links (not
    asked: the phase's deadline came first, or the network rule keeps the address
    closed), expiring-certificates."""
    broken, redirected, unchecked = [], [], []
    for check in sorted(result.external or [], key=lambda check: check.url):
        if check.unchecked:
            unchecked.append({"url": check.url, "reason": check.error, **where(check.url)})
        elif check.broken:
            broken.append({"url": check.url, "status": check.status, "error": check.error,
                           **where(check.url)})
        elif check.final_url is not None:
            redirected.append({"url": check.url, "use_instead": check.final_url,
                               "hops": check.hops, "status": check.status,
                               **where(check.url)})
    expiring = [{"origin": cert.origin, "expires": cert.expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "days_left": round((cert.expires - datetime.now(UTC)).total_seconds() / 86400,
                                    1)}
                for cert in sorted(result.expiring, key=lambda cert: cert.expires)]
    return {"broken-external-links": broken, "redirected-external-links": redirected,
            "unchecked-external-links": unchecked, "expiring-certificates": expiring}


def _broken_fragments(pointing: dict[tuple[str, str], list[Any]], records: RecordStore,
                      result: CrawlResult) -> list[dict[str, Any]]:
    """Links to ``#anchor`` that the target page does not have (``--check-fragments``):
    in scope from the page as it was read (for a page that redirects, the page its
    redirects end on), elsewhere from the page fetched once."""
    elsewhere = {check.url: check.ids for check in result.external or []
                 if check.ids is not None}
    broken = []
    for (target, fragment), (count, pages) in sorted(pointing.items()):
        record, where = records.get(target), target
        if record is not None and record.redirect_to is not None:
            # in scope and moved: the anchor must be on the page the redirects end on
            _chain, where = final_target(record, records)
            record = records.get(where)
        ids = record.anchor_ids if record is not None else elsewhere.get(where)
        if ids is None or fragment in ids:
            continue  # not read (not fetched, not HTML, too large): nothing to say
        broken.append({"url": f"{target}#{fragment}", "target": target, "fragment": fragment,
                       "linked_from": count, "found_on": pages})
    return broken


def findings_by_url(found: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Which findings name each URL: what a one-row-per-URL format (CSV) carries of
    them. Items about a sitemap file rather than a URL have no row to go on."""
    named: dict[str, list[str]] = defaultdict(list)
    for name, finding in found.items():
        for item in finding["items"]:
            urls = [item.get("url"), item.get("keep"), *item.get("duplicates", ()),
                    *item.get("urls", ())]
            for url in dict.fromkeys(url for url in urls if url):
                if not named[url] or named[url][-1] != name:
                    named[url].append(name)
    return named


def _found_on(result: CrawlResult) -> Callable[[str], dict[str, Any]]:
    referrers = result.referrers

    def where(url: str) -> dict[str, Any]:
        if referrers is None:
            return {"linked_from": 0, "found_on": []}
        count, first, anchor = referrers.entry(url)
        return {"linked_from": count, "found_on": first, "anchor": anchor}
    return where


def final_target(record: PageRecord, by_url: RecordLookup) -> tuple[list[str], str]:
    """The redirect chain from ``record`` (its hops) and where it ends."""
    chain, current = [record.url], record
    while current.redirect_to is not None and len(chain) < 30:
        chain.append(current.redirect_to)
        following = by_url.get(current.redirect_to)
        if following is None or following.url in chain[:-1]:
            break
        current = following
    return chain, chain[-1]


def _duplicates(records: RecordStore, dropped: dict[str, list[str]]) -> list[dict]:
    """Each copy of a page (what to fix: redirect it, or give it rel=canonical), with the
    URL it duplicates: those the crawl listed once (the copies are rows duplicate-of the
    kept one) and those still listed (--keep-duplicates)."""
    groups = [(keep, sorted(urls, key=keeper_order)) for keep, urls in dropped.items()]
    groups += [(group[0], group[1:]) for group in duplicate_groups(records)]
    return sorted(({"url": copy, "duplicate_of": keep} for keep, copies in groups
                   for copy in copies), key=lambda item: (item["url"], item["duplicate_of"]))


def _canonical_problem(canonical: str, records: RecordStore,
                       skipped: SkippedStore) -> str | None:
    """What is wrong with the page a canonical link names, if anything."""
    target = records.get(canonical)
    if target is None:
        why = skipped.reason(canonical)
        if why is Verdict.DISALLOWED:
            return "canonical-disallowed"
        if why in (Verdict.EXTERNAL, Verdict.OTHER_HOST, Verdict.OUT_OF_SCOPE):
            return "canonical-out-of-scope"
        return None if why is None else f"canonical-not-crawled ({why.value})"
    if target.verdict in REDIRECTS:
        return "canonical-redirects"
    if target.status != 200 or target.error is not None:
        return "canonical-not-200"
    if target.noindex:
        return "canonical-noindex"
    if target.canonical is not None and target.canonical != target.url:
        return "canonical-chain"
    return None
