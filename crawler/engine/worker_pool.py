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
import pickle
import signal
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import replace
from http.cookiejar import Cookie
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup, UNIXSocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from crawler.config import CrawlConfig
from crawler.core.errors import ErrorKind, WorkerError
from crawler.core.records import PageRecord
from crawler.engine.page_fetcher import PageFetcher
from crawler.frontier.job import Job
from crawler.http.fetch import Fetcher
from crawler.http.politeness import Gate
from crawler.page.read import PageOutcome
from crawler.page.wire import outcome_in, outcome_out

Message = tuple[Any, ...]
LENGTH_BYTES = 4
# a worker that does not leave within this after its socket closed is killed
EXIT_GRACE = 5.0
# How long a worker's outcomes, and the coordinator's jobs, wait for company in
# a frame: a few ms against the 50+ ms of a request on the Internet. On
# loopback, with a frame a message two workers gave 1.25x one; batched, 1.6x
# (bench/README.md).
OUTCOME_LINGER = 0.005
JOB_LINGER = 0.002
# links a worker remembers having sent (about 10 MB of URLs)
LINKS_REMEMBERED = 100_000
# A worker says it is alive this often; one not heard from for WEDGED_AFTER (stopped
# with SIGSTOP, or its loop blocked) is killed and its jobs go to the others.
# (SITEMAP_CRAWLER_WORKER_SILENCE, in seconds, sets another: the tests' is shorter)
BEAT_SECONDS = 1.0
WEDGED_AFTER = 10.0


def wedged_after() -> float:
    """Seconds of silence after which a worker is given up."""
    try:
        value = float(os.environ.get("SITEMAP_CRAWLER_WORKER_SILENCE", WEDGED_AFTER))
    except ValueError:
        return WEDGED_AFTER
    return value if math.isfinite(value) and value > 2 * BEAT_SECONDS else WEDGED_AFTER


def worker_count(asked: int | str, concurrency: int) -> int:
    """``--workers``: a positive number, or ``auto`` (the cores this process may use,
    never more than ``--concurrency``, since each worker keeps a request in flight)."""
    if asked == "auto":
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        return max(1, min(cores or os.cpu_count() or 1, concurrency))
    return int(asked)


def shares(concurrency: int, workers: int) -> list[int]:
    """``--concurrency`` split over the workers: as even as it goes, summing to it."""
    base, extra = divmod(concurrency, workers)
    return [base + (1 if index < extra else 0) for index in range(workers)]


class _Link:
    """One end of a worker's socket: frames out in batches, frames in as lists."""

    def __init__(self, stream: UNIXSocketStream, linger: float) -> None:
        self.stream = stream
        self.linger = linger
        self.reader = BufferedByteReceiveStream(stream)
        self._outbox: list[Message] = []
        self._wake = anyio.Event()
        self._urgent = anyio.Event()

    def post(self, message: Message, *, urgent: bool = False) -> None:
        """Queue a message for the next frame (never blocks, so sync code can post).
        An urgent one (the pacing gate's) cuts the linger short."""
        self._outbox.append(message)
        self._wake.set()
        if urgent:
            self._urgent.set()

    async def send_loop(self) -> None:
        while True:
            await self._wake.wait()
            if self.linger and not self._urgent.is_set():
                # let the messages of the next few milliseconds share this frame: each
                # frame costs a send, a wake-up and a turn of the loop on both sides
                with anyio.move_on_after(self.linger):
                    await self._urgent.wait()
            self._wake, self._urgent = anyio.Event(), anyio.Event()
            batch, self._outbox = self._outbox, []
            try:
                await self.send_now(batch)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return  # the other end is gone: the receiving side says what happened

    async def send_now(self, batch: list[Message]) -> None:
        data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        await self.stream.send(len(data).to_bytes(LENGTH_BYTES, "big") + data)

    async def receive(self) -> list[Message] | None:
        """The next frame's messages, or ``None`` once the other end has closed."""
        try:
            size = int.from_bytes(await self.reader.receive_exactly(LENGTH_BYTES), "big")
            batch: list[Message] = pickle.loads(await self.reader.receive_exactly(size))
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError,
                anyio.ClosedResourceError, ConnectionError):
            return None
        return batch


def _unsent(links: list[str], sent: set[str]) -> list[str]:
    """The links not sent before, now remembered as sent (up to a bound: past
    it the set starts again, and a link sent twice costs a lookup, no more)."""
    if len(sent) > LINKS_REMEMBERED:
        sent.clear()
    fresh = []
    for link in links:
        if link not in sent:
            sent.add(link)
            fresh.append(link)
    return fresh


def _set_jar(fetcher: Fetcher, cookies: list[Cookie]) -> None:
    jar = fetcher.cookies.jar
    jar.clear()
    for cookie in cookies:
        jar.set_cookie(cookie)


# -- the worker's side --------------------------------------------------------------


class _AskingGate(Gate):
    """A worker's gate: lets requests start freely while the coordinator's gate
    holds nothing back, and asks it for every start while it does."""

    def __init__(self, link: _Link, holding: bool) -> None:
        super().__init__()
        self.link = link
        self.holding = holding
        self._grants: dict[int, anyio.Event] = {}
        self._asked = 0

    async def wait(self) -> None:
        if not self.holding:
            return
        self._asked += 1
        granted = self._grants[self._asked] = anyio.Event()
        self.link.post(("wait", self._asked), urgent=True)
        await granted.wait()

    def grant(self, ticket: int) -> None:
        event = self._grants.pop(ticket, None)
        if event is not None:
            event.set()

    def back_off(self, pause: float) -> None:
        self.holding = True  # at once here; the coordinator tells the others
        self.link.post(("back_off", pause), urgent=True)

    def recover(self) -> None:
        if self.holding:
            self.link.post(("recover",))


def serve(sock: socket.socket, config: CrawlConfig, holding: bool,
          cookies: list[Cookie]) -> None:
    """A worker process: fetch and read the jobs the coordinator sends until it
    closes the socket. Ctrl-C is the coordinator's to handle: ignored here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with suppress(BaseException):  # whatever happens here is reported on the socket
        anyio.run(_serve, sock, config, holding, cookies)


async def _serve(sock: socket.socket, config: CrawlConfig, holding: bool,
                 cookies: list[Cookie]) -> None:
    link = _Link(await UNIXSocketStream.from_socket(sock), OUTCOME_LINGER)
    async with link.stream:
        try:
            await _work(link, config, holding, cookies)
        except Exception as exc:  # a bug of ours: named to the coordinator, not printed
            while isinstance(exc, ExceptionGroup):  # raised in a task: name that error
                exc = exc.exceptions[0]
            await link.send_now([("failed", f"{type(exc).__name__}: {exc}")])


async def _work(link: _Link, config: CrawlConfig, holding: bool,
                cookies: list[Cookie]) -> None:
    async with Fetcher(config) as fetcher:
        gate = fetcher.gate = _AskingGate(link, holding)
        _set_jar(fetcher, cookies)
        fetcher.on_cookies = lambda: link.post(("cookies", list(fetcher.cookies.jar)))
        async with PageFetcher(config, fetcher) as pages:
            link.post(("ready",), urgent=True)
            jobs_tx, jobs_rx = anyio.create_memory_object_stream[tuple[Job, int]](float("inf"))

            # Links this worker has sent already (a page's navigation repeats on every
            # page): the coordinator would find each in its seen set and drop it. Not
            # when the state or an audit keeps every link of every page.
            sent: set[str] | None = (
                set() if config.state_path is None and not config.audit else None)

            async def work() -> None:
                async for job, ticket in jobs_rx:
                    outcome = await pages.fetch(job)
                    if sent is not None and outcome.links:
                        outcome.links = _unsent(outcome.links, sent)
                    link.post(("done", ticket, outcome_out(outcome)))

            async def beat() -> None:  # the coordinator kills a worker it stops hearing
                while True:
                    await anyio.sleep(BEAT_SECONDS)
                    link.post(("beat",))

            async with anyio.create_task_group() as group:
                group.start_soon(link.send_loop)
                group.start_soon(beat)
                for _ in range(config.concurrency):
                    group.start_soon(work)
                while (batch := await link.receive()) is not None:
                    for message in batch:
                        kind = message[0]
                        if kind == "job":
                            _, url, depth, validators, ticket = message
                            jobs_tx.send_nowait((Job(url, depth, validators=validators), ticket))
                        elif kind == "go":
                            gate.grant(message[1])
                        elif kind == "holding":
                            gate.holding = message[1]
                        elif kind == "cookies":
                            _set_jar(fetcher, message[1])
                group.cancel_scope.cancel()  # the coordinator is done (or gone)


# -- the coordinator's side -----------------------------------------------------------


class _Worker:
    def __init__(self, process: multiprocessing.process.BaseProcess, link: _Link) -> None:
        self.process = process
        self.link = link
        # ticket -> (done, slot for the outcome, the job, times it was handed out)
        self.pending: dict[int, tuple[anyio.Event, list[PageOutcome], Job, int]] = {}
        self.ready = anyio.Event()
        self.heard = time.monotonic()  # when a frame last came from it
        self.lost = False


class WorkerPool:
    """N worker processes, used by the coordinator like a :class:`PageFetcher`."""

    def __init__(self, config: CrawlConfig, workers: int, fetcher: Fetcher) -> None:
        self.config = config
        self.count = workers
        self.fetcher = fetcher  # the coordinator's: its gate and cookie jar are the crawl's
        self.gate = fetcher.gate
        self._workers: list[_Worker] = []
        self._group: TaskGroup | None = None
        self._holding = False
        self._closing = False
        self._sent = 0
        self.lost: list[str] = []  # why each lost worker was given up (for the report)
        self.silence = wedged_after()

    async def _start(self, group: TaskGroup) -> None:
        self._group = group
        context = multiprocessing.get_context("spawn")
        self._holding = self.gate.holds()
        cookies = list(self.fetcher.cookies.jar)
        for share in shares(self.config.concurrency, self.count):
            ours, theirs = socket.socketpair()
            process = context.Process(
                target=serve, daemon=True, name="sitemap-crawler worker",
                args=(theirs, replace(self.config, concurrency=share, workers=1), self._holding,
                      cookies))
            await anyio.to_thread.run_sync(process.start)
            theirs.close()
            worker = _Worker(process, _Link(await UNIXSocketStream.from_socket(ours), JOB_LINGER))
            self._workers.append(worker)
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
        self._closing = True
        with anyio.CancelScope(shield=True):
            for worker in self._workers:
                await worker.link.stream.aclose()
            for worker in self._workers:
                await anyio.to_thread.run_sync(worker.process.join, EXIT_GRACE)
                if worker.process.is_alive():
                    worker.process.kill()
                    await anyio.to_thread.run_sync(worker.process.join)
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
        worker.link.post(("job", job.url, job.depth, job.validators, ticket))

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
                    _set_jar(self.fetcher, message[1])
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


def _exit_code(process: multiprocessing.process.BaseProcess) -> int | None:
    process.join(EXIT_GRACE)
    return process.exitcode


@asynccontextmanager
async def worker_pool(config: CrawlConfig, workers: int,
                      fetcher: Fetcher) -> AsyncIterator[WorkerPool]:
    """Workers started, and stopped however the crawl ends. A worker that dies
    ends the crawl with :class:`WorkerError` (raised alone, not in a group)."""
    pool = WorkerPool(config, workers, fetcher)
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
