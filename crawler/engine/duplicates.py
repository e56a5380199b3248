"""One page at two URLs is listed once: which URL stays, and the others made rows
``duplicate-of`` it — on the records, before the sitemaps or the reports are made.

``/`` and ``/index.html`` serving the same bytes were both listed, and the audit
then flagged its own sitemap for it. Now every crawl lists one URL of each
group of pages with the same duplicate key (:func:`crawler.page.read.duplicate_key`);
``--keep-duplicates`` lists them all.
"""

from __future__ import annotations

from crawler.core.records import Verdict
from crawler.engine.result import CrawlResult
from crawler.store.record_store import RecordStore


def keeper_order(url: str) -> tuple[int, int, str]:
    """Which page of a duplicate group stays: fewest path segments, shortest, first."""
    path = url.partition("://")[2].partition("/")[2]
    return (len([segment for segment in path.split("/") if segment]), len(url), url)


def duplicate_groups(records: RecordStore) -> list[list[str]]:
    """Each group of listed pages sharing a duplicate key, the one to keep first."""
    return [sorted(urls, key=keeper_order) for _key, urls in records.groups("fingerprint")]


def drop_duplicates(result: CrawlResult) -> int:
    """List one page of each group (the :func:`keeper_order` first); the others become
    ``duplicate-of`` it. How many dropped."""
    records = RecordStore.of(result.records)
    dropped = 0
    for group in duplicate_groups(records):
        keep = group[0]
        for url in group[1:]:
            found = records.find(url)
            assert found is not None  # the group was made of these records
            index, record = found
            record.verdict, record.duplicate_of = Verdict.DUPLICATE, keep
            records.replace(index, record)
            dropped += 1
    result.stats.listed -= dropped
    return dropped
