"""The crawl's to-do list: FIFO order, each URL once, and the budgets — sync and pure.

Breadth-first order is what makes ``--max-depth`` and ``--max-pages`` keep the
pages closest to the start, which are the ones a site cares most about. The
trap guards here are cheap string tests that stop the classic infinite spaces
(calendars, session IDs in paths, relative-link loops) before they cost a
request.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from crawler.config import MAX_SEGMENT_REPEATS, MAX_URL_LENGTH, memory_limit
from crawler.core.records import Verdict
from crawler.frontier.job import Job
from crawler.frontier.job_queue import JobQueue
from crawler.frontier.seen_hashes import SeenHashes, key_of

# URLs remembered by their text up to this many; from then on all of them by their
# 64-bit hash alone, in 8 to 16 bytes each (crawler.frontier.seen_hashes, which
# states the odds of a collision)
URLS_KEPT_EXACTLY = 100_000


def trap_reason(url: str, path: str) -> Verdict | None:
    """Why a URL looks like a crawler trap, judged from its text alone."""
    if len(url) > MAX_URL_LENGTH:
        return Verdict.URL_TOO_LONG
    segments = [segment for segment in path.split("/") if segment]
    # a set first: most deep paths repeat no segment at all, and a Counter costs
    # a few microseconds for each URL offered
    if len(segments) > MAX_SEGMENT_REPEATS and len(set(segments)) < len(segments):
        counts = Counter(segments)
        if counts.most_common(1)[0][1] > MAX_SEGMENT_REPEATS:
            return Verdict.REPEATED_SEGMENT
    return None


class Frontier:
    """Queue, seen set and budgets of one crawl."""

    def __init__(
        self,
        *,
        max_depth: int | None = None,
        max_pages: int | None = None,
        max_query_variants: int = 1000,
        max_redirects: int = 10,
    ) -> None:
        self._queue = JobQueue()
        self._seen: set[str] = set()
        self._hashed = SeenHashes()
        self._exact_limit = memory_limit("URLS_KEPT_EXACTLY", URLS_KEPT_EXACTLY)
        # Record a URL as seen; False if it was seen before. Asked for every link of
        # every page: once the URLs are hashed, it is the hashed set's own method,
        # a call and a text lookup less a link (0.66 µs to 0.45 for one seen before).
        self.first_sight: Callable[[str], bool] = self._first_sight_exactly
        # distinct query strings a path was queued with, by the path's 64-bit key
        self._query_variants = SeenHashes(counting=True)
        self._max_depth = max_depth
        self._max_pages = max_pages
        self._max_query_variants = max_query_variants
        self._max_redirects = max_redirects
        self.issued = 0

    def __len__(self) -> int:
        return len(self._queue)

    def seen(self, url: str) -> bool:
        return url in self._seen or (len(self._hashed) > 0 and key_of(url) in self._hashed)

    def _first_sight_exactly(self, url: str) -> bool:
        seen = self._seen
        if url in seen:
            return False
        if len(seen) < self._exact_limit:
            seen.add(url)
            return True
        # the limit: every URL moves to the hashed set, which answers from now on
        hashed = self._hashed
        for known in seen:
            hashed.add_text(known)
        self._seen = set()
        self.first_sight = hashed.add_text
        return hashed.add_text(url)

    def offer(self, job: Job) -> Verdict | None:
        """Queue ``job`` unless a budget or trap guard refuses it; return the refusal."""
        base, qmark, _ = job.url.partition("?")
        reason = trap_reason(job.url, base.partition("://")[2].partition("/")[2])
        if reason is not None:
            return reason
        if self._max_depth is not None and job.depth > self._max_depth:
            return Verdict.MAX_DEPTH
        if job.hops > self._max_redirects:
            return Verdict.REDIRECT_LIMIT
        if qmark:
            key = key_of(base)
            if self._query_variants.count(key) >= self._max_query_variants:
                return Verdict.QUERY_VARIANTS
            self._query_variants.increment(key)
        self._queue.append(job)
        return None

    def restore(self, url: str, *, job: Job | None = None, fetched: bool = False) -> None:
        """Mark ``url`` seen without the checks ``offer`` makes: it passed them already.

        Used for the start URL and to re-enter what an interrupted run had
        fetched, skipped or queued (``--resume``).
        """
        self.first_sight(url)
        base, qmark, _ = url.partition("?")
        if qmark:
            self._query_variants.increment(key_of(base))
        if job is not None:
            self._queue.append(job)
        if fetched:
            self.issued += 1

    def pop(self) -> Job | None:
        """The next job, or ``None`` when the queue is empty or the page budget spent."""
        if not self._queue:
            return None
        if self._max_pages is not None and self.issued >= self._max_pages:
            return None
        self.issued += 1
        return self._queue.popleft()

    def drain(self) -> list[Job]:
        """Jobs left unfetched (the page budget ran out); empties the queue."""
        left = list(self._queue)
        self._queue.clear()
        self._queue.close()
        return left
