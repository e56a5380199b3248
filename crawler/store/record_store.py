"""The crawl's page records, kept on disk once there are many of them.

A record costs about 0.4 KB in memory, so a list of them is what made peak
memory grow with the site (400 MB more at a million pages). The writer needs
them only at the end, in URL order, and the report needs them by URL and in
groups (identical content, shared titles); past :data:`RECORDS_IN_MEMORY` they
move to a temporary SQLite file (:mod:`crawler.store.spill`), which sorts, looks up
and groups them without holding them.

Small crawls never touch the disk. The environment variable
``SITEMAP_CRAWLER_RECORDS_IN_MEMORY`` sets the threshold (the tests set 0, so
that every end-to-end crawl can run spilled and be compared with one that did
not).
"""

from __future__ import annotations

import marshal
import pickle
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from typing import Literal

from crawler.config import memory_limit
from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord, Verdict
from crawler.store.spill import SpillingList, sort_key

RECORDS_IN_MEMORY = 50_000
_FIELDS = tuple(field.name for field in fields(PageRecord))
_SCHEMA = """
CREATE TABLE records (i INTEGER PRIMARY KEY, url BLOB, listed INTEGER, fingerprint BLOB,
                      html_title TEXT, html_description TEXT, declares INTEGER,
                      media INTEGER, data BLOB);
"""
# What groups listed pages in the report: identical content, or one title on many pages.
Grouping = Literal["fingerprint", "html_title", "html_description"]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _duplicate_key(record: PageRecord) -> bytes | None:
    """The "fingerprint" grouping: a page's duplicate key, or its content fingerprint
    (a page answered 304 keeps the fingerprint its state remembered); never for a page
    without a link (crawler.page.read.duplicate_key)."""
    if record.duplicate_key is not None:
        return record.duplicate_key
    return record.fingerprint if record.links_found else None
_MICROSECOND = timedelta(microseconds=1)
_DATES = tuple(i for i, name in enumerate(_FIELDS) if name in ("lastmod", "last_modified",
                                                                "published"))
_ERROR, _VERDICT = _FIELDS.index("error"), _FIELDS.index("verdict")
_MARSHALLED, _PICKLED = b"m", b"p"
_VERDICTS = {verdict.value: verdict for verdict in Verdict}  # 10x faster than Verdict(v)
_ERRORS = {kind.value: kind for kind in ErrorKind}


def _pack(record: PageRecord) -> bytes:
    """A record as bytes. Reports read every record back more than once, and
    pickle spends 11 µs a record finding the classes of its dates and verdicts;
    so the fields go through marshal, with enums as their values and UTC dates
    as microseconds (3 µs). A record with anything else is pickled."""
    values = [getattr(record, name) for name in _FIELDS]
    for index in _DATES:
        moment = values[index]
        if moment is not None:
            if moment.tzinfo is not UTC:
                return _PICKLED + pickle.dumps(tuple(values), protocol=5)
            values[index] = (moment - _EPOCH) // _MICROSECOND
    if values[_ERROR] is not None:
        values[_ERROR] = values[_ERROR].value
    values[_VERDICT] = values[_VERDICT].value
    try:
        return _MARSHALLED + marshal.dumps(tuple(values))
    except ValueError:  # a value marshal does not know
        return _PICKLED + pickle.dumps(tuple(getattr(record, name) for name in _FIELDS),
                                       protocol=5)


def _unpack(data: bytes) -> PageRecord:
    if data[:1] == _PICKLED:
        return PageRecord(*pickle.loads(data[1:]))
    values = list(marshal.loads(data[1:]))
    for index in _DATES:
        if values[index] is not None:
            values[index] = _EPOCH + values[index] * _MICROSECOND
    if values[_ERROR] is not None:
        values[_ERROR] = _ERRORS[values[_ERROR]]
    values[_VERDICT] = _VERDICTS[values[_VERDICT]]
    return PageRecord(*values)


def _html_title(record: PageRecord) -> str | None:
    """The title a duplicate-title finding compares: a listed HTML page's, if any."""
    if (record.verdict is Verdict.LISTED and record.title and record.content_type
            and "html" in record.content_type):
        return record.title
    return None


def _html_description(record: PageRecord) -> str | None:
    """The meta description a duplicate-descriptions finding compares, like the title."""
    if (record.verdict is Verdict.LISTED and record.description and record.content_type
            and "html" in record.content_type):
        return record.description
    return None


def _row(index: int, record: PageRecord) -> tuple:
    listed = record.verdict is Verdict.LISTED
    return (index, sort_key(record.url), listed, _duplicate_key(record) if listed else None,
            _html_title(record), _html_description(record), listed and bool(record.alternates),
            listed and bool(record.images or record.videos), _pack(record))


class RecordStore(SpillingList[PageRecord]):
    """An append-only sequence of records: a list until ``keep``, then a file.

    A record changed after it was appended must be handed back with
    :meth:`replace`: on disk, the stored copy is what counts.
    """

    TABLE = "records"
    SCHEMA = _SCHEMA

    def __init__(self, keep: int | None = None) -> None:
        super().__init__(memory_limit("RECORDS_IN_MEMORY", RECORDS_IN_MEMORY) if keep is None
                         else keep)
        self._listed_urls: set[str] | None = None
        self._by_url: dict[str, int] | None = None

    def _row(self, index: int, item: PageRecord) -> tuple:
        return _row(index, item)

    def _forget(self) -> None:
        self._listed_urls = self._by_url = None

    def replace(self, index: int, record: PageRecord) -> None:
        """Keep ``record`` as the record at ``index`` (an edit made after the crawl)."""
        if self._db is None:
            self._memory[index] = record
            # --drop-duplicates edits one record after another and looks each up by
            # URL: the URL lookup survives an edit that keeps the record's URL (as
            # rebuilding it per edit made that quadratic)
            if self._by_url is not None and self._by_url.get(record.url) != index:
                self._by_url = None
            self._listed_urls = None
            return
        self._flush()
        self._db.execute("UPDATE records SET url = ?, listed = ?, fingerprint = ?, "
                         "html_title = ?, html_description = ?, declares = ?, media = ?, "
                         "data = ? "
                         "WHERE i = ?",
                         (*_row(index, record)[1:], index))

    def __iter__(self) -> Iterator[PageRecord]:
        if self._db is None:
            return iter(self._memory)
        return (_unpack(data) for (data,) in self._query("SELECT data FROM records ORDER BY i",
                                                                  by_url=False))

    def __getitem__(self, index: int) -> PageRecord:
        if self._db is None:
            return self._memory[index]
        if index < 0:
            index += self._count
        row = next(self._query("SELECT data FROM records WHERE i = ?", (index,), by_url=False),
                   None)
        if row is None:
            raise IndexError(index)
        return _unpack(row[0])

    def find(self, url: str) -> tuple[int, PageRecord] | None:
        """The index and record of ``url`` (the last, should it have been fetched twice)."""
        if self._db is None:
            if self._by_url is None:
                self._by_url = {record.url: i for i, record in enumerate(self._memory)}
            index = self._by_url.get(url)
            return None if index is None else (index, self._memory[index])
        row = next(self._query("SELECT i, data FROM records WHERE url = ? ORDER BY i DESC "
                               "LIMIT 1", (sort_key(url),)), None)
        return None if row is None else (row[0], _unpack(row[1]))

    def get(self, url: str) -> PageRecord | None:
        """The record of ``url`` (the last, should it have been fetched twice)."""
        found = self.find(url)
        return None if found is None else found[1]

    def by_url(self) -> Iterator[tuple[int, PageRecord]]:
        """Every record with its index, sorted by URL (then by index)."""
        if self._db is None:
            memory = self._memory
            order = sorted(range(len(memory)), key=lambda i: memory[i].url)
            return ((i, memory[i]) for i in order)
        return ((i, _unpack(data)) for i, data in
                self._query("SELECT i, data FROM records ORDER BY url, i"))

    def listed(self) -> Iterable[PageRecord]:
        """The records the sitemap lists, sorted by URL; iterable more than once."""
        if self._db is None:
            return sorted((record for record in self._memory
                           if record.verdict is Verdict.LISTED), key=lambda r: r.url)
        return _Listed(self)

    def listed_unordered(self) -> Iterable[PageRecord]:
        """The listed records in the order they were kept, for a reader to whom order
        does not matter (counting them): on disk, a read straight through the file
        instead of one that jumps about it in URL order."""
        if self._db is None:
            return [record for record in self._memory if record.verdict is Verdict.LISTED]
        return _Rows(self, "SELECT data FROM records WHERE listed = 1 ORDER BY i")

    def declaring_alternates(self) -> Iterable[PageRecord]:
        """The listed records that declare language versions (hreflang), in the order
        kept: on disk, read without unpacking the others."""
        if self._db is None:
            return [record for record in self._memory
                    if record.verdict is Verdict.LISTED and record.alternates]
        return _Rows(self, "SELECT data FROM records WHERE declares = 1 ORDER BY i")

    def carrying_media(self) -> Iterable[PageRecord]:
        """The listed records with images or videos, in the order kept: what decides
        the namespaces a sitemap declares, without reading every record."""
        if self._db is None:
            return [record for record in self._memory
                    if record.verdict is Verdict.LISTED and (record.images or record.videos)]
        return _Rows(self, "SELECT data FROM records WHERE media = 1 ORDER BY i")

    def is_listed(self, url: str) -> bool:
        if self._db is None:
            if self._listed_urls is None:
                self._listed_urls = {record.url for record in self._memory
                                     if record.verdict is Verdict.LISTED}
            return url in self._listed_urls
        return next(self._query("SELECT 1 FROM records WHERE url = ? AND listed = 1",
                                (sort_key(url),)), None) is not None

    def groups(self, by: Grouping) -> list[tuple[object, list[str]]]:
        """Listed pages that share a fingerprint (``"fingerprint"``) or, among HTML pages,
        a non-empty title (``"html_title"``): (the shared value, its URLs in crawl
        order) for each group of two or more, in no particular order. Only the groups
        are held, never every page's key."""
        assert by in ("fingerprint", "html_title", "html_description"), by  # put into SQL
        if self._db is None:
            keyed: dict[object, list[str]] = defaultdict(list)
            for record in self._memory:
                key = (_html_title(record) if by == "html_title" else
                       _html_description(record) if by == "html_description" else
                       _duplicate_key(record) if record.verdict is Verdict.LISTED else None)
                if key is not None:
                    keyed[key].append(record.url)
            return [(key, urls) for key, urls in keyed.items() if len(urls) > 1]
        rows = self._query(
            f"SELECT {by}, url FROM records WHERE {by} IN (SELECT {by} FROM records "
            f"WHERE {by} IS NOT NULL GROUP BY {by} HAVING count(*) > 1) ORDER BY {by}, i")
        found: list[tuple[object, list[str]]] = []
        for key, url in rows:
            if not found or key != found[-1][0]:
                found.append((key, []))
            found[-1][1].append(url.decode("utf-8", "surrogatepass"))
        return found


class _Rows:
    """Records of a spilled store, read from disk by one query each time."""

    def __init__(self, store: RecordStore, sql: str) -> None:
        self._store = store
        self._sql = sql

    def __iter__(self) -> Iterator[PageRecord]:
        return (_unpack(data) for (data,) in self._store._query(self._sql, by_url=False))


class _Listed(_Rows):
    """The listed records of a spilled store in URL order, sorted as they are read.

    Read through the URL index, each record is a jump to another place in the
    file: SQLite's page cache is 2 MB, so a pass over 100,000 records made
    about 100,000 reads of the operating system. Sorting as it reads (a merge
    sort in bounded memory, spilling to temporary files past it) reads the
    file front to back once, and needs no index made first.
    """

    def __init__(self, store: RecordStore) -> None:
        super().__init__(store, "SELECT data FROM records NOT INDEXED WHERE listed = 1 "
                                "ORDER BY url, i")
