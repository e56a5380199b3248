"""What each structure that grows with a run costs a URL, past its threshold, measured.

    python bench/structures.py [--items 400000]

Each structure the crawler grows as it discovers URLs or fetches pages is fed
``--items`` items shaped like the million-page site's (the crawler's own classes,
no HTTP); memory is traced (tracemalloc) from the middle of the run to its end,
past every threshold where a structure moves to disk, and divided by the items
added in that half: the bytes a further URL or page costs in memory. (The hash
sets grow in steps, so a half can catch more steps than its share: their own
``nbytes`` a key is given beside.) Prints one JSON line per structure.
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from crawler.core.records import PageRecord, SkippedUrl, Verdict
from crawler.frontier.frontier import Frontier
from crawler.frontier.job import Job
from crawler.frontier.job_queue import JobQueue
from crawler.frontier.outside import OutsideLinks
from crawler.frontier.seen_hashes import SeenHashes, key_of
from crawler.store.record_store import RecordStore
from crawler.store.referrers import Referrers
from crawler.store.skipped_store import SkippedStore
from crawler.store.state import CrawlState
from crawler.store.stored import StoredPage

WORK = Path(tempfile.gettempdir()) / "sitemap-crawler-structures"


def url(n: int) -> str:
    return f"http://127.0.0.1:18695/p/{n}.html"


def _record(n: int) -> PageRecord:
    return PageRecord(url(n), depth=4, status=200, content_type="text/html",
                      verdict=Verdict.LISTED, links_found=40, title=f"Page {n}", bytes=20_000)


def _links(n: int, items: int) -> list[str]:
    """The million-page site's links of page ``n``: its parent, children, neighbours."""
    near = [n // 30, *range(n * 30 + 1, n * 30 + 31), n + 1, n - 1, 1, 2]
    return [url(m) for m in dict.fromkeys(near) if 0 <= m < items]


def recrawled_state(items: int) -> Callable[[int], object]:
    """A state file of ``items`` pages, then a re-crawl of it answered with 304s: page
    N's row read, its new outlinks handed out, its 304 kept, committed in batches.
    Its caches (ids, rows read ahead, ids handed out, the batch) are what grows."""
    WORK.mkdir(exist_ok=True)
    path = WORK / "state.db"
    for stale in WORK.glob("state.db*"):
        stale.unlink()
    state = CrawlState(path, url(0).rpartition("/p/")[0] + "/")
    state.begin(resume=False)
    when = datetime(2026, 11, 2, tzinfo=UTC)
    for n in range(items):
        record = PageRecord(url(n), 4, 200, "text/html", verdict=Verdict.LISTED)
        state.save(StoredPage(record, f'"{n}-v1"', None, b"h" * 16, when, _links(n, items)))
        state.checkpoint()
    state.finish()
    state.close()
    again = CrawlState(path, url(0).rpartition("/p/")[0] + "/")
    again.begin(resume=False)

    # breadth-first order hands out a URL's id when its parent is re-crawled, long
    # before its own turn: measured from the first page, not over the second half
    def feed(n: int) -> None:
        stored = again.previous(url(n))
        assert stored is not None
        again.new_outlinks(stored)
        again.touch(url(n), 4, f'"{n}-v1"', None)
        again.checkpoint()
    feed.from_start = True  # type: ignore[attr-defined]
    return feed


def feeders(items: int) -> dict[str, tuple[str, Callable[[], Callable[[int], object]]]]:
    """name -> (what one item is, a maker of the feeding function)."""
    def seen() -> Callable[[int], object]:
        frontier = Frontier()
        feed = lambda n: frontier.first_sight(url(n))  # noqa: E731
        feed.hashes = frontier._hashed  # type: ignore[attr-defined]
        return feed

    def queue() -> Callable[[int], object]:
        jobs = JobQueue()
        return lambda n: jobs.append(Job(url(n), 4))

    def records() -> Callable[[int], object]:
        store = RecordStore()
        return lambda n: store.append(_record(n))

    def skipped() -> Callable[[int], object]:
        store = SkippedStore()
        return lambda n: store.append(SkippedUrl(url(n), 5, Verdict.MAX_DEPTH))

    def referrers() -> Callable[[int], object]:
        links = Referrers()
        return lambda n: links.add(url(n), url(n // 30), "a link")

    def outside() -> Callable[[int], object]:
        links = OutsideLinks()
        return lambda n: links.add(f"https://elsewhere{n % 500}.example/{n}", 3,
                                   Verdict.EXTERNAL)

    def query_variants() -> Callable[[int], object]:
        counted = SeenHashes(counting=True)  # what Frontier.offer counts them in
        feed = lambda n: counted.increment(key_of(url(n)))  # noqa: E731
        feed.hashes = counted  # type: ignore[attr-defined]
        return feed

    return {"seen set": ("discovered URL", seen), "queue": ("discovered URL", queue),
            "records": ("fetched page", records), "skipped URLs": ("skipped URL", skipped),
            "referrers (audits)": ("linked URL", referrers),
            "links out of scope": ("out-of-scope URL", outside),
            "query variants": ("URL with a query", query_variants),
            "state caches (a re-crawl)": ("re-crawled page", lambda: recrawled_state(items))}


def measure(feed: Callable[[int], object], items: int) -> float:
    half = 0 if getattr(feed, "from_start", False) else items // 2
    for n in range(half):
        feed(n)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for n in range(half, items):
        feed(n)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return grown / (items - half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=400_000)
    parser.add_argument("--only", help="this structure alone (its name as printed)")
    args = parser.parse_args()
    for name, (unit, make) in feeders(args.items).items():
        if args.only and name != args.only:
            continue
        feed = make()
        per_item = measure(feed, args.items)
        hashes = getattr(feed, "hashes", None)
        own = round(hashes.nbytes / len(hashes), 1) if hashes is not None else None
        print(json.dumps({"structure": name, "per": unit, "items": args.items,
                          "bytes_in_memory_per_item": round(per_item, 1),
                          "hash_table_bytes_per_key": own}), flush=True)


if __name__ == "__main__":
    main()
