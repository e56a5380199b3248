"""The URLs a site's live sitemaps list, kept on disk past a threshold.

What a site's sitemaps claim is the site's to choose, not ours: 60 sitemaps of
50,000 URLs each held as a dict took 4.3 GB. Up to
``SITEMAP_CRAWLER_LIVE_ENTRIES_IN_MEMORY`` entries (100,000) they are a dict;
past that they move to an unlinked temporary SQLite file, looked up by URL and
read back in the order they were listed, so an audit's memory stays what its
crawl needs whatever the sitemaps list.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from crawler.config import memory_limit
from crawler.store.spill import temp_database

_SCHEMA = """
CREATE TABLE live (url TEXT PRIMARY KEY, lastmod TEXT, sitemap INTEGER NOT NULL);
"""


class LiveEntries:
    """url → (lastmod as written, the sitemap listing it), in listing order."""

    def __init__(self, keep: int | None = None) -> None:
        self._keep = memory_limit("LIVE_ENTRIES_IN_MEMORY", 100_000) if keep is None else keep
        self._memory: dict[str, tuple[str | None, str]] = {}
        self._db: sqlite3.Connection | None = None
        self._sitemaps: list[str] = []  # a sitemap's URL is stored once, by number
        self._numbers: dict[str, int] = {}
        self._count = 0

    @property
    def spilled(self) -> bool:
        return self._db is not None

    def add(self, url: str, lastmod: str | None, sitemap: str) -> bool:
        """Keep ``url``'s first listing; ``False`` if it was listed before."""
        if self._db is None:
            if url in self._memory:
                return False
            if len(self._memory) < self._keep:
                self._memory[url] = (lastmod, sitemap)
                self._count += 1
                return True
            self._spill()
        assert self._db is not None
        added = self._db.execute("INSERT OR IGNORE INTO live VALUES (?, ?, ?)",
                                 (url, lastmod, self._number(sitemap))).rowcount == 1
        self._count += added
        return added

    def _spill(self) -> None:
        self._db = temp_database("live", _SCHEMA)
        self._db.executemany("INSERT INTO live VALUES (?, ?, ?)",
                             ((url, lastmod, self._number(sitemap))
                              for url, (lastmod, sitemap) in self._memory.items()))
        self._memory = {}

    def _number(self, sitemap: str) -> int:
        number = self._numbers.get(sitemap)
        if number is None:
            number = self._numbers[sitemap] = len(self._sitemaps)
            self._sitemaps.append(sitemap)
        return number

    def __len__(self) -> int:
        return self._count

    def __contains__(self, url: object) -> bool:
        if self._db is None:
            return url in self._memory
        return self._db.execute("SELECT 1 FROM live WHERE url = ?", (url,)).fetchone() is not None

    def __getitem__(self, url: str) -> tuple[str | None, str]:
        if self._db is None:
            return self._memory[url]
        row = self._db.execute("SELECT lastmod, sitemap FROM live WHERE url = ?",
                               (url,)).fetchone()
        if row is None:
            raise KeyError(url)
        return row[0], self._sitemaps[row[1]]

    def items(self) -> Iterator[tuple[str, tuple[str | None, str]]]:
        """Every entry, in the order the sitemaps listed them."""
        if self._db is None:
            yield from self._memory.items()
            return
        for url, lastmod, number in self._db.cursor().execute(
                "SELECT url, lastmod, sitemap FROM live ORDER BY rowid"):
            yield url, (lastmod, self._sitemaps[number])

    def __iter__(self) -> Iterator[str]:
        return (url for url, _entry in self.items())
