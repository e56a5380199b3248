"""How a fetched page meets what the state remembers of it.

The coordinator calls :func:`remember` for every finished page when a state
file is in use: a ``304 Not Modified`` is replaced by the stored page (its
verdict, lastmod and outlinks), a fresh page gets its content history
updated, and either way the page is written back for the next run.
"""

from __future__ import annotations

from datetime import datetime

from crawler.core.dates import parse_http_date, trusted_lastmod
from crawler.core.records import PageRecord
from crawler.frontier.job import Job
from crawler.page.lastmod import choose_lastmod, content_history, median_interval
from crawler.page.read import PageOutcome, targets
from crawler.store.state import CrawlState
from crawler.store.stored import StoredPage

NOT_MODIFIED = 304


def remember(
    state: CrawlState, job: Job, outcome: PageOutcome, mode: str, run_time: datetime, *,
    every_link: bool = False, edges: bool = False,
) -> tuple[PageOutcome, bool]:
    """The outcome to use for ``job`` and whether it came from the state (a 304).
    ``every_link`` (audits) keeps each link's anchor text with the page, ``edges``
    (--links) its rows of the link graph, for a later 304 to replay."""
    record = outcome.record
    previous = state.previous(record.url, with_links=False)
    if record.status == NOT_MODIFIED and previous is not None:
        stored = previous.record
        stored.depth, stored.elapsed, stored.attempts = job.depth, record.elapsed, record.attempts
        # A 304 may carry updated validators (RFC 9110 §15.4.5); keep the newest.
        etag = outcome.etag or previous.etag
        last_modified = outcome.last_modified or previous.last_modified
        header = trusted_lastmod(last_modified, run_time)
        stored.lastmod = choose_lastmod(mode, header, previous.hash_changed_at)
        stored.content_changed = False  # not modified: the content is the stored one
        links = (state.all_outlinks(previous) if every_link
                 else state.new_outlinks(previous))
        reused = PageOutcome(
            stored, links=[] if stored.nofollow else links,
            siblings=targets(stored), etag=etag, last_modified=last_modified,
            content_hash=previous.content_hash, anchors=previous.anchors,
            edges=previous.edges or [])
        state.touch(stored.url, job.depth, etag, last_modified)
        return reused, True
    old_hash = previous.content_hash if previous else None
    old_changed = previous.hash_changed_at if previous else None
    if previous is not None:
        _note_changes(record, old_hash, outcome.content_hash,
                      (previous.last_modified, outcome.last_modified))
    content_hash, changed = content_history(outcome.content_hash, old_hash, old_changed, run_time)
    record.lastmod = choose_lastmod(mode, record.lastmod, changed)
    if mode == "auto" and record.lastmod_note is not None and changed is not None:
        record.lastmod = changed  # the header misleads: when the content last changed
    changes = previous.changes if previous else ()
    if outcome.content_hash is not None and old_hash not in (None, outcome.content_hash):
        changes = (*changes, int(run_time.timestamp()))
    record.change_interval = median_interval(changes)
    state.save(StoredPage(record, outcome.etag, outcome.last_modified, content_hash, changed,
                          outcome.links, changes=changes,
                          anchors=outcome.anchors if every_link else {},
                          edges=outcome.edges if edges else None))
    return outcome, False


def _note_changes(record: PageRecord, old_hash: bytes | None, new_hash: bytes | None,
                  headers: tuple[str | None, str | None]) -> None:
    """What this run saw change on a page fetched before: its content (both
    fingerprints known and different), and whether its Last-Modified told the truth
    about it. A build that stamps every page moves the header of pages whose content
    did not move ("restamped"); a server that never updates it keeps it still while
    the content changes ("stale"). Either way a lastmod read from it misleads."""
    if old_hash is None or new_hash is None:
        return
    record.content_changed = old_hash != new_hash
    before, now = headers
    if before is None or now is None:
        return
    moved = parse_http_date(before) != parse_http_date(now)
    if moved and not record.content_changed:
        record.lastmod_note = ("restamped", before, now)
    elif record.content_changed and not moved:
        record.lastmod_note = ("stale", before, now)
