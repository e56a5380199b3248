"""The state file's URLs as integer ids, both ways, with bounded caches.

A page row, a link and a queue entry name URLs by id; a crawl of a million pages
looks ids up millions of times, so the ones in scope are cached (up to
:data:`IDS_CACHED`), the others in a small cache of their own, and a small file
is read whole at once. A part of :class:`crawler.store.state.CrawlState`, which
owns the connection and the caches.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

FAR_IDS_CACHED = 1024
# In-scope URL ids kept in memory; past this many the cache starts again (a miss
# is one indexed SELECT), so a crawl of a million pages does not hold them all.
IDS_CACHED = 200_000
# A file of at most this many URLs (and IDS_CACHED) has them all read at once,
# both ways, about as much memory as a full IDS_CACHED: no lookup of an id or a
# URL goes to SQLite again, nor one for a URL the file does not have. Past it,
# the caches above.
ALL_IDS_UP_TO = 150_000


class UrlIds:
    """URL ids for :class:`crawler.store.state.CrawlState` (a mixin: the state makes
    the connection and the caches this reads)."""

    _db: sqlite3.Connection
    _root: str
    _names: dict[int, str] | None
    _ids: dict[str, int]
    _far_ids: dict[str, int]
    _may_orphan: bool
    # URLs given an id this batch, not yet in the table: one executemany with the
    # batch's other writes (``_flush_urls``) instead of an INSERT each, which was a
    # third of storing a first crawl's page (ten new links: 40 of 100 µs)
    _new_urls: dict[str, int]
    _next_url_id: int

    def _write(self, sql: str, params: tuple | list = ()) -> sqlite3.Cursor:
        raise NotImplementedError

    def _write_many(self, sql: str, rows: Iterable[tuple]) -> None:
        raise NotImplementedError

    def _read_all_ids(self) -> int:
        """Every URL of a small file, both ways (a re-crawl asks for each of them);
        returns the largest id the file has given out (0 for none)."""
        count, last = self._db.execute(
            "SELECT count(*), coalesce(max(id), 0) FROM urls").fetchone()
        # Ids are given here, above every id the file has had (the lock makes this
        # process its only writer), so none is ever given twice.
        self._new_urls, self._next_url_id = {}, last + 1
        if count <= min(ALL_IDS_UP_TO, IDS_CACHED):
            self._names = dict(self._db.execute("SELECT id, url FROM urls"))
            self._ids = {url: url_id for url_id, url in self._names.items()}
        return last

    def _cache(self, url: str) -> dict[str, int]:
        if self._names is not None:
            return self._ids
        if url.startswith(self._root):
            if len(self._ids) >= IDS_CACHED:
                self._ids.clear()
            return self._ids
        if len(self._far_ids) >= FAR_IDS_CACHED:
            self._far_ids.clear()
        return self._far_ids

    def _id(self, url: str) -> int:
        known = self._known_id(url)
        if known is None:
            self._may_orphan = True
            known = self._cache(url)[url] = self._new_urls[url] = self._next_url_id
            self._next_url_id += 1
            names = self._names
            if names is not None:
                names[known] = url  # type: ignore[index]
                if len(names) > min(ALL_IDS_UP_TO, IDS_CACHED):  # past it: the caches
                    self._names = None
                    self._ids.clear()
        return known

    def _urls(self, ids: Iterable[int]) -> list[str]:
        names = self._names
        if names is not None:
            return [names[url_id] for url_id in ids if url_id in names]
        wanted = list(ids)
        self._flush_urls()
        names: dict[int, str] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            names.update(self._db.execute(f"SELECT id, url FROM urls WHERE id IN ({marks})", chunk))
        for url_id, url in names.items():
            self._cache(url)[url] = url_id
        return [names[url_id] for url_id in wanted if url_id in names]

    def _known_id(self, url: str) -> int | None:
        known = self._ids.get(url)
        if known is None and self._names is not None:
            return None  # every URL of the file is in _ids
        if known is None:
            known = self._far_ids.get(url) or self._new_urls.get(url)
        if known is None:
            row = self._db.execute("SELECT id FROM urls WHERE url = ?", (url,)).fetchone()
            if row is None:
                return None
            known = self._cache(url)[url] = row[0]
        return known

    def _flush_urls(self) -> None:
        """The URLs given an id since the last flush, into the table."""
        if self._new_urls:
            self._write_many("INSERT INTO urls (id, url) VALUES (?, ?)",
                             ((url_id, url) for url, url_id in self._new_urls.items()))
            self._new_urls.clear()
