"""The URLs a crawl saw and did not fetch, kept on disk once there are many.

A site that disallows half its URLs, or a crawl stopped by ``--max-pages``,
skips about as many URLs as it fetches; the report lists each with its
reason, and findings ask why a given URL was skipped. Past
:data:`SKIPPED_IN_MEMORY` (``SITEMAP_CRAWLER_SKIPPED_IN_MEMORY``) they move to a
temporary SQLite file, like the records (:mod:`crawler.store.record_store`).
"""

from __future__ import annotations

from collections.abc import Iterator

from crawler.config import memory_limit
from crawler.core.records import SkippedUrl, Verdict
from crawler.store.spill import SpillingList, sort_key

SKIPPED_IN_MEMORY = 50_000


def _item(url: bytes, depth: int, reason: str) -> SkippedUrl:
    return SkippedUrl(url.decode("utf-8", "surrogatepass"), depth, Verdict(reason))


class SkippedStore(SpillingList[SkippedUrl]):
    """An append-only sequence of skipped URLs: a list until ``keep``, then a file."""

    TABLE = "skipped"
    SCHEMA = "CREATE TABLE skipped (i INTEGER PRIMARY KEY, url BLOB, depth INTEGER, reason TEXT);"

    def __init__(self, keep: int | None = None) -> None:
        super().__init__(memory_limit("SKIPPED_IN_MEMORY", SKIPPED_IN_MEMORY) if keep is None
                         else keep)
        self._reasons: dict[str, Verdict] | None = None

    def _row(self, index: int, item: SkippedUrl) -> tuple:
        return (index, sort_key(item.url), item.depth, item.reason.value)

    def _forget(self) -> None:
        self._reasons = None

    def __iter__(self) -> Iterator[SkippedUrl]:
        if self._db is None:
            return iter(self._memory)
        return (_item(*row) for row in
                self._query("SELECT url, depth, reason FROM skipped ORDER BY i", by_url=False))

    def by_url(self) -> Iterator[SkippedUrl]:
        """Every skipped URL, sorted by URL (then in the order they were skipped)."""
        if self._db is None:
            return iter(sorted(self._memory, key=lambda item: item.url))
        return (_item(*row) for row in
                self._query("SELECT url, depth, reason FROM skipped ORDER BY url, i"))

    def reason(self, url: str) -> Verdict | None:
        """Why ``url`` was skipped (the last reason given), or ``None`` if it was not."""
        if self._db is None:
            if self._reasons is None:
                self._reasons = {item.url: item.reason for item in self._memory}
            return self._reasons.get(url)
        row = next(self._query("SELECT reason FROM skipped WHERE url = ? ORDER BY i DESC "
                               "LIMIT 1", (sort_key(url),)), None)
        return None if row is None else Verdict(row[0])
