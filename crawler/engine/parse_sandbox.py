"""Reading pages in a child process the crawl can stop: a CPU and memory budget per page.

lexbor, like the HTML standard's tree builder it follows, is quadratic on some
broken HTML that is common in the wild: 155 KB of unclosed ``<font>`` tags take
7 s and 1.6 GB to parse, and the time and memory grow with the square of the
page. A parse cannot be interrupted from Python, and a thread that runs one
cannot be stopped, so pages are read in a child process forked from the crawling
process (so it starts in milliseconds with everything imported), one at a time:

* a page not read within ``--max-parse-seconds`` gets the child killed and is
  recorded as ``parse-timeout`` with what its answer said (status, headers,
  size), its links unread; the next pages go to a new child;
* the child's address space is capped (``forked_child.MEMORY_HEADROOM`` above what it
  starts with), so a page that would take gigabytes fails alone;
* the child dies with its parent (``PR_SET_PDEATHSIG``), ignores Ctrl-C (the
  parent's to handle) and holds no descriptor but its socket, so a connection
  the parent closes is closed.

The child reads every page that has arrived before it answers, and answers
them in one write (at once, though, once a batch has taken
:data:`FLUSH_SECONDS`): a write and a wakeup of the crawling process per page
cost that process 37 µs of its ~190 µs a page on the synthetic site. Both ways,
a batch is one frame and one pickle, not one a page (the pages' bodies follow
their pickle: :func:`crawler.engine.parse_wire.pages_frame`): between two parses the
pickler has left the CPU's caches, and in the child pickling one page's answer
took 14 µs in a crawl against 0.8 µs in a loop (a batch's, 3.7 µs a page), and
unpickling its page 7.5 µs against 2.6 (in a batch, 4.4). So which
page the child is reading, and since when, is not told by the order of its
answers but written by the child into a few bytes of memory shared with the
parent (:class:`Progress`): the watchdog times that page, and a child that
dies or is killed takes only that page with it; the pages whose answers it had
not yet sent go to the next child.

The crawling process meanwhile only waits on a socket: its event loop keeps
serving every other request, and a signal is answered at once. Reading in
another process also puts the parse on a second core.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from crawler.core.errors import ErrorKind
from crawler.core.response import Response
from crawler.engine.forked_child import become_child, kill_and_reap
from crawler.engine.parse_progress import Progress
from crawler.engine.parse_wire import (
    Outgoing,
    batch_frame,
    frames_in,
    pages_frame,
    pages_in,
    wire_of,
)
from crawler.page.read import PageOutcome, failed_page, unread_page
from crawler.page.wire import outcome_in, outcome_out

if TYPE_CHECKING:
    from crawler.page.soft_404 import ProbeAnswer

# (answer, depth, when, whether the body is a rendered DOM, the probe answer of the
# page's directory) -> outcome
Reader = Callable[[Response, int, datetime, bool, "ProbeAnswer | None"], PageOutcome]
SOCKET_BUFFER = 4 * 1024 * 1024  # the kernel caps it at net.core.wmem_max
READ_BUFFER = 256 * 1024  # what one read of the child's answers may take
# A batch of pages answered together is sent early once it has taken this long, so
# the crawling process sends the next requests sooner: at --concurrency 32 a page's
# wait for its answer bounds the crawl. Against 20 ms, alternated pairs: s100k x0.93
# the wall time (four pairs), cppreference x0.93 (four), s10k x0.94 and x0.97 (two
# sets of five), the Python docs x1.02 (five; 1.4 ms a page, so a write every two
# pages). 1 and 4 ms did as well on s10k; at 1 ms and less the crawling process
# spent 12-20 % more CPU on the writes.
FLUSH_SECONDS = 0.002
# A page's --max-parse-seconds is counted in the child's CPU time once its wall time is
# up (a loaded machine gives the child a fraction of a core), up to this many times
# the budget in wall time.
WALL_CAP = 4
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(slots=True)
class _Page:
    """A page sent to the child, until its outcome is back."""

    ticket: int
    response: Response
    depth: int
    now: datetime
    done: asyncio.Future[PageOutcome]
    rendered: bool = False
    probe: ProbeAnswer | None = None  # what an unknown URL in its directory shows
    sent_to: int = 0  # the child (by generation) it was sent to


class _Channel(asyncio.BufferedProtocol):
    """The parent's end of one child's socket, read by the event loop's callbacks.

    Frames are cut out of the bytes as they arrive and handed on at once: no task
    waits on the socket and nothing awaits a write (the child keeps up, and the
    pages in flight are bounded by the crawl's concurrency). This is the cheap
    path: a stream API with its locks and checkpoints cost the crawling process
    a fifth of its time on a fast site (bench/README.md). The socket is read into
    a buffer of its own: asyncio's default read allocates 256 KiB for every
    recv(), an mmap and munmap each time (17 us against 3 us for a page's answer).
    """

    def __init__(self, on_frame: Callable[[bytes], None], on_lost: Callable[[], None]) -> None:
        self._scratch = memoryview(bytearray(READ_BUFFER))
        self._buffer = bytearray()
        self._on_frame = on_frame
        self._on_lost = on_lost
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._scratch

    def buffer_updated(self, nbytes: int) -> None:
        buffer = self._buffer
        buffer += self._scratch[:nbytes]
        frames, used = frames_in(buffer)
        if used:
            del buffer[:used]
        for frame in frames:
            self._on_frame(frame)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self._on_lost()


class ParseSandbox:
    """One child process reading pages in order; killed and replaced when a page
    overruns its budget. Use it as an async context manager."""

    def __init__(self, read: Reader, budget: float) -> None:
        self._read = read  # inherited by the forked child, never pickled
        self.budget = budget
        self._pending: dict[int, _Page] = {}  # in the order sent, which the child keeps
        self._tickets = 0
        self._progress: Progress | None = None  # what the current child is reading
        # the pages for the child, written in one frame once a loop turn
        self._outbox: list[Outgoing] = []
        self._pid = 0
        self._channel: _Channel | None = None
        self._lost = anyio.Event()  # the current child's socket closed: replace it
        self._group: TaskGroup | None = None
        self._killed: int | None = None  # the ticket whose overrun got the child killed
        self._generation = 0  # children started so far
        self.restarts = 0
        self.answered = 0  # pages whose outcome came back

    async def __aenter__(self) -> ParseSandbox:
        await self._spawn()
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._replace_loop)
        self._group.start_soon(self._watch)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._group is not None
        self._group.cancel_scope.cancel()
        try:
            await self._group.__aexit__(None, None, None)
        finally:
            self._stop_child()

    def backlog(self) -> int:
        """Pages sent and not yet answered."""
        return len(self._pending)

    def child_cpu(self) -> float | None:
        """CPU seconds the current child has used, where Linux's /proc tells."""
        try:
            with open(f"/proc/{self._pid}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
            return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
        except (OSError, ValueError, IndexError):
            return None

    async def read(self, response: Response, depth: int, now: datetime,
                   rendered: bool = False, probe: ProbeAnswer | None = None) -> PageOutcome:
        """The page's outcome, read in the child (or the reason it could not be)."""
        self._tickets += 1
        page = _Page(self._tickets, response, depth, now,
                     asyncio.get_running_loop().create_future(), rendered=rendered,
                     probe=probe)
        self._pending[page.ticket] = page
        try:
            self._send(page)
            return await page.done
        finally:
            self._pending.pop(page.ticket, None)

    # -- the parent's side --------------------------------------------------------

    def _send(self, page: _Page) -> None:
        channel = self._channel
        if page.sent_to == self._generation or channel is None or channel.transport is None:
            return  # sent to this child already, or it is being replaced (which sends)
        page.sent_to = self._generation
        response = page.response
        if not self._outbox:  # the pages of this turn of the loop go in one frame
            asyncio.get_running_loop().call_soon(self._flush)
        self._outbox.append((page.ticket, wire_of(response), response.body, page.depth,
                             page.now, page.rendered, page.probe))

    def _flush(self) -> None:
        # what is in the outbox is the current child's: a child stopped empties it
        pages, self._outbox = self._outbox, []
        channel = self._channel
        if pages and channel is not None and channel.transport is not None:
            channel.transport.write(pages_frame(pages))

    def _answered(self, frame: bytes) -> None:
        for ticket, wire in pickle.loads(frame):
            page = self._pending.pop(ticket, None)
            self.answered += 1
            if page is not None:
                self._settle(page, outcome_in(wire))

    def _settle(self, page: _Page, outcome: PageOutcome) -> None:
        if not page.done.done():
            page.done.set_result(outcome)

    async def _replace_loop(self) -> None:
        while True:
            await self._lost.wait()
            self._lost = anyio.Event()
            await self._replace_child()

    async def _watch(self) -> None:
        """Kill the child when the page it is reading overruns the budget."""
        while True:
            progress = self._progress
            reading = progress.reading() if progress is not None and self._pending else None
            if reading is None:
                await anyio.sleep(min(0.05, self.budget / 4))
                continue
            ticket, since = reading
            left = since + self.budget - time.monotonic()
            if left <= 0:  # its time is up; on a busy machine, maybe not its CPU
                left = self._cpu_left(progress, since)  # type: ignore[arg-type]
            if left > 0:
                await anyio.sleep(min(left, self.budget / 4) + 0.001)
                continue
            if self._killed is None and progress is self._progress and (
                    progress.reading() == reading):
                self._killed = ticket
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
            await anyio.sleep(0.01)

    def _cpu_left(self, progress: Progress, since: float) -> float:
        """What is left of the page's budget counted in the child's CPU time, so that
        a machine busy with other work does not make a page fail that a quiet one
        reads in time (the budget is against hostile pages, which spend it on CPU);
        never more than :data:`WALL_CAP` times the budget in all. Wall time alone
        where the kernel does not tell another process's CPU time."""
        wall_left = since + self.budget * WALL_CAP - time.monotonic()
        spent = self.child_cpu()
        if spent is None or wall_left <= 0:
            return 0.0
        return min(wall_left, self.budget - (spent - progress.cpu_at_start()))

    async def _replace_child(self) -> None:
        """The child is gone: the page it was reading fails, a new child gets the rest
        (those it had read but not yet answered among them)."""
        killed, self._killed = self._killed, None
        reading = self._progress.ticket() if self._progress is not None else 0
        self._stop_child()
        page = self._pending.pop(reading, None)
        if page is not None:
            self._settle(page, _overrun(page, self.budget) if killed == reading else (
                failed_page(page.response, page.depth,
                            RuntimeError("the parser process died reading this page"))))
        self.restarts += 1
        await self._spawn()
        for page in list(self._pending.values()):
            self._send(page)

    async def _spawn(self) -> None:
        ours, theirs = socket.socketpair()
        # Room for every page in flight: a send that fits is one call, where a full
        # buffer made the loop come back to each page's remainder piece by piece.
        for end in (ours, theirs):
            with contextlib.suppress(OSError):
                end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
                end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
        progress = Progress()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            ours.close()
            _child(theirs, self._read, progress)
        theirs.close()
        self._progress = progress
        self._pid = pid
        self._generation += 1
        generation = self._generation

        def lost() -> None:
            if generation == self._generation:  # not a child already replaced
                self._lost.set()

        _transport, self._channel = await asyncio.get_running_loop().create_unix_connection(
            lambda: _Channel(self._answered, lost), sock=ours)

    def _stop_child(self) -> None:
        self._outbox = []  # frames for the child stopped: the next one is sent its pages
        progress, self._progress = self._progress, None
        if progress is not None:
            progress.close()
        channel, self._channel = self._channel, None
        if channel is not None and channel.transport is not None:
            channel.transport.abort()
        if self._pid:
            kill_and_reap(self._pid)
            self._pid = 0


def _overrun(page: _Page, budget: float) -> PageOutcome:
    return unread_page(page.response, page.depth, ErrorKind.PARSE_TIMEOUT,
                       f"not read within --max-parse-seconds {budget:g}")


# -- the child's side ---------------------------------------------------------------


def _child(sock: socket.socket, read: Reader, progress: Progress) -> None:
    """Read pages from ``sock`` until it closes; never returns to the caller's code."""
    code = 0
    try:  # the forked child's boundary: whatever ends it, the process exits here
        _serve(sock, read, progress)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _serve(sock: socket.socket, read: Reader, progress: Progress) -> None:
    """Answer each batch of pages that arrived together in one frame."""
    become_child(sock)
    scratch = memoryview(bytearray(READ_BUFFER))
    buffer = bytearray()
    while True:
        frames, used = frames_in(buffer)
        del buffer[:used]
        if not frames:
            progress.idle()
            size = sock.recv_into(scratch)
            if not size:
                return
            buffer += scratch[:size]
            continue
        answers: list[tuple[int, tuple[object, ...]]] = []
        began = time.monotonic()
        for frame in frames:
            for ticket, response, depth, now, rendered, probe in pages_in(frame):
                progress.begin(ticket)
                answers.append((ticket, _answer(read, response, depth, now, rendered, probe)))
                if time.monotonic() - began > FLUSH_SECONDS:  # slow pages: answer so far
                    sock.sendall(batch_frame(answers))
                    answers.clear()
                    began = time.monotonic()
        if answers:
            sock.sendall(batch_frame(answers))


def _answer(read: Reader, response: Response, depth: int, now: datetime,
            rendered: bool, probe: ProbeAnswer | None) -> tuple[object, ...]:
    """One page's outcome, for the wire (one page's failure never ends the child)."""
    try:
        outcome = read(response, depth, now, rendered, probe)
    except MemoryError:
        outcome = unread_page(response, depth, ErrorKind.PARSE_TIMEOUT,
                              "the page needed more memory than the parser may use")
    except Exception as exc:  # one page never ends the crawl
        outcome = failed_page(response, depth, exc)
    return outcome_out(outcome)
