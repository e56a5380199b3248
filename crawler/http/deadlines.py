"""Total deadlines for the requests in flight, kept by one watch instead of a timer each.

``asyncio.timeout`` puts a timer on the event loop's heap for every request
and cancels it when the answer is in, and the loop rebuilds its heap whenever
cancelled timers are half of it: on a re-crawl of 304s, where a request is
little more than its round trip, that was 8 % of the crawl's time.
A request's deadline is here an entry in a dict, and one timer, re-armed while
any request is in flight, looks over them every :data:`TICK` seconds (or a
tenth of the shortest timeout): a request gets its whole ``--timeout`` and at
most a tick more.

An expired request is cancelled the way ``asyncio.timeout`` does it, and
told apart the same way: :meth:`Deadline.expired_here` is true only if the
watch cancelled the task and nothing else asked to cancel it since, so a
cancellation from outside (Ctrl-C, a task group ending) still cancels.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import anyio
import httpx

TICK = 0.1


class Deadline:
    """One request's deadline: when it ends, and whether the watch has ended it."""

    __slots__ = ("cancelling", "expired", "task", "when")

    def __init__(self, task: asyncio.Task[object], when: float) -> None:
        self.task = task
        self.when = when
        self.expired = False
        self.cancelling = task.cancelling()

    def extend(self, seconds: float) -> None:
        """Give back ``seconds`` (work of the crawler's own while the request travelled)."""
        self.when += seconds

    def expired_here(self) -> bool:
        """Called on ``CancelledError``: was it this deadline's, and only its? Then the
        cancellation is consumed (a timeout, not a cancelled task)."""
        return self.expired and self.task.uncancel() <= self.cancelling


class Deadlines:
    """The deadlines of one event loop's requests."""

    def __init__(self) -> None:
        self._active: dict[Deadline, None] = {}
        self._watch: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the watch's
        self._tick = TICK

    def start(self, seconds: float) -> Deadline:
        """A deadline ``seconds`` from now for the running task."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None, "a deadline belongs to a task"
        deadline = Deadline(task, loop.time() + seconds)
        self._active[deadline] = None
        if seconds / 10 < self._tick:
            self._tick = max(seconds / 10, 0.001)
            if self._watch is not None:  # a shorter timeout than any before: look sooner
                self._watch.cancel()
                self._watch = None
        if self._watch is None or self._loop is not loop:  # not armed, or on a loop gone
            self._watch, self._loop = loop.call_later(self._tick, self._look), loop
        return deadline

    def stop(self, deadline: Deadline) -> None:
        """The request is over, answered or not."""
        self._active.pop(deadline, None)

    def _look(self) -> None:
        self._watch = None
        if not self._active:
            return  # armed again by the next request
        loop = asyncio.get_running_loop()
        now = loop.time()
        for deadline in [d for d in self._active if d.when <= now]:
            del self._active[deadline]
            deadline.expired = True
            deadline.task.cancel()
        if self._active:
            self._watch = loop.call_later(self._tick, self._look)


@contextlib.contextmanager
def total_timeout(seconds: float) -> Iterator[None]:
    """``--external-timeout`` as the total of one request, its body included: httpx
    times each read, so an origin sending a byte every few seconds never trips it.
    Past it, the request fails as any timeout does (``httpx.TimeoutException``)."""
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError as exc:
        raise httpx.ReadTimeout(f"no whole answer within {seconds:g} s") from exc
