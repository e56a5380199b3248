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
from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter

from crawler.config import memory_limit
from crawler.store.spill import sort_key, temp_database

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
        found = self._in_memory(url)
        if self._db is not None:
            if not self._indexed:
                self._db.execute("CREATE INDEX IF NOT EXISTS chunks_url ON chunks (url, chunk)")
                self._indexed = True
            rows = self._db.execute("SELECT url, count, pages, anchor FROM chunks "
                                    "WHERE url = ? ORDER BY chunk", (sort_key(url),)).fetchall()
            if rows:
                found = _then(_combined(rows), found)
        self._last = (url, found)
        return found

    def in_url_order(self) -> Iterator[tuple[str, Entry]]:
        """Every linked URL with its entry, sorted by URL: what a report walking its
        rows in URL order reads alongside them, instead of one query per row."""
        memory = sorted(self._pages)
        if self._db is None:
            stored: Iterator[tuple[str, Entry]] = iter(())
        else:
            rows = self._db.execute("SELECT url, count, pages, anchor FROM chunks "
                                    "ORDER BY url, chunk")
            stored = ((key.decode("utf-8", "surrogatepass"), _combined(list(chunks)))
                      for key, chunks in groupby(rows, key=itemgetter(0)))
        on_disk = next(stored, None)
        for url in memory:
            while on_disk is not None and on_disk[0] < url:
                yield on_disk
                on_disk = next(stored, None)
            found = self._in_memory(url)
            if on_disk is not None and on_disk[0] == url:
                found = _then(on_disk[1], found)
                on_disk = next(stored, None)
            yield url, found
        while on_disk is not None:
            yield on_disk
            on_disk = next(stored, None)

    def _in_memory(self, url: str) -> Entry:
        """What the links met since the last chunk say of ``url``."""
        memory = self._pages.get(url)
        if memory is None:
            return 0, [], None
        return memory[0], memory[1:], self._anchors.get(url)

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


def _combined(rows: list[tuple[bytes, int, bytes, str | None]]) -> Entry:
    """One URL's chunks (url, count, pages, anchor), in chunk order, as one entry."""
    pages: list[int] = []
    for _url, _count, packed, _anchor in rows:
        if len(pages) < FOUND_ON:
            pages.extend(array("q", packed))
    return sum(row[1] for row in rows), pages[:FOUND_ON], rows[0][3]


def _then(earlier: Entry, later: Entry) -> Entry:
    """Two entries of one URL, the earlier's links met first, as one: counts add up,
    the first pages are the earlier's then the later's, the anchor is the first link's."""
    return earlier[0] + later[0], (earlier[1] + later[1])[:FOUND_ON], earlier[2]
