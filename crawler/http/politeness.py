"""When the next request to the host may start — the one pacing decision.

Every request passes :meth:`Gate.wait`. The gate spaces request *starts* by
the larger of ``--delay``, ``1/--rate`` and robots.txt ``Crawl-delay`` (counted
from when the previous request really left, not when it was due), and
adds an adaptive penalty while the server answers 429/503, so a struggling
server sees the whole crawl slow down, not just one URL retried. The state is
touched only between awaits on one event loop, so it needs no lock.
"""

from __future__ import annotations

import anyio

MAX_PENALTY = 30.0


class Gate:
    def __init__(self, *, rate: float | None = None, delay: float = 0.0) -> None:
        self.interval = max(delay, 1.0 / rate if rate else 0.0)
        self.penalty = 0.0
        self._next_start = 0.0
        # waiters leave one at a time, in order; made by the first wait that needs it
        # (anyio's lock loads its event-loop machinery, not needed before the first
        # request of a crawl without --delay or --rate)
        self._turns: anyio.Lock | None = None

    def raise_interval(self, seconds: float) -> None:
        """Never start requests closer together than ``seconds`` (Crawl-delay)."""
        self.interval = max(self.interval, seconds)

    async def wait(self) -> None:
        """Return when this request may start. Waiters leave one at a time, and the
        next start is counted from when this one really left: a loop too busy to
        wake a waiter on time must not let the next request follow it closer than
        the spacing (as slots booked in advance would), and a back-off arriving
        while one waits holds it too."""
        if self.interval + self.penalty <= 0 and (
                not self._next_start or self._next_start <= anyio.current_time()):
            return  # never held back: no clock, no lock (the common case)
        if self._turns is None:
            self._turns = anyio.Lock()
        async with self._turns:
            while (now := anyio.current_time()) < self._next_start:
                await anyio.sleep(self._next_start - now)
            self._next_start = anyio.current_time() + self.interval + self.penalty

    def holds(self) -> bool:
        """Whether a request starting now could be held back (``--workers``: only
        then do worker processes ask this gate before each request)."""
        return bool(self.interval or self.penalty or self._next_start > anyio.current_time())

    def back_off(self, pause: float) -> None:
        """The server is overloaded: hold every request for ``pause`` s and slow down."""
        self._next_start = max(self._next_start, anyio.current_time() + pause)
        self.penalty = min(MAX_PENALTY, max(0.25, self.penalty * 2))

    def recover(self) -> None:
        """A healthy answer: let the penalty decay towards none."""
        if self.penalty:
            self.penalty = self.penalty / 2 if self.penalty > 0.01 else 0.0
