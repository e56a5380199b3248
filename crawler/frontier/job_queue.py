"""The frontier's FIFO, kept short in memory however many URLs wait.

A breadth-first crawl of a large site queues a whole level before it fetches
it: 810,000 jobs waited at depth 4 of a million-page site, some 250 MB of
objects. Past :data:`JOBS_IN_MEMORY` jobs, new ones go to a temporary file in
chunks and come back, in order, when the jobs ahead of them are done; the
order is exactly a list's. The file is unlinked as soon as it is made.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections import deque
from collections.abc import Iterator
from typing import IO

from crawler.config import memory_limit
from crawler.frontier.job import Job

JOBS_IN_MEMORY = 100_000
CHUNK = 10_000


class JobQueue:
    """FIFO of jobs: a head in memory, chunks on disk, a tail in memory."""

    def __init__(self, keep: int | None = None, chunk: int = CHUNK) -> None:
        self._keep = memory_limit("JOBS_IN_MEMORY", JOBS_IN_MEMORY) if keep is None else keep
        self._chunk = max(1, min(chunk, self._keep or 1))
        self._head: deque[Job] = deque()
        self._tail: list[Job] = []
        self._chunks: deque[tuple[int, int, int]] = deque()  # offset, size, jobs
        self._file: IO[bytes] | None = None
        self._end = 0
        self._length = 0

    def __len__(self) -> int:
        return self._length

    def __bool__(self) -> bool:
        return self._length > 0

    def append(self, job: Job) -> None:
        self._length += 1
        if not self._chunks and not self._tail and len(self._head) < self._keep:
            self._head.append(job)
            return
        self._tail.append(job)
        if len(self._tail) >= self._chunk:
            self._write_tail()

    def _write_tail(self) -> None:
        if self._file is None:
            handle, path = tempfile.mkstemp(prefix="sitemap-crawler-queue-")
            os.unlink(path)
            self._file = os.fdopen(handle, "w+b")
        data = pickle.dumps([_flat(job) for job in self._tail], protocol=5)
        self._file.seek(self._end)
        self._file.write(data)
        self._chunks.append((self._end, len(data), len(self._tail)))
        self._end += len(data)
        self._tail = []

    def popleft(self) -> Job:
        if not self._head:
            self._refill()
        job = self._head.popleft()  # IndexError when empty, as a deque's
        self._length -= 1
        return job

    def _refill(self) -> None:
        if self._chunks:
            assert self._file is not None
            offset, size, _count = self._chunks.popleft()
            self._file.seek(offset)
            self._head.extend(_jobs(pickle.loads(self._file.read(size))))
            if not self._chunks:
                self._end = 0  # every chunk read back: the file can be reused from its start
        elif self._tail:
            self._head.extend(self._tail)
            self._tail = []

    def __iter__(self) -> Iterator[Job]:
        yield from self._head
        for offset, size, _count in list(self._chunks):
            assert self._file is not None
            self._file.seek(offset)
            yield from _jobs(pickle.loads(self._file.read(size)))
        yield from self._tail

    def clear(self) -> None:
        self._head.clear()
        self._tail = []
        self._chunks.clear()
        self._end = 0
        self._length = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _flat(job: Job) -> tuple:
    return (job.url, job.depth, job.hops, job.chain, job.validators)


def _jobs(flats: list[tuple]) -> list[Job]:
    return [Job(*flat) for flat in flats]
