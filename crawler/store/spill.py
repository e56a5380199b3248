"""Temporary SQLite files for what a crawl keeps until its end.

Records, skipped URLs and who links where are needed only once the crawl is
over (the sitemap, the report); holding them as Python objects is what made
memory grow with the site. Past a threshold each moves to a file of its own,
unlinked as soon as it is opened, so a killed run leaves nothing behind and
the operating system reclaims the space when the process ends.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Generic, Self, TypeVar

if TYPE_CHECKING:
    import sqlite3

T = TypeVar("T")


def temp_database(kind: str, schema: str) -> sqlite3.Connection:
    """An unlinked SQLite file, written without a journal: nothing in it outlives
    the process, so nothing needs to survive a crash.

    SQLite is imported here, by the first crawl that spills: most never do."""
    import sqlite3
    import tempfile

    handle, path = tempfile.mkstemp(prefix=f"sitemap-crawler-{kind}-", suffix=".db")
    os.close(handle)
    try:
        db = sqlite3.connect(path)
    finally:
        os.unlink(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.executescript(schema)
    return db


def sort_key(url: str) -> bytes:
    """A URL as SQLite sorts it: UTF-8 bytes order as code points do (surrogate
    escapes included), so ORDER BY gives what Python's sorted() gives on strings."""
    return url.encode("utf-8", "surrogatepass")


class SpillingList(Generic[T]):
    """An append-only sequence: a list until ``keep`` items, then a temporary file.

    Subclasses name the table (:attr:`TABLE`, whose first two columns are the
    index ``i`` and the ``url`` sort key), turn an item into its row
    (:meth:`_row`), and drop what they derived from the in-memory list
    (:meth:`_forget`).
    """

    TABLE = ""
    SCHEMA = ""
    _WRITE_BATCH = 1_000
    # Past ``keep``, the items kept in memory move to the file this many with each
    # new one: moved all at once, 50,000 records stalled a crawl for half a second
    # while no page was fetched or read. A read finishes the move first.
    MOVE_PER_APPEND = 8

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._memory: list[T] = []
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[int, T]] = []  # (index, item), their rows made when written
        self._count = 0
        self._indexed = False
        self._moved = 0  # once spilled: the items of _memory already in _pending or the file

    @classmethod
    def of(cls, items: Iterable[T]) -> Self:
        """The items given (a list, from a test or a caller of the library) as this
        store, kept in memory whatever their number."""
        if isinstance(items, cls):
            return items
        store = cls(keep=sys.maxsize)
        store._memory = items if isinstance(items, list) else list(items)
        store._count = len(store._memory)
        return store

    @property
    def spilled(self) -> bool:
        return self._db is not None

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def append(self, item: T) -> None:
        if self._db is None and len(self._memory) < self._keep:
            self._memory.append(item)
            self._forget()
        else:
            if self._db is None:
                self._db = temp_database(self.TABLE, self.SCHEMA)
                self._forget()
            self._pending.append((self._count, item))
            if self._memory:
                self._move(self.MOVE_PER_APPEND)
            if len(self._pending) >= self._WRITE_BATCH:
                self._write_pending()
        self._count += 1

    def _move(self, most: int) -> None:
        """Up to ``most`` more of the items kept in memory to those to write (an
        item's index is its place in the list: the list holds the first ones)."""
        memory, start = self._memory, self._moved
        end = min(len(memory), start + most)
        self._pending.extend(enumerate(memory[start:end], start))
        if end == len(memory):
            self._memory, self._moved = [], 0
        else:
            self._moved = end

    def _row(self, index: int, item: T) -> tuple:
        raise NotImplementedError

    def _forget(self) -> None:
        """The in-memory list changed: drop any lookup built from it."""

    def _flush(self) -> None:
        """Everything appended into the file: what a read of the file needs first."""
        if self._memory and self._db is not None:
            self._move(len(self._memory))
        self._write_pending()

    def _write_pending(self) -> None:
        """Write the items waiting, their rows made here, a batch at a time: made one
        at each append, between a crawl's other work, a record's row cost 12.5 µs of
        the crawling process on s100k; made together, 5."""
        if self._pending and self._db is not None:
            row = self._row
            rows = [row(index, item) for index, item in self._pending]
            marks = ", ".join("?" * len(rows[0]))
            self._db.executemany(f"INSERT INTO {self.TABLE} VALUES ({marks})", rows)
            self._pending.clear()

    def _query(self, sql: str, params: tuple = (), *, by_url: bool = True) -> Iterator[tuple]:
        """Rows of the file, everything appended included; the URL index is made on the
        first read that looks up or orders ``by_url`` (an index kept up while appending
        would slow the crawl; one made for a read that does not use it is a sort of
        the whole file for nothing)."""
        assert self._db is not None
        self._flush()
        if by_url and not self._indexed:
            self._db.execute(
                f"CREATE INDEX IF NOT EXISTS {self.TABLE}_url ON {self.TABLE} (url)")
            self._indexed = True
        # a cursor of its own: several may be read at once (the writer and a lookup)
        return self._db.cursor().execute(sql, params)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
