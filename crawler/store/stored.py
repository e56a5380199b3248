"""What the state file hands back: a stored page, rows read lazily, the point an
interrupted run resumes from, and the time format the file keeps."""

from __future__ import annotations

import json
import sqlite3
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Generic, TypeVar

from crawler.core.dates import parse_http_date
from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord, SkippedUrl, Verdict
from crawler.frontier.job import Job
from crawler.page.lastmod import median_interval

# The JSON of a stored page's columns, without spaces. One encoder each: json.dumps
# with separators builds a new encoder for every call, and pages are stored one a
# fetch. (ASCII-escaped as the alternates and images were always written.)
COMPACT = json.JSONEncoder(separators=(",", ":"))
CHANGES_KEPT = 12  # the last content changes a page keeps
COMPACT_TEXT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

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
    # --links: the page's rows of the link graph (target, anchor text, rel), nofollow
    # links too, for a 304 to replay; None where the run that stored it kept none
    edges: list[tuple[str, str, str]] | None = None


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


# what pages.facts keeps of a record (schema 5; the last three since schema 6, read as
# absent from a file written before)
FACTS = ("description", "h1", "h1_count", "word_count", "extracted", "render_why", "rendered",
         "raw_links", "render_notes", "structured_types", "structured_errors",
         "published", "headline", "videos", "video_problems",
         # --check-fragments: its links into anchors, and its anchors (None: not looked)
         "fragment_links", "anchor_ids",
         "alternates_dropped",  # hreflang alternates past the cap, counted
         "template")  # the page's outline (crawler.page.page_facts)
ANCHOR_IDS = FACTS.index("anchor_ids")


def facts_json(record: PageRecord) -> str | None:
    """What the page said of itself and how it was read, for a 304 to replay."""
    values: list[object] = [getattr(record, name) for name in FACTS]
    published = FACTS.index("published")
    if record.published is not None:
        values[published] = record.published.isoformat()
    if (values[3] is None and not record.extracted and record.render_why is None
            and record.published is None and record.headline is None
            and record.videos is None and record.anchor_ids is None
            and not record.alternates_dropped):
        # neither an audit nor --extract, --render, --news, --videos, --check-fragments,
        # nor hreflang alternates past the cap
        return None
    return COMPACT_TEXT.encode(values)


def read_facts(record: PageRecord, text: str) -> None:
    values = dict(zip(FACTS, json.loads(text), strict=False))
    values["extracted"] = tuple((name, value) for name, value in values.get("extracted") or ())
    values["render_notes"] = tuple(tuple(note) for note in values.get("render_notes") or ())
    for name in ("structured_types", "structured_errors", "video_problems"):
        values[name] = tuple(values.get(name) or ())
    values["fragment_links"] = tuple(tuple(link) for link in values.get("fragment_links") or ())
    if values.get("anchor_ids") is not None:
        values["anchor_ids"] = tuple(values["anchor_ids"])
    if values.get("videos") is not None:
        values["videos"] = tuple(tuple(video) for video in values["videos"])
    if values.get("published") is not None:
        values["published"] = datetime.fromisoformat(values["published"])
    for name, value in values.items():
        setattr(record, name, value)


def has_anchor_ids(facts: str | None) -> bool:
    """Whether a stored page's facts hold its anchors (an earlier run looked for them
    with --check-fragments), so that a 304 can replay them."""
    if not facts:
        return False
    values = json.loads(facts)
    return len(values) > ANCHOR_IDS and values[ANCHOR_IDS] is not None


def resumed_record(page: StoredPage) -> PageRecord:
    """A page an interrupted run finished, as the resumed run keeps it: with its
    Last-Modified, which --compare-sitemap holds the live sitemap's lastmods to."""
    page.record.last_modified = parse_http_date(page.last_modified)
    return page.record


def moment(epoch: int | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, UTC) if epoch is not None else None


def stored_page(url: str, row: tuple,
                urls: Callable[[Iterable[int]], list[str]] | None) -> StoredPage:
    """A ``pages`` row as the page it stands for; its outlinks read back through
    ``urls`` (ids to URLs), or left unread when ``urls`` is ``None``."""
    (_id, _run, depth, status, content_type, error, verdict, etag, last_modified, lastmod,
     content_hash, hash_changed_at, canonical, redirect_to, refresh_to, noindex, nofollow,
     links_found, outlinks, alternates, images, changes, title, size, anchors, facts,
     edges) = row
    record = PageRecord(
        url=url, depth=depth, status=status, content_type=content_type,
        lastmod=moment(lastmod), error=ErrorKind(error) if error else None,
        redirect_to=redirect_to, refresh_to=refresh_to, canonical=canonical,
        noindex=bool(noindex), nofollow=bool(nofollow), links_found=links_found,
        verdict=Verdict(verdict),
        alternates=(() if alternates in (None, "[]")  # most pages: no JSON to parse
                    else tuple(tuple(pair) for pair in json.loads(alternates))),
        images=None if images is None else tuple(json.loads(images)),
        title=title, bytes=size, fingerprint=content_hash)
    if facts:
        read_facts(record, facts)
    seen_changes = tuple(json.loads(changes)) if changes else ()
    record.change_interval = median_interval(seen_changes)
    links: list[str] = []
    if outlinks and urls is not None:
        ids = array("I")
        ids.frombytes(zlib.decompress(outlinks))
        links = urls(ids)
    return StoredPage(record, etag, last_modified, content_hash, moment(hash_changed_at),
                      links=links, outlinks=outlinks, changes=seen_changes,
                      anchors=json.loads(zlib.decompress(anchors)) if anchors else {},
                      edges=None if edges is None
                      else [tuple(edge) for edge in json.loads(zlib.decompress(edges))])


def page_row(page: StoredPage, url_id: int, run: int, outlinks: bytes | None) -> tuple:
    """``page`` as the state's ``pages`` row (what :func:`stored_page` reads back),
    ``outlinks`` already packed as the state's URL ids."""
    record = page.record
    return (
        url_id, run, record.depth, record.status, record.content_type,
        record.error.value if record.error else None, record.verdict.value,
        page.etag, page.last_modified, epoch(record.lastmod), page.content_hash,
        epoch(page.hash_changed_at), record.canonical, record.redirect_to,
        record.refresh_to, int(record.noindex), int(record.nofollow), record.links_found,
        outlinks, COMPACT.encode(record.alternates) if record.alternates else "[]",
        None if record.images is None else COMPACT.encode(record.images),
        json.dumps(page.changes[-CHANGES_KEPT:]) if page.changes else None,
        record.title, record.bytes,
        packed(json.dumps(page.anchors, ensure_ascii=False).encode())
        if page.anchors else None, facts_json(record),
        None if page.edges is None
        else packed(json.dumps(page.edges, ensure_ascii=False).encode()))


def packed(data: bytes) -> bytes:
    """``data`` as a zlib stream with a 4 KiB window, which any zlib reads as it
    reads the default's. A page's outlinks are a few hundred bytes: zlib's
    default 32 KiB window and large hash cost 42 µs a call just to set up and
    clear (on a first crawl with --state, a tenth of the crawling process's time
    a page), this 6 µs, and the output is as small."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 12, 4)
    return packer.compress(data) + packer.flush()
