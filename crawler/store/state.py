"""The incremental-crawl store: what the last runs learnt, in one SQLite file.

Per URL it keeps the validators (ETag, Last-Modified) for conditional
requests, the content fingerprint and when it last changed (the honest
lastmod of sites that send no Last-Modified), the page's verdict facts and its
outlinks, so a ``304 Not Modified`` can stand in for the page without
re-downloading or re-parsing it. Outlinks are stored as zlib-packed arrays of
URL ids, about 100 bytes a page, so a million-page site fits.

The store is written as the crawl goes — the queue, each finished page, each
skipped URL — one transaction per batch of whole pages (WAL mode): a page,
its outlinks and the URLs it queued or skipped are committed together or not
at all, so a run killed at any instant can be continued with ``--resume``
from its last batch and ends as an uninterrupted run would. Only the
coordinator task touches it; there is no concurrent writer.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from crawler.config import memory_limit
from crawler.core.errors import StorageError
from crawler.core.records import SkippedUrl, Verdict
from crawler.frontier.job import Job
from crawler.store.state_file import (
    StateError,
    hold_lock,
    open_state,
    other_run,
    storage_failure,
)
from crawler.store.stored import (
    ResumePoint,
    StoredPage,
    StoredRows,
    has_anchor_ids,
    packed,
    page_row,
    resumed_record,
    stored_page,
)
from crawler.store.url_ids import UrlIds

_SAVE_PAGE = ("INSERT OR REPLACE INTO pages VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
BATCH_RECORDS = 500
BATCH_SECONDS = 2.0
# Page rows read ahead with the outlinks that lead to them, for the conditional
# requests soon to follow (one query for a page's new links instead of one a
# request); at most this many wait, about 4 MB.
ROWS_AHEAD = 10_000


class CrawlState(UrlIds):
    """One open state file, bound to one scope."""

    remembers = True  # earlier runs' pages can be replayed from it (crawler.store.no_state)

    def __init__(self, path: Path, scope_root: str) -> None:
        self.path = path
        self._lock = hold_lock(path)
        try:
            self._db = open_state(path, scope_root)
        except BaseException:
            os.close(self._lock)
            raise
        stored = dict(self._db.execute("SELECT key, value FROM meta"))
        self.run = int(stored.get("run", "0"))
        # "running": pages still to fetch; "crawled": all fetched, not yet published
        # (a kill while writing the sitemaps); either is continued by --resume.
        self._running = stored.get("run_state") in ("running", "crawled")
        self._root = scope_root
        # URL -> id for the scope's URLs; out-of-scope ones (a page may link 100,000)
        # get a small cache of their own, cleared when full.
        self._ids: dict[str, int] = {}
        self._far_ids: dict[str, int] = {}
        # id -> URL of every URL in the file, when it is small enough to hold them all
        # (ALL_IDS_UP_TO); then ``_ids`` holds every URL too, in scope or not.
        self._names: dict[int, str] | None = None
        # more meta to commit with each batch (the coordinator's out-of-scope sketches)
        self.extra_meta: Callable[[], dict[str, str]] | None = None
        # Page rows read for a request's validators, kept until its answer is in.
        self._rows: dict[str, tuple] = {}
        # URL ids of pages whose rows are to be read ahead, together (_read_ahead)
        self._ahead: dict[int, None] = {}
        # URL ids already handed to the crawl this run; past 200,000 (about 12 MB)
        # forgotten, and one handed again is judged again, harmlessly
        self._handed: set[int] = set()
        self._handed_kept = memory_limit("IDS_HANDED_KEPT", 200_000)
        self._pending = 0
        # Writes of a re-crawl's 304s, of finished pages and their queue rows (and of
        # new URLs, in UrlIds), as one executemany a batch, not statements each page:
        # on an all-304 re-crawl those were most of the state's cost.
        self._touched: list[tuple] = []
        self._queued: dict[int, tuple] = {}
        self._dequeued: dict[int, None] = {}
        self._skipped: list[tuple] = []
        self._saved: list[tuple] = []  # finished pages' rows
        self._last_commit = time.monotonic()
        # Whether this run may have left URLs nothing refers to (a URL added, a page
        # stored anew or forgotten): a run of 304s alone did not, and skips pruning
        # (3 % of a 304 re-crawl of s10k). A run that did not finish is pruned.
        self._may_orphan = self._running
        self._db.execute("BEGIN")
        # Every page row has an id below this: URLs added since have none until their
        # page is stored (which moves the mark past it). Asking SQLite for the row of
        # a URL found this run, before its page is stored (a first crawl's validators,
        # then its previous page), would find nothing, twice a page.
        self._new_ids_from = self._read_all_ids() + 1

    # --- runs -------------------------------------------------------------------
    def begin(self, *, resume: bool,
              settings: dict[str, object] | None = None) -> ResumePoint | None:
        """Start a run, or continue the unfinished one when ``resume`` is asked for.

        ``settings`` (:meth:`CrawlConfig.run_settings`) are kept with the run: a resume
        under others would finish another command's run, or one with other limits,
        and publish it (an audit's 50 pages as the site's sitemap), so it is refused."""
        packed = json.dumps(settings or {})
        if resume and self._running:
            stored = self._db.execute(
                "SELECT value FROM meta WHERE key = 'settings'").fetchone()
            kept = json.loads(stored[0]) if stored is not None else None
            if kept is not None and kept != json.loads(packed):
                raise StateError(other_run(self.path, kept, json.loads(packed)))
            return self._resume_point()
        self.run += 1
        self._write("DELETE FROM skipped")
        self._write("DELETE FROM queue")
        self._set(run=str(self.run), run_state="running", outside="{}", settings=packed)
        self.commit()
        return None

    def finish(self) -> None:
        """Every page is fetched: forget URLs the run no longer reached. The run is
        complete once its sitemaps are published (:func:`mark_published`)."""
        self._flush()
        if self._write("DELETE FROM pages WHERE run != ?", (self.run,)).rowcount:
            self._may_orphan = True
        self._write("DELETE FROM queue")
        if self._may_orphan:
            self._prune_urls()
        self._set(run_state="crawled")
        self.commit()

    def _prune_urls(self) -> None:
        """Forget URLs nothing of this run refers to (a page, a skipped URL, an outlink),
        or the file would grow with every URL a site ever linked."""
        self._write("CREATE TEMP TABLE IF NOT EXISTS kept (id INTEGER PRIMARY KEY)")
        self._write("DELETE FROM kept")
        self._write("INSERT OR IGNORE INTO kept SELECT url_id FROM pages")
        self._write("INSERT OR IGNORE INTO kept SELECT url_id FROM skipped")
        # Pages link the same URLs over and over (navigation): ids are de-duplicated
        # in a bounded set before SQLite sees them, one insert per distinct id.
        ids: set[int] = set()
        packed_ids = array("I")
        for (blob,) in self._db.execute("SELECT outlinks FROM pages WHERE outlinks IS NOT NULL"):
            packed_ids.frombytes(zlib.decompress(blob))
            ids.update(packed_ids)
            del packed_ids[:]
            if len(ids) >= 100_000:
                self._write_many("INSERT OR IGNORE INTO kept VALUES (?)", ((i,) for i in ids))
                ids.clear()
        self._write_many("INSERT OR IGNORE INTO kept VALUES (?)", ((i,) for i in ids))
        self._write("DELETE FROM urls WHERE id NOT IN (SELECT id FROM kept)")
        self._write("DELETE FROM kept")
        self._ids.clear()
        self._far_ids.clear()
        self._names = None

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.commit()
        self._db.close()
        os.close(self._lock)

    def _flush(self) -> None:
        """Write what :meth:`touch` and :meth:`save` held back, inside the open
        transaction, so a commit still takes a page with everything learnt from it."""
        self._flush_urls()
        if self._saved:
            self._write_many(_SAVE_PAGE, self._saved)
            self._saved.clear()
        if self._queued:
            self._write_many(
                "INSERT OR REPLACE INTO queue (url_id, depth, hops, chain) VALUES (?, ?, ?, ?)",
                self._queued.values())
            self._queued.clear()
        if self._skipped:
            self._write_many(
                "INSERT OR REPLACE INTO skipped (url_id, depth, reason) VALUES (?, ?, ?)",
                self._skipped)
            self._skipped.clear()
        if self._touched:
            self._write_many(
                "UPDATE pages SET run = ?, depth = ?, etag = ?, last_modified = ? "
                "WHERE url_id = ?", self._touched)
            self._touched.clear()
        if self._dequeued:
            self._write_many("DELETE FROM queue WHERE url_id = ?",
                             ((url_id,) for url_id in self._dequeued))
            self._dequeued.clear()

    def commit(self) -> None:
        self._flush()
        with self._writing():
            if self.extra_meta is not None:
                self._set(**self.extra_meta())
            self._db.execute("COMMIT")
            self._db.execute("BEGIN")
        self._pending = 0
        self._last_commit = time.monotonic()

    def checkpoint(self) -> None:
        """One page, and everything learnt from it, is written: commit if the batch is
        full. Called only between pages, so that a page is never committed without
        the URLs it queued or skipped — a kill at any instant loses whole pages only,
        which a resume fetches again."""
        self._pending += 1
        if (self._pending >= BATCH_RECORDS
                or time.monotonic() - self._last_commit >= BATCH_SECONDS):
            self.commit()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Every change happens in here: a write the disk refuses is a StorageError."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise self._refused(exc) from None

    def external_checks(self, newer_than: float) -> dict[str, tuple]:
        """--check-external results kept from earlier runs, checked after ``newer_than``
        (epoch seconds): (checked, status, final, hops, error, disallowed) by URL."""
        return {row[0]: row[1:] for row in self._db.execute(
            "SELECT url, checked, status, final, hops, error, disallowed FROM external "
            "WHERE checked > ?", (newer_than,))}

    def keep_external_checks(self, rows: Iterable[tuple]) -> None:
        """This run's checks, (url, checked, status, final, hops, error, disallowed)."""
        self._write_many("INSERT OR REPLACE INTO external (url, checked, status, final, "
                         "hops, error, disallowed) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self.commit()

    # _write and _write_many catch by hand, as _writing does: its generator-made
    # context cost 1.5 µs a call, four calls a page.
    def _write(self, sql: str, params: tuple | list = ()) -> sqlite3.Cursor:
        try:
            return self._db.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise self._refused(exc) from None

    def _write_many(self, sql: str, rows: Iterable[tuple]) -> None:
        try:
            self._db.executemany(sql, rows)
        except sqlite3.DatabaseError as exc:
            raise self._refused(exc) from None

    def _refused(self, exc: sqlite3.DatabaseError) -> Exception:
        """The error a refused write is raised as: the disk's (full, read-only) a
        StorageError, any other SQLite's as it was."""
        if storage_failure(exc):
            return StorageError(f"--state {self.path} cannot be written: {exc}")
        return exc

    def _set(self, **values: str) -> None:
        self._db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                             values.items())

    def _row(self, url: str) -> tuple | None:
        url_id = self._known_id(url)
        if url_id is None:
            return None
        if url_id in self._dequeued:  # a page finished in this batch: its row as written
            self._flush()
        elif url_id >= self._new_ids_from:
            return None
        return self._db.execute("SELECT * FROM pages WHERE url_id = ?", (url_id,)).fetchone()

    # --- the queue ------------------------------------------------------------------
    def enqueue(self, job: Job) -> None:
        chain = array("I", map(self._id, job.chain)).tobytes() if job.chain else None
        url_id = self._id(job.url)
        self._dequeued.pop(url_id, None)
        self._queued[url_id] = (url_id, job.depth, job.hops, chain)

    def _dequeue(self, url_id: int) -> None:
        # A URL queued and fetched within one batch never reaches the table.
        self._queued.pop(url_id, None)
        self._dequeued[url_id] = None

    def skip(self, item: SkippedUrl) -> None:
        self._skipped.append((self._id(item.url), item.depth, item.reason.value))

    # --- pages ----------------------------------------------------------------------
    def validators(self, url: str, *, images: bool = False, fragments: bool = False,
                   edges: bool = False) -> dict[str, str]:
        """Conditional-request headers for a page that answered 200 before.

        None when the stored page lacks what this run reads from pages (its
        alternates, stored since schema 3; its images, when ``images`` is asked
        for and an earlier run did not look; its anchors, likewise with
        ``fragments``; its rows of the link graph with ``edges``): a 304 could
        not stand in for it.
        The page's row is kept for :meth:`previous`, which the answer will need:
        one primary-key read per URL instead of two joins (none, when the row was
        read ahead with the outlinks that led here).
        """
        row = self._rows.get(url)
        if row is None and self._ahead and self._ids.get(url) in self._ahead:
            self._read_noted()
            row = self._rows.get(url)
        if row is None:
            row = self._row(url)
        headers: dict[str, str] = {}
        if row is None:
            return headers
        self._rows[url] = row
        if row[3] == 200 and (row[19] is None or (images and row[20] is None)
                              or (fragments and not has_anchor_ids(row[25]))
                              or (edges and row[26] is None)):
            return headers
        if row[3] == 200 and row[7]:
            headers["If-None-Match"] = row[7]
        if row[3] == 200 and row[8]:
            headers["If-Modified-Since"] = row[8]
        return headers

    def previous(self, url: str, *, with_links: bool = True) -> StoredPage | None:
        """What the store has of ``url``; outlinks are decoded only when asked for."""
        row = self._rows.pop(url, None) or self._row(url)
        return self._stored(url, row, with_links=with_links) if row else None

    def new_outlinks(self, page: StoredPage) -> list[str]:
        """The stored outlinks of ``page`` that no earlier call this run returned.

        On a re-crawl of 304s nearly every outlink was seen already; filtering
        their ids in a set spares building and re-judging some forty URL
        strings per page. Returning a link twice would be harmless, only slower.
        """
        if not page.outlinks:
            return []
        ids = array("I")
        ids.frombytes(zlib.decompress(page.outlinks))
        if self._handed.issuperset(ids):  # in C, and most pages bring no new id at all
            return []
        unseen = set(ids)
        unseen -= self._handed
        self._handed |= unseen
        if len(self._handed) > self._handed_kept:
            self._handed = set()
        fresh = [url_id for url_id in dict.fromkeys(ids) if url_id in unseen]
        self._read_ahead(fresh)
        return self._urls(fresh)

    def _read_ahead(self, ids: list[int]) -> None:
        """Note the pages about to be queued: their earlier rows are read together,
        when the first of their conditional requests is due (:meth:`validators`),
        one query for hundreds of pages instead of one a page. At most
        :data:`ROWS_AHEAD` rows are noted or waiting."""
        room = ROWS_AHEAD - len(self._rows) - len(self._ahead)
        if room > 0:
            self._ahead.update(dict.fromkeys(ids[:room]))

    def _read_noted(self) -> None:
        """The rows of the pages noted ahead, but those this run wrote already (to be
        read as written)."""
        wanted = [url_id for url_id in self._ahead if url_id not in self._dequeued]
        self._ahead.clear()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for url, *row in self._db.execute(
                    f"SELECT u.url, p.* FROM pages p JOIN urls u ON u.id = p.url_id "
                    f"WHERE p.url_id IN ({marks}) AND p.run != ?", (*chunk, self.run)):
                self._rows[url] = tuple(row)

    def all_outlinks(self, page: StoredPage) -> list[str]:
        """Every stored outlink of ``page`` (an audit counts each page's links)."""
        if not page.outlinks:
            return []
        ids = array("I")
        ids.frombytes(zlib.decompress(page.outlinks))
        return self._urls(ids)

    def save(self, page: StoredPage) -> None:
        """Store a finished page of this run and take it off the queue."""
        record = page.record
        url_id = self._id(record.url)
        self._new_ids_from = max(self._new_ids_from, url_id + 1)
        self._rows.pop(record.url, None)  # a row read ahead is this page's past now
        outlinks = None
        if page.links:
            # most links are known already: their ids straight from the dict (a call
            # through _id for each of a page's links was most of storing it)
            known, id_of = self._ids.get, self._id
            ids = array("I", [known(link) or id_of(link) for link in page.links])
            outlinks = packed(ids.tobytes())
        if not self._may_orphan:  # other outlinks than before may leave a URL unnamed
            before = self._db.execute("SELECT outlinks FROM pages WHERE url_id = ?",
                                      (url_id,)).fetchone()
            self._may_orphan = before is None or before[0] != outlinks
        self._saved.append(page_row(page, url_id, self.run, outlinks))
        self._dequeue(url_id)

    def touch(self, url: str, depth: int, etag: str | None, last_modified: str | None) -> None:
        """A 304: the stored page belongs to this run too, unchanged but for its validators."""
        url_id = self._id(url)
        self._rows.pop(url, None)
        self._touched.append((self.run, depth, etag, last_modified, url_id))
        self._dequeue(url_id)

    def _stored(self, url: str, row: tuple, *, with_links: bool = True) -> StoredPage:
        return stored_page(url, row, self._urls if with_links else None)

    def _resume_point(self) -> ResumePoint:
        self._flush()
        db = self._db
        records = StoredRows(db, "SELECT u.url, p.* FROM pages p JOIN urls u ON u.id = p.url_id "
                             "WHERE p.run = ? ORDER BY p.rowid", (self.run,),
                             lambda row: resumed_record(self._stored(
                                 row[0], tuple(row[1:]), with_links=False)))
        skipped = StoredRows(db, "SELECT u.url, s.depth, s.reason FROM skipped s "
                             "JOIN urls u ON u.id = s.url_id", (),
                             lambda row: SkippedUrl(row[0], row[1], Verdict(row[2])))
        queue = StoredRows(db, "SELECT u.url, q.depth, q.hops, q.chain FROM queue q "
                           "JOIN urls u ON u.id = q.url_id ORDER BY q.seq", (),
                           lambda row: Job(row[0], row[1], row[2], self._chain(row[3])))
        outside = db.execute("SELECT value FROM meta WHERE key = 'outside'").fetchone()
        return ResumePoint(records, skipped, queue, outside[0] if outside else None)

    def _chain(self, packed: bytes | None) -> tuple[str, ...]:
        """A queued redirect target's chain, so a loop still ends as redirect-loop."""
        if not packed:
            return ()
        ids = array("I")
        ids.frombytes(packed)
        return tuple(self._urls(ids))


# SQLite's result codes for a write the storage refused.
