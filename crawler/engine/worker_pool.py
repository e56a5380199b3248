"""``--workers N``: pages fetched and read in N processes, the crawl run by one.

On a site served fast, one core is busy parsing HTML and speaking HTTP while the
others idle. The expensive part of a page — its requests, decoding and parsing
(:class:`~crawler.engine.page_fetcher.PageFetcher`) — keeps no crawl-wide state, so it
moves to worker processes unchanged, while the coordinator keeps everything
that decides what the crawl is: the frontier and seen set, robots.txt (fetched
once), the filters, the state file and the records. A crawl with N workers
therefore takes the same decisions in the same order as a crawl with one, and
the politeness limits hold for the whole crawl because one process owns them:

- ``--concurrency`` is shared out: worker *i* runs its share of fetch tasks and
  opens at most that many connections, and the shares add up to the limit;
- the pacing gate (``--delay``, ``--rate``, Crawl-delay, Retry-After and the
  429/503 back-off) is the coordinator's: while it holds anything back, every
  request start in every worker waits for its grant, and a back-off one worker
  meets slows them all; while it holds nothing back, no one asks;
- the site's session cookies are one jar: what a worker is sent goes, through
  the coordinator, to every other.

Messages travel in length-prefixed pickled frames over one socket pair per
worker; each frame carries every message queued since the last one, so a busy
worker sends its outcomes in batches.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import replace

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup, UNIXSocketStream

from crawler.config import CrawlConfig
from crawler.core.errors import ErrorKind, WorkerError
from crawler.core.records import PageRecord
from crawler.engine.worker import serve
from crawler.engine.worker_link import BEAT_SECONDS, JOB_LINGER, Link, set_jar
from crawler.frontier.job import Job
from crawler.http.fetch import Fetcher
from crawler.page.read import PageOutcome
from crawler.page.wire import outcome_in
from crawler.urls.robots import RobotsPolicy

# a worker that does not leave within this after its socket closed is killed
EXIT_GRACE = 5.0
# A worker not heard from for this long (its heartbeat is every BEAT_SECONDS: it was
# stopped with SIGSTOP, or its loop is blocked) is killed and its jobs go to the
# others. SITEMAP_CRAWLER_WORKER_SILENCE, in seconds, sets another (the tests').
WEDGED_AFTER = 10.0
_pools_open = 0  # the pools of this process that may still have workers running




def wedged_after() -> float:
    """Seconds of silence after which a worker is given up."""
    try:
        value = float(os.environ.get("SITEMAP_CRAWLER_WORKER_SILENCE", WEDGED_AFTER))
    except ValueError:
        return WEDGED_AFTER
    return value if math.isfinite(value) and value > 2 * BEAT_SECONDS else WEDGED_AFTER


def shares(concurrency: int, workers: int) -> list[int]:
    """``--concurrency`` split over the workers: as even as it goes, summing to it."""
    base, extra = divmod(concurrency, workers)
    return [base + (1 if index < extra else 0) for index in range(workers)]


# -- the coordinator's side -----------------------------------------------------------


class _Worker:
    def __init__(self, process: multiprocessing.process.BaseProcess, link: Link) -> None:
        self.process = process
        self.link = link
        # ticket -> (done, slot for the outcome, the job, times it was handed out)
        self.pending: dict[int, tuple[anyio.Event, list[PageOutcome], Job, int]] = {}
        self.ready = anyio.Event()
        self.heard = time.monotonic()  # when a frame last came from it
        self.lost = False


class _Launch:
    """One worker's start, run in a thread. A crawl cancelled meanwhile stops waiting
    for the thread, not the thread: the start completes, and :meth:`abandon` then
    closes the worker's socket (so it leaves) and reaps it. Left running, it kept
    the fork server up, and the pool waited for that without end."""

    def __init__(self, context: multiprocessing.context.BaseContext,
                 args: tuple[object, ...]) -> None:
        self.context = context
        self.args = args
        self.finished = threading.Event()
        self.result: tuple[multiprocessing.process.BaseProcess, socket.socket] | None = None

    def run(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            process = self.context.Process(target=serve, daemon=True,
                                           name="sitemap-crawler worker",
                                           args=(theirs, *self.args))
            process.start()
            self.result = (process, ours)
        finally:
            theirs.close()
            if self.result is None:
                ours.close()
            self.finished.set()

    def started(self) -> tuple[multiprocessing.process.BaseProcess, socket.socket]:
        assert self.result is not None  # run() raised otherwise
        return self.result

    def abandon(self) -> None:
        self.finished.wait(EXIT_GRACE)
        if self.result is not None:
            process, ours = self.result
            ours.close()
            process.join(EXIT_GRACE)
            if process.is_alive():
                process.kill()
                process.join()


class WorkerPool:
    """N worker processes, used by the coordinator like a :class:`PageFetcher`."""

    # the coordinator keeps a job ahead of each fetch task (twice the tasks), so a
    # worker never waits for the next one to cross the socket
    jobs_ahead = True

    def __init__(self, config: CrawlConfig, workers: int, fetcher: Fetcher,
                 robots: RobotsPolicy | None = None) -> None:
        self.config = config
        self.robots = robots
        self.count = workers
        self.fetcher = fetcher  # the coordinator's: its gate and cookie jar are the crawl's
        self.gate = fetcher.gate
        self._workers: list[_Worker] = []
        self._launches: list[_Launch] = []  # worker starts not yet in _workers
        self._group: TaskGroup | None = None
        self._holding = False
        self._closing = False
        self._sent = 0
        self.lost: list[str] = []  # why each lost worker was given up (for the report)
        self.silence = wedged_after()

    async def _start(self, group: TaskGroup) -> None:
        global _pools_open
        _pools_open += 1  # before anything can fail: _close counts it down
        self._group = group
        context = _start_method()
        self._holding = self.gate.holds()
        cookies = list(self.fetcher.cookies.jar)
        # --concurrency and --render-concurrency hold for the whole crawl: each worker
        # gets its share (so two workers' browsers render no more pages than one would)
        for share, rendering in zip(shares(self.config.concurrency, self.count),
                                    shares(max(self.config.render_concurrency, self.count),
                                           self.count), strict=True):
            launch = _Launch(context, (replace(
                self.config, concurrency=share, workers=1, render_concurrency=rendering),
                self._holding, cookies, self.robots, dict(os.environ)))
            self._launches.append(launch)
            await anyio.to_thread.run_sync(launch.run)
            process, ours = launch.started()
            worker = _Worker(process, Link(await UNIXSocketStream.from_socket(ours),
                                           JOB_LINGER))
            self._workers.append(worker)
            self._launches.remove(launch)
            group.start_soon(worker.link.send_loop)
            group.start_soon(self._listen, worker)
        # Started together, so no worker begins while another still imports: a
        # pause the gate orders then reaches every worker within a frame's time.
        for worker in self._workers:
            await worker.ready.wait()
            worker.heard = time.monotonic()
        group.start_soon(self._watch)

    async def _close(self) -> None:
        """Close every socket (a worker leaves when it reads the end of its
        socket), wait for the processes, kill one that lingers."""
        global _pools_open
        self._closing = True
        with anyio.CancelScope(shield=True):
            for worker in self._workers:
                await worker.link.stream.aclose()
            for launch in self._launches:  # a start the crawl's end cut short
                await anyio.to_thread.run_sync(launch.abandon)
            for worker in self._workers:
                await anyio.to_thread.run_sync(worker.process.join, EXIT_GRACE)
                if worker.process.is_alive():
                    worker.process.kill()
                    await anyio.to_thread.run_sync(worker.process.join)
            _pools_open -= 1
            if not _pools_open:  # no other crawl of this process has workers from it
                await anyio.to_thread.run_sync(_stop_fork_server)
        if self._group is not None:
            self._group.cancel_scope.cancel()  # the send loops

    async def fetch(self, job: Job) -> PageOutcome:
        """Send ``job`` to the worker with the least in hand; its outcome when back."""
        self._sent += 1
        ticket = self._sent
        done = anyio.Event()
        slot: list[PageOutcome] = []
        self._hand_out(ticket, (done, slot, job, 0))
        await done.wait()
        return slot[0]

    def _hand_out(self, ticket: int,
                  entry: tuple[anyio.Event, list[PageOutcome], Job, int]) -> None:
        worker = min(self._workers, key=lambda one: len(one.pending))
        done, slot, job, handed = entry
        worker.pending[ticket] = (done, slot, job, handed + 1)
        # hops and chain are the coordinator's business (loop detection): not sent
        worker.link.post(("job", job.url, job.depth, job.validators, job.probe, ticket))

    async def _watch(self) -> None:
        """Give up a worker that has gone quiet: stopped (SIGSTOP) or wedged."""
        while True:
            await anyio.sleep(BEAT_SECONDS)
            now = time.monotonic()
            for worker in list(self._workers):
                if now - worker.heard > self.silence and not self._closing:
                    await self._lose(worker, f"a worker process stopped answering for "
                                             f"{self.silence:g} s (stopped or wedged)")

    async def _lose(self, worker: _Worker, why: str) -> None:
        """Kill ``worker`` and hand its jobs to the others; a job lost twice is
        recorded as that page's error. Without a worker left, the crawl ends."""
        if worker.lost:
            return
        worker.lost = True
        self._workers.remove(worker)
        self.lost.append(why)
        worker.process.kill()
        with suppress(Exception):
            await worker.link.stream.aclose()
        await anyio.to_thread.run_sync(worker.process.join, EXIT_GRACE)
        if not self._workers:
            raise WorkerError(f"{why}, and no worker is left")
        for ticket, entry in worker.pending.items():
            done, slot, job, handed = entry
            if handed >= 2:
                slot.append(_lost_page(job, why))
                done.set()
            else:
                self._hand_out(ticket, entry)
        worker.pending.clear()

    async def _listen(self, worker: _Worker) -> None:
        while (batch := await worker.link.receive()) is not None:
            worker.heard = time.monotonic()
            for message in batch:
                kind = message[0]
                if kind == "ready":
                    worker.ready.set()
                elif kind == "done":
                    entry = worker.pending.pop(message[1], None)
                    if entry is not None:
                        entry[1].append(outcome_in(message[2]))
                        entry[0].set()
                elif kind == "wait":
                    assert self._group is not None
                    self._group.start_soon(self._grant, worker, message[1])
                elif kind == "back_off":
                    self.gate.back_off(message[1])
                    self._tell_holding()
                elif kind == "recover":
                    self.gate.recover()
                    self._tell_holding()
                elif kind == "cookies":
                    set_jar(self.fetcher, message[1])
                    for other in self._workers:
                        if other is not worker:
                            other.link.post(("cookies", message[1]))
                elif kind == "failed":
                    raise WorkerError(f"a worker process failed: {message[1]}")
        if self._closing or worker.lost:
            return
        code = await anyio.to_thread.run_sync(_exit_code, worker.process)
        await self._lose(worker, f"a worker process exited unexpectedly (exit code {code})")

    async def _grant(self, worker: _Worker, ticket: int) -> None:
        await self.gate.wait()
        worker.link.post(("go", ticket), urgent=True)
        self._tell_holding()

    def _tell_holding(self) -> None:
        holding = self.gate.holds()
        if holding != self._holding:
            self._holding = holding
            for worker in self._workers:
                worker.link.post(("holding", holding), urgent=True)


def _lost_page(job: Job, why: str) -> PageOutcome:
    """A job whose worker was lost twice: that page's error, not the crawl's."""
    return PageOutcome(PageRecord(url=job.url, depth=job.depth, error=ErrorKind.INTERNAL,
                                  detail=f"{why} twice while reading this page"))


def _start_method() -> multiprocessing.context.BaseContext:
    """How worker processes start: forked from multiprocessing's fork server, which
    imports the worker's code once and forks each worker from there (the main
    module too, so a worker does not run the command's script again).

    Not spawned: as a fresh interpreter each worker imported everything again
    (~0.2 s of CPU each, all at once on the cores the crawl is using;
    ``bench/worker_start.py``). Not forked from this process: it runs an event
    loop and threads, and a fork copies their locks in whatever state they are.
    The server is a fresh, single-threaded interpreter, started with the first
    pool and stopped with the last (:func:`_stop_fork_server`). What differs
    between crawls reaches each worker in its arguments (the environment too:
    see ``worker.serve``). Without a fork server (Windows), workers are spawned."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", "crawler.engine.worker"])
    return context


def _stop_fork_server() -> None:
    """Stop the fork server once its workers are gone, and reap it.

    Its CPU, and its workers' (which it reaped), then count as this process's
    children's, where ``time``, ``getrusage`` and the benchmarks read a crawl's
    CPU: a server left to exit with this process would take them with it. The
    next pool starts another. (``_stop`` is multiprocessing's own, used by its tests;
    where a Python lacks it, the server ends with this process as before.)"""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)
    if callable(stop):
        with suppress(OSError):  # reaped by someone else already: nothing to wait for
            stop()


def _exit_code(process: multiprocessing.process.BaseProcess) -> int | None:
    process.join(EXIT_GRACE)
    return process.exitcode


@asynccontextmanager
async def worker_pool(config: CrawlConfig, workers: int, fetcher: Fetcher,
                      robots: RobotsPolicy | None = None) -> AsyncIterator[WorkerPool]:
    """Workers started, and stopped however the crawl ends. A worker that dies
    ends the crawl with :class:`WorkerError` (raised alone, not in a group)."""
    pool = WorkerPool(config, workers, fetcher, robots)
    try:
        async with anyio.create_task_group() as group:
            try:
                await pool._start(group)
                yield pool
            finally:
                await pool._close()
    except BaseExceptionGroup as group_error:
        lost, _rest = group_error.split(WorkerError)
        if lost is not None:
            raise lost.exceptions[0] from None
        if len(group_error.exceptions) == 1:  # the crawl's own error, as itself
            raise group_error.exceptions[0] from None
        raise
