"""The sitemap a run replaces, as (loc, lastmod): what search engines were last told,
held against what this run lists to say what was added, changed and removed
(``--indexnow``, ``--changes`` and the run's history).

Read from ``--out`` before the new sitemaps replace it, whatever happened to the
state in between. A first run (no sitemap there) reads nothing, and loads no
XML reader and opens no table: most of a cron job's runs are not first ones, but
every plain ``--state`` crawl of a new site is.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sitemap_writer import INDEX_NAME, SitemapEntry, is_url_shard


@dataclass(slots=True)
class Changes:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def urls(self) -> Iterator[str]:
        yield from self.added
        yield from self.changed
        yield from self.removed

    def __len__(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed)


class PreviousSitemap:
    """The (loc, lastmod) of the sitemap in ``out`` before this run replaces it: in a
    dict up to :data:`IN_MEMORY` URLs (a lookup a URL in SQLite cost a 10,000-page
    re-crawl 5 % of its CPU), in a temporary SQLite table past them."""

    IN_MEMORY = 200_000

    def __init__(self, out_dir: Path) -> None:
        self.exists = (out_dir / INDEX_NAME).is_file()
        self._file: str | None = None  # the table's, made only past IN_MEMORY
        self._db: sqlite3.Connection | None = None
        self._memory: dict[str, str | None] | None = {}
        if self.exists:
            self._read(out_dir)

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            handle, self._file = tempfile.mkstemp(suffix=".db")
            os.close(handle)
            self._db = sqlite3.connect(self._file)
            self._db.execute(
                "CREATE TABLE old (loc TEXT PRIMARY KEY, lastmod TEXT, seen INTEGER)")
        return self._db

    def _read(self, out_dir: Path) -> None:
        from sitemap_writer import read_sitemap  # XML is read only where a sitemap was

        index = read_sitemap((out_dir / INDEX_NAME).read_bytes())
        for loc, _lastmod in index.entries:
            name = loc.rpartition("/")[2]
            if not is_url_shard(name):  # any section's shards, not the News sitemap
                continue
            with contextlib.suppress(OSError):
                shard = read_sitemap((out_dir / name).read_bytes())
                self._keep(shard.entries)
        if self._db is not None:
            self._db.commit()

    def _keep(self, entries: list[tuple[str, str | None]]) -> None:
        memory = self._memory
        if memory is not None and len(memory) + len(entries) <= self.IN_MEMORY:
            memory.update(entries)
            return
        if memory:
            entries = [*memory.items(), *entries]
        self._memory = None
        self.db.executemany("INSERT OR REPLACE INTO old VALUES (?, ?, 0)", entries)

    def changes(self, entries: Iterable[SitemapEntry]) -> Changes:
        if self._memory is not None:
            return _changes_in_memory(self._memory, entries)
        found = Changes()
        lookup = self.db.execute
        for entry in entries:
            row = lookup("SELECT lastmod FROM old WHERE loc = ?", (entry.loc,)).fetchone()
            if row is None:
                found.added.append(entry.loc)
                continue
            lookup("UPDATE old SET seen = 1 WHERE loc = ?", (entry.loc,))
            new = _w3c(entry)
            if row[0] is not None and new is not None and row[0] != new:
                found.changed.append(entry.loc)
        found.removed = [loc for (loc,) in lookup("SELECT loc FROM old WHERE seen = 0 "
                                                  "ORDER BY loc")]
        return found

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
        if self._file is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._file)


def _changes_in_memory(old: dict[str, str | None], entries: Iterable[SitemapEntry]
                       ) -> Changes:
    found = Changes()
    seen: set[str] = set()
    for entry in entries:
        if entry.loc not in old:
            found.added.append(entry.loc)
            continue
        seen.add(entry.loc)
        was, new = old[entry.loc], _w3c(entry)
        if was is not None and new is not None and was != new:
            found.changed.append(entry.loc)
    found.removed = sorted(loc for loc in old if loc not in seen)
    return found


def _w3c(entry: SitemapEntry) -> str | None:
    moment = entry.lastmod_utc
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else None
