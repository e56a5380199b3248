"""What an audit tells a site owner to fix, computed from one crawl's records — pure.

Each finding has a name (what ``--fail-on`` takes), a count and its items;
every item names the URLs involved and, where links are the cause, the pages
that carry them ("found on"), so the report answers "where do I fix it?".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from crawler.live_findings import LIVE_FINDINGS, live_findings
from crawler.records import CrawlResult, PageRecord, Verdict

FINDINGS = ("broken-links", "redirected-links", "duplicates", "canonical-problems", "titles",
            "noindex-linked", *LIVE_FINDINGS)
REDIRECTS = (Verdict.REDIRECT, Verdict.REDIRECT_LOOP)


def findings(result: CrawlResult) -> dict[str, dict[str, Any]]:
    """Every finding, each as ``{"count": n, "items": [...]}``, in a fixed order."""
    by_url = {record.url: record for record in result.records}
    found_on = _found_on(result)
    computed = {
        "broken-links": _broken(result, found_on),
        "redirected-links": _redirected(result, by_url, found_on),
        "duplicates": _duplicates(result),
        "canonical-problems": _canonicals(result, by_url),
        "titles": _titles(result),
        "noindex-linked": _noindex_linked(result, found_on),
        **live_findings(result, by_url),
    }
    return {name: {"count": len(items), "items": items} for name, items in computed.items()}


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
    records = result.records

    def where(url: str) -> dict[str, Any]:
        if referrers is None:
            return {"linked_from": 0, "found_on": []}
        return {"linked_from": referrers.count(url),
                "found_on": [records[index].url for index in referrers.first(url)],
                "anchor": referrers.anchor(url)}
    return where


def _linked(result: CrawlResult, url: str) -> bool:
    return result.referrers is not None and result.referrers.count(url) > 0


def _broken(result: CrawlResult, where: Callable[[str], dict[str, Any]]) -> list[dict]:
    return [{"url": record.url, "status": record.status,
             "error": record.error.value if record.error else None, **where(record.url)}
            for record in result.records
            if (record.error is not None or (record.status or 0) >= 400)
            and _linked(result, record.url)]


def final_target(record: PageRecord, by_url: dict[str, PageRecord]) -> tuple[list[str], str]:
    """The redirect chain from ``record`` (its hops) and where it ends."""
    chain, current = [record.url], record
    while current.redirect_to is not None and len(chain) < 30:
        chain.append(current.redirect_to)
        following = by_url.get(current.redirect_to)
        if following is None or following.url in chain[:-1]:
            break
        current = following
    return chain, chain[-1]


def _redirected(result: CrawlResult, by_url: dict[str, PageRecord],
                where: Callable[[str], dict[str, Any]]) -> list[dict]:
    items = []
    for record in result.records:
        if record.verdict in REDIRECTS and _linked(result, record.url):
            chain, final = final_target(record, by_url)
            items.append({"url": record.url, "use_instead": final, "hops": len(chain) - 1,
                          "chain": chain, **where(record.url)})
    return items


def keeper_order(url: str) -> tuple[int, int, str]:
    """Which page of a duplicate group stays: fewest path segments, shortest, first."""
    path = url.partition("://")[2].partition("/")[2]
    return (len([segment for segment in path.split("/") if segment]), len(url), url)


def _duplicates(result: CrawlResult) -> list[dict]:
    groups: dict[bytes, list[str]] = defaultdict(list)
    for record in result.records:
        if record.verdict is Verdict.LISTED and record.fingerprint is not None:
            groups[record.fingerprint].append(record.url)
    items = []
    for urls in groups.values():
        if len(urls) > 1:
            ordered = sorted(urls, key=keeper_order)
            items.append({"keep": ordered[0], "duplicates": ordered[1:]})
    return sorted(items, key=lambda item: item["keep"])


def _canonicals(result: CrawlResult, by_url: dict[str, PageRecord]) -> list[dict]:
    skipped = {item.url: item.reason for item in result.skipped}
    items = []
    for record in result.records:
        canonical = record.canonical
        if canonical is None or canonical == record.url:
            continue
        target = by_url.get(canonical)
        reason: str | None = None
        if target is None:
            why = skipped.get(canonical)
            if why is Verdict.DISALLOWED:
                reason = "canonical-disallowed"
            elif why in (Verdict.EXTERNAL, Verdict.OTHER_HOST, Verdict.OUT_OF_SCOPE):
                reason = "canonical-out-of-scope"
            elif why is not None:
                reason = f"canonical-not-crawled ({why.value})"
        elif target.verdict in REDIRECTS:
            reason = "canonical-redirects"
        elif target.status != 200 or target.error is not None:
            reason = "canonical-not-200"
        elif target.noindex:
            reason = "canonical-noindex"
        elif target.canonical is not None and target.canonical != target.url:
            reason = "canonical-chain"
        if reason is not None:
            items.append({"url": record.url, "canonical": canonical, "problem": reason})
    return items


def _titles(result: CrawlResult) -> list[dict]:
    listed = [record for record in result.records if record.verdict is Verdict.LISTED
              and record.content_type and "html" in record.content_type]
    items: list[dict] = [{"url": record.url, "problem": "missing-title"}
                         for record in listed if record.title is None]
    items += [{"url": record.url, "problem": "empty-title"}
              for record in listed if record.title == ""]
    by_title: dict[str, list[str]] = defaultdict(list)
    for record in listed:
        if record.title:
            by_title[record.title].append(record.url)
    items += [{"title": title, "problem": "duplicate-title", "urls": sorted(urls)}
              for title, urls in sorted(by_title.items()) if len(urls) > 1]
    return items


def _noindex_linked(result: CrawlResult, where: Callable[[str], dict[str, Any]]) -> list[dict]:
    return [{"url": record.url, **where(record.url)} for record in result.records
            if record.verdict is Verdict.NOINDEX and _linked(result, record.url)]


def drop_duplicates(result: CrawlResult) -> int:
    """``--drop-duplicates``: list one page of each group of identical listed pages (the
    :func:`keeper_order` first); the others become ``duplicate-of`` it. How many dropped."""
    by_url = {record.url: record for record in result.records}
    dropped = 0
    for group in _duplicates(result):
        for url in group["duplicates"]:
            record = by_url[url]
            record.verdict, record.duplicate_of = Verdict.DUPLICATE, group["keep"]
            dropped += 1
    result.stats.listed -= dropped
    return dropped
