"""Who links to each in-scope URL: a count, five of the pages and an anchor.

An audit's first question is "which pages link to this broken URL?". Keeping
every link as a pair of strings would cost more than the crawl itself, so a
URL keeps one small list: how many pages link to it, then the first five of
those pages in URL order (the URLs the records already hold, not copies);
and the anchor text of the link on the first of them, kept apart. URL order,
not the order the crawl met them in: pages are read concurrently and finish
in a different order each run, and two audits of an unchanged site must name
the same pages.

That is still an entry per linked URL, so it grows with the site. Past
:data:`REFERRERS_IN_MEMORY` URLs (``SITEMAP_CRAWLER_REFERRERS_IN_MEMORY``) the
entries are written to a temporary SQLite file as one chunk and memory starts
again empty. A URL linked from the whole site has a row in several chunks;
read back they add up to what one dict would have held: the counts sum, the
five pages are the first five of all the chunks' in URL order, and the
anchor is the one beside the first of them.
"""

from __future__ import annotations

import json
import sqlite3
from bisect import insort
from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter

from crawler.config import memory_limit
from crawler.store.spill import sort_key, temp_database

FOUND_ON = 5
REFERRERS_IN_MEMORY = 100_000
_SCHEMA = ("CREATE TABLE chunks (url BLOB, chunk INTEGER, count INTEGER, pages TEXT, "
           "anchor TEXT);")

# How a URL is linked: how many links, the first pages in URL order, the anchor on the
# first of them.
Entry = tuple[int, list[str], str | None]


class Referrers:
    def __init__(self, keep: int | None = None) -> None:
        self._keep = (memory_limit("REFERRERS_IN_MEMORY", REFERRERS_IN_MEMORY) if keep is None
                      else keep)
        self._pages: dict[str, list] = {}  # url -> [count, page URL, ...] (sorted)
        self._anchors: dict[str, str] = {}
        self._db: sqlite3.Connection | None = None
        self._chunk = 0
        self._indexed = False
        self._last: tuple[str, Entry] | None = None

    def add(self, url: str, page: str, anchor: str | None) -> None:
        """One link to ``url`` on the page at ``page``."""
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
        if among_first(entry, page, 1) and entry[1] == page:  # the first now: its anchor
            if anchor:
                self._anchors[url] = anchor
            else:
                self._anchors.pop(url, None)

    def _write_chunk(self) -> None:
        if self._db is None:
            self._db = temp_database("referrers", _SCHEMA)
        chunk, anchors = self._chunk, self._anchors
        self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", (
            (sort_key(url), chunk, entry[0], json.dumps(entry[1:]), anchors.get(url))
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


def among_first(pages: list, page: str, start: int = 0) -> bool:
    """Keep ``page`` in ``pages[start:]`` (sorted) if it is among the first
    :data:`FOUND_ON` in URL order; whether it was added (a page is named once, though
    two of its links may clean to one URL)."""
    full = len(pages) - start >= FOUND_ON
    # the usual answer first: a navigation link's URL has its five after a few pages
    if (full and page >= pages[-1]) or page in pages:
        return False
    if full:
        pages.pop()
    insort(pages, page, start)
    return True


def _combined(rows: list[tuple[bytes, int, str, str | None]]) -> Entry:
    """One URL's chunks (url, count, pages, anchor) as one entry."""
    return _merged([(count, json.loads(pages), anchor) for _url, count, pages, anchor in rows])


def _then(earlier: Entry, later: Entry) -> Entry:
    """Two entries of one URL (from disk, from memory) as one."""
    return _merged([earlier, later])


def _merged(entries: list[Entry]) -> Entry:
    """Counts add up; the five pages are the first five of all in URL order; the anchor
    is the one its entry kept beside the first of them."""
    pages = sorted({page for _count, first, _anchor in entries for page in first})[:FOUND_ON]
    anchor = next((kept for _count, first, kept in entries if first and first[0] == pages[0]),
                  None) if pages else None
    return sum(entry[0] for entry in entries), pages, anchor
