"""Who links to each in-scope URL: a count and the first five pages, in ints.

An audit's first question is "which pages link to this broken URL?". Keeping
every link as a pair of strings would cost more than the crawl itself, so a
URL keeps one small list: how many pages link to it, then the record indices
(ints) of the first five, in the order the crawl met them; and the anchor
text of the first link, kept apart.

That is still an entry per linked URL, so it grows with the site. Past
:data:`REFERRERS_IN_MEMORY` URLs (``SITEMAP_CRAWLER_REFERRERS_IN_MEMORY``) the
entries are written to a temporary SQLite file as one chunk and memory starts
again empty. A URL linked from the whole site has a row in several chunks;
read back in chunk order they add up to what one dict would have held: the
counts sum, the first five pages are the first five of the chunks in order,
and the anchor is the earliest chunk's (the first link's).
"""

from __future__ import annotations

import sqlite3
from array import array

from crawler.config import memory_limit
from crawler.spill import sort_key, temp_database

FOUND_ON = 5
REFERRERS_IN_MEMORY = 100_000
_SCHEMA = ("CREATE TABLE chunks (url BLOB, chunk INTEGER, count INTEGER, pages BLOB, "
           "anchor TEXT);")

# How a URL is linked: how many links, the first pages (record indices), the first anchor.
Entry = tuple[int, list[int], str | None]


class Referrers:
    def __init__(self, keep: int | None = None) -> None:
        self._keep = (memory_limit("REFERRERS_IN_MEMORY", REFERRERS_IN_MEMORY) if keep is None
                      else keep)
        self._pages: dict[str, list[int]] = {}  # url -> [count, page index, ...]
        self._anchors: dict[str, str] = {}
        self._db: sqlite3.Connection | None = None
        self._chunk = 0
        self._indexed = False
        self._last: tuple[str, Entry] | None = None

    def add(self, url: str, page: int, anchor: str | None) -> None:
        self._last = None
        entry = self._pages.get(url)
        if entry is None:
            if len(self._pages) >= self._keep:
                self._write_chunk()
            self._pages[url] = [1, page]
            if anchor:
                self._anchors[url] = anchor
            return
        entry[0] += 1
        if len(entry) <= FOUND_ON:
            entry.append(page)

    def _write_chunk(self) -> None:
        if self._db is None:
            self._db = temp_database("referrers", _SCHEMA)
        chunk, anchors = self._chunk, self._anchors
        self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", (
            (sort_key(url), chunk, entry[0], array("q", entry[1:]).tobytes(), anchors.get(url))
            for url, entry in self._pages.items()))
        self._pages, self._anchors = {}, {}
        self._chunk += 1
        self._last = None

    @property
    def spilled(self) -> bool:
        return self._db is not None

    def entry(self, url: str) -> Entry:
        """How ``url`` is linked: (links, first pages, first anchor)."""
        if self._last is not None and self._last[0] == url:
            return self._last[1]
        memory = self._pages.get(url)
        count, pages = (memory[0], memory[1:]) if memory else (0, [])
        anchor = self._anchors.get(url)
        if self._db is not None:
            if not self._indexed:
                self._db.execute("CREATE INDEX IF NOT EXISTS chunks_url ON chunks (url, chunk)")
                self._indexed = True
            rows = self._db.execute("SELECT count, pages, anchor FROM chunks WHERE url = ? "
                                    "ORDER BY chunk", (sort_key(url),)).fetchall()
            if rows:
                earlier: list[int] = []
                for _count, packed, _anchor in rows:
                    earlier.extend(array("q", packed))
                count += sum(row[0] for row in rows)
                pages = (earlier + pages)[:FOUND_ON]
                anchor = rows[0][2]
        found: Entry = (count, pages, anchor)
        self._last = (url, found)
        return found

    def count(self, url: str) -> int:
        return self.entry(url)[0]

    def first(self, url: str) -> list[int]:
        return self.entry(url)[1]

    def anchor(self, url: str) -> str | None:
        return self.entry(url)[2]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
