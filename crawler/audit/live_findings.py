"""What the site's live sitemap gets wrong, held against the crawl — pure.

Search Console's complaints, before Search Console makes them: URLs a sitemap
lists that are not indexable, URLs it lists that no link reaches, indexable
pages it forgets, lastmods that cannot be true, and sitemaps that cannot be
read at all.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from crawler.audit.names import KEPT, LIVE_FINDINGS
from crawler.core.dates import CLOCK_SKEW, w3c_period
from crawler.core.records import PageRecord, Verdict
from crawler.engine.result import CrawlResult
from crawler.store.record_store import RecordStore
from crawler.store.skipped_store import SkippedStore

# What a listed URL must not be; the value is what the item adds to say where it leads.
_NOT_INDEXABLE = {
    Verdict.NOT_OK: None, Verdict.ERROR: None, Verdict.REDIRECT: "redirect_to",
    Verdict.REDIRECT_LOOP: "redirect_to", Verdict.REFRESH: "refresh_to",
    Verdict.NOINDEX: None, Verdict.CANONICALISED: "canonical",
}
# A date alone names a day somewhere on Earth: it may start 14 hours before UTC's.
_DAY_SLACK = timedelta(hours=14)


def live_findings(result: CrawlResult, records: RecordStore, skipped: SkippedStore,
                  now: datetime | None = None) -> dict[str, list[dict]]:
    """The findings of ``--compare-sitemap``; empty lists when it was not asked.
    ``records`` and ``skipped``: the crawl's, as the other findings read them."""
    live = result.live_sitemap
    if live is None:
        return {name: [] for name in LIVE_FINDINGS}
    now = now or datetime.now(UTC)
    return {
        "non-indexable-in-sitemap": _non_indexable(result, records, skipped),
        "orphans": [_orphan(url, records.get(url), skipped.reason(url), live.entries[url][1])
                    for url in live.orphans],
        "missing-from-sitemap": [{"url": record.url, "depth": record.depth}
                                 for record in records.listed()
                                 if record.url not in live.entries] if live.readable else [],
        "sitemap-lastmod": _lastmods(result, records, now),
        "no-sitemap": _no_sitemap(result),
        "sitemap-errors": _errors(result),
        "deprecated-sitemap-tags": [{"sitemap": file.url, "tags": dict(sorted(
            file.deprecated.items()))} for file in live.files if file.deprecated],
        "legacy-sitemap-namespace": [
            {"sitemap": file.url, "namespace": file.legacy_namespace,
             "write": "http://www.sitemaps.org/schemas/sitemap/0.9"}
            for file in live.files if file.legacy_namespace],
    }


def _non_indexable(result: CrawlResult, records: RecordStore,
                   skipped: SkippedStore) -> list[dict]:
    live = result.live_sitemap
    assert live is not None
    items: list[dict] = []
    for url, (_lastmod, sitemap) in live.entries.items():
        record = records.get(url)
        if record is not None and record.verdict in _NOT_INDEXABLE:
            item: dict[str, Any] = {"url": url, "problem": record.verdict.value,
                                    "status": record.status, "sitemap": sitemap}
            if record.error is not None:
                item["error"] = record.error.value
            field = _NOT_INDEXABLE[record.verdict]
            if field is not None:
                item["target"] = getattr(record, field)
            items.append(item)
        elif record is None and skipped.reason(url) is Verdict.DISALLOWED:
            items.append({"url": url, "problem": Verdict.DISALLOWED.value, "status": None,
                          "sitemap": sitemap})
    items.sort(key=lambda item: item["url"])
    items += [{"url": url, "problem": "outside-sitemap-scope", "status": None,
               "sitemap": sitemap} for url, sitemap in live.outside]
    items += [{"url": loc, "problem": "invalid-url", "status": None, "sitemap": sitemap}
              for loc, sitemap in live.invalid]
    return items


def _orphan(url: str, record: PageRecord | None, reason: Verdict | None,
            sitemap: str) -> dict[str, Any]:
    if record is None:
        return {"url": url, "status": None, "reason": reason.value if reason else None,
                "sitemap": sitemap}
    item: dict[str, Any] = {"url": url, "status": record.status,
                            "reason": record.verdict.value, "sitemap": sitemap}
    if record.error is not None:
        item["error"] = record.error.value
    return item


def _lastmods(result: CrawlResult, records: RecordStore, now: datetime) -> list[dict]:
    """The wrong lastmods, the first :data:`KEPT` by URL (a sitemap of millions of
    bad dates must not become a report of millions of items); the rest counted."""
    live = result.live_sitemap
    assert live is not None
    found = _wrong_lastmods(live.entries.items(), records, now)
    counted = _Counted(found)
    items = heapq.nsmallest(KEPT, counted, key=lambda item: item["url"])
    live.lastmods_unlisted = counted.count - len(items)
    items += [{"sitemap": file.url, "lastmod": file.same_lastmod, "entries": file.entries,
               "problem": "same-on-every-entry"}
              for file in live.files if file.same_lastmod is not None]
    return items


def _wrong_lastmods(entries: Iterable[tuple[str, tuple[str | None, str]]],
                    records: RecordStore, now: datetime) -> Iterator[dict]:
    for url, (lastmod, sitemap) in entries:
        if lastmod is None:
            continue
        period = w3c_period(lastmod)
        if period is None:
            yield {"url": url, "lastmod": lastmod, "problem": "not-w3c-datetime",
                   "sitemap": sitemap}
            continue
        start, end = period
        slack = _DAY_SLACK if end - start >= timedelta(days=1) else CLOCK_SKEW
        if start - slack > now:
            yield {"url": url, "lastmod": lastmod, "problem": "in-the-future",
                   "sitemap": sitemap}
            continue
        record = records.get(url)
        if record is not None and record.last_modified is not None \
                and end + slack <= record.last_modified:
            yield {"url": url, "lastmod": lastmod, "problem": "older-than-last-modified",
                   "last_modified": record.last_modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "sitemap": sitemap}


class _Counted:
    """Items passed through, counted."""

    def __init__(self, items: Iterable[dict]) -> None:
        self.items, self.count = items, 0

    def __iter__(self) -> Iterator[dict]:
        for item in self.items:
            self.count += 1
            yield item


def _no_sitemap(result: CrawlResult) -> list[dict]:
    """No sitemap anywhere: where the audit looked, and how to write one and name it."""
    live = result.live_sitemap
    assert live is not None
    if live.source != "none":
        return []
    start = result.start_url
    origin = start[: start.index("/", start.index("//") + 2)]
    base = start[: start.rfind("/") + 1]
    return [{"url": origin + "/robots.txt", "looked_in": origin + "/robots.txt",
             "tried": list(live.tried),
             "write_one": f"sitemap-crawler crawl {start} --out DIR",
             "robots_txt_line": f"Sitemap: {base}sitemap_index.xml"}]


def _errors(result: CrawlResult) -> list[dict]:
    live = result.live_sitemap
    assert live is not None
    items = [{"sitemap": file.url, "status": file.status, "problem": problem,
              **({"index": file.parent} if file.parent else {})}
             for file in live.files for problem in file.problems]
    first = live.files[0].url if live.files else live.asked
    for count, kept, what in ((live.invalid_count, len(live.invalid), "invalid URLs"),
                              (live.outside_count, len(live.outside), "out-of-scope URLs"),
                              (live.lastmods_unlisted + KEPT, KEPT, "wrong lastmods")):
        if count > kept:
            items.append({"sitemap": first, "status": None,
                          "problem": f"{count - kept} more {what} than the report names"})
    return items
