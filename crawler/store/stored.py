"""What the state file hands back: a stored page, rows read lazily, the point an
interrupted run resumes from, and the time format the file keeps."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Generic, TypeVar

from crawler.core.records import PageRecord, SkippedUrl
from crawler.frontier.job import Job


@dataclass(slots=True)
class StoredPage:
    """What the store remembers of one URL from an earlier fetch."""

    record: PageRecord
    etag: str | None
    last_modified: str | None
    content_hash: bytes | None
    hash_changed_at: datetime | None
    links: list[str] = field(default_factory=list)
    outlinks: bytes | None = None  # the packed ids ``links`` is decoded from
    # when the content was seen to change (epoch seconds, the last CHANGES_KEPT)
    changes: tuple[int, ...] = ()
    # outlink -> its anchor text, kept by audits so a 304 or a resumed run still
    # knows what the links said
    anchors: dict[str, str] = field(default_factory=dict)


T = TypeVar("T")


class StoredRows(Generic[T]):
    """Rows of the state file, read afresh on each iteration and never all held: an
    interrupted crawl of a million pages resumes without loading them."""

    def __init__(self, db: sqlite3.Connection, sql: str, params: tuple,
                 make: Callable[[tuple], T]) -> None:
        self._db, self._sql, self._params, self._make = db, sql, params, make

    def __iter__(self) -> Iterator[T]:
        cursor = self._db.cursor().execute(self._sql, self._params)
        return (self._make(row) for row in cursor)

    def __len__(self) -> int:
        return self._db.execute(f"SELECT count(*) FROM ({self._sql})", self._params).fetchone()[0]

    def __bool__(self) -> bool:
        return self._db.execute(f"SELECT EXISTS ({self._sql})", self._params).fetchone()[0] == 1


@dataclass(slots=True)
class ResumePoint:
    """An unfinished run: what it had done and what it still had queued."""

    records: Iterable[PageRecord]
    skipped: Iterable[SkippedUrl]
    queue: Iterable[Job]
    outside: str | None = None  # the out-of-scope sketches (crawler.frontier.outside)


def epoch(moment: datetime | None) -> int | None:
    return int(moment.timestamp()) if moment is not None else None


def moment(epoch: int | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, UTC) if epoch is not None else None
