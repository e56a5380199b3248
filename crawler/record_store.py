"""The crawl's page records, kept on disk once there are many of them.

A record costs about 0.4 KB in memory, so a list of them is what made peak
memory grow with the site (400 MB more at a million pages). The writer needs
them only at the end, in URL order, and the crawl never reads them back; so
past :data:`RECORDS_IN_MEMORY` they move to a temporary SQLite file, which
sorts them for the writer without holding them. The file is unlinked as soon
as it is opened: a killed run leaves nothing behind.

Small crawls never touch the disk. The environment variable
``SITEMAP_CRAWLER_RECORDS_IN_MEMORY`` sets the threshold (the tests set 0, so
that every end-to-end crawl can run spilled and be compared with one that did
not).
"""

from __future__ import annotations

import os
import pickle
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import fields

from crawler.config import memory_limit
from crawler.records import PageRecord, Verdict

RECORDS_IN_MEMORY = 50_000
_FIELDS = tuple(field.name for field in fields(PageRecord))
_WRITE_BATCH = 1_000


def _key(url: str) -> bytes:
    # UTF-8 bytes sort as code points do (surrogate escapes included), so SQLite's
    # ORDER BY gives what Python's sorted() gives on the strings.
    return url.encode("utf-8", "surrogatepass")


def _pack(record: PageRecord) -> bytes:
    return pickle.dumps(tuple(getattr(record, name) for name in _FIELDS), protocol=5)


def _unpack(data: bytes) -> PageRecord:
    return PageRecord(*pickle.loads(data))


class RecordStore:
    """An append-only sequence of records: a list until ``keep``, then a file.

    Records are final when appended: a change made to one afterwards is kept
    only while the store is in memory, so the engine spills only crawls whose
    records nothing edits later (no report, no ``--drop-duplicates``).
    """

    def __init__(self, keep: int | None = None) -> None:
        self._keep = (memory_limit("RECORDS_IN_MEMORY", RECORDS_IN_MEMORY) if keep is None
                      else keep)
        self._memory: list[PageRecord] = []
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[int, bytes, int, bytes]] = []
        self._count = 0
        self._indexed = False
        self._listed_urls: set[str] | None = None

    @property
    def spilled(self) -> bool:
        return self._db is not None

    def __len__(self) -> int:
        return self._count

    def append(self, record: PageRecord) -> None:
        if self._db is None and len(self._memory) < self._keep:
            self._memory.append(record)
        else:
            if self._db is None:
                self._spill()
            self._pending.append((self._count, _key(record.url),
                                  record.verdict is Verdict.LISTED, _pack(record)))
            if len(self._pending) >= _WRITE_BATCH:
                self._flush()
        self._count += 1

    def _spill(self) -> None:
        handle, path = tempfile.mkstemp(prefix="sitemap-crawler-records-", suffix=".db")
        os.close(handle)
        try:
            db = sqlite3.connect(path)
        finally:
            os.unlink(path)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("CREATE TABLE records (i INTEGER PRIMARY KEY, url BLOB, listed INTEGER, "
                   "data BLOB)")
        self._db = db
        self._pending = [(i, _key(record.url), record.verdict is Verdict.LISTED,
                          _pack(record)) for i, record in enumerate(self._memory)]
        self._memory = []
        self._flush()

    def _flush(self) -> None:
        if self._pending and self._db is not None:
            self._db.executemany("INSERT INTO records VALUES (?, ?, ?, ?)", self._pending)
            self._pending.clear()

    def _query(self, sql: str, params: tuple = ()) -> Iterator[tuple]:
        assert self._db is not None
        self._flush()
        if not self._indexed:
            self._db.execute("CREATE INDEX IF NOT EXISTS records_url ON records (url)")
            self._indexed = True
        # a cursor of its own: several may be read at once (the writer and is_listed)
        return self._db.cursor().execute(sql, params)

    def __iter__(self) -> Iterator[PageRecord]:
        if self._db is None:
            return iter(self._memory)
        return (_unpack(data) for (data,) in self._query("SELECT data FROM records ORDER BY i"))

    def __getitem__(self, index: int) -> PageRecord:
        if self._db is None:
            return self._memory[index]
        if index < 0:
            index += self._count
        row = next(self._query("SELECT data FROM records WHERE i = ?", (index,)), None)
        if row is None:
            raise IndexError(index)
        return _unpack(row[0])

    def listed(self) -> Iterable[PageRecord]:
        """The records the sitemap lists, sorted by URL; iterable more than once."""
        if self._db is None:
            return sorted((record for record in self._memory
                           if record.verdict is Verdict.LISTED), key=lambda r: r.url)
        return _Listed(self)

    def is_listed(self, url: str) -> bool:
        if self._db is None:
            if self._listed_urls is None:
                self._listed_urls = {record.url for record in self._memory
                                     if record.verdict is Verdict.LISTED}
            return url in self._listed_urls
        return next(self._query("SELECT 1 FROM records WHERE url = ? AND listed = 1",
                                (_key(url),)), None) is not None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class _Listed:
    """The listed records of a spilled store, read from disk in URL order each time."""

    def __init__(self, store: RecordStore) -> None:
        self._store = store

    def __iter__(self) -> Iterator[PageRecord]:
        rows = self._store._query("SELECT data FROM records WHERE listed = 1 ORDER BY url, i")
        return (_unpack(data) for (data,) in rows)
