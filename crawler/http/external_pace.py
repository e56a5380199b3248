"""How fast the external check asks one other origin: polite at first, quicker while
its answers stay fast, slower the moment it says it is busy.

A fixed rate was either rude or slow: at one request a second, the 1,457 links the
PostgreSQL docs hold to one mailing-list archive took 24 minutes, and a rate high
enough for that is too high for a small server. So each origin's pace adapts,
the way TCP's congestion control does, multiplicatively both ways:

* it starts at ``--external-rate`` (one request a second);
* each answer within :data:`FAST_ANSWER` shortens the interval by :data:`SPEED_UP`,
  down to the interval of ``--external-max-rate``;
* an answer slower than :data:`SLOW_ANSWER` lengthens it by :data:`SLOW_DOWN`; a
  429 or 503 doubles it, and its ``Retry-After`` (capped) holds every request to
  that origin until then;
* at most :data:`CONNECTIONS` requests are in flight to it at once, and more
  than one only while its answers take a quarter of the interval or longer (a
  far server): while they come quicker, one connection keeps the pace, and the
  next request waits an interval from the last answer.

Requests leave one interval apart whatever the number of connections, so the
rate an origin sees is never above the pace, and it reaches ten a second only
after about a dozen fast answers in a row.
"""

from __future__ import annotations

import time

import anyio

CONNECTIONS = 4  # requests in flight to one origin at most
FAST_ANSWER = 1.0  # seconds: an answer this quick lets the pace rise
SLOW_ANSWER = 3.0  # seconds: an answer this slow makes it fall
SPEED_UP = 0.8  # the interval's factor after a fast answer
SLOW_DOWN = 1.5  # after a slow one
BUSY = 2.0  # after a 429 or 503
LONGEST_INTERVAL = 10.0  # seconds between two requests to one origin, at most


class Pace:
    """One origin's pace: when its next request may leave, and how that changes."""

    def __init__(self, rate: float, max_rate: float) -> None:
        self.interval = 1 / rate
        self.shortest = 1 / max(max_rate, rate)
        self.next_start = 0.0
        self._turns = anyio.Lock()  # who leaves next

    async def wait_turn(self) -> float:
        """Until this request may leave; returns when it left (monotonic seconds)."""
        async with self._turns:
            while (now := time.monotonic()) < self.next_start:
                await anyio.sleep(self.next_start - now)
            self.next_start = now + self.interval
            return now

    def answered(self, took: float, status: int | None, alone: bool = False) -> None:
        """Adapt to an answer that took ``took`` seconds (status None: none came).
        ``alone``: it was the only request in flight, and the next one leaves an
        interval after this answer, as the crawl's own gate does."""
        if status in (429, 503):
            self.interval = min(self.interval * BUSY, LONGEST_INTERVAL)
        elif status is not None and took <= FAST_ANSWER:
            self.interval = max(self.interval * SPEED_UP, self.shortest)
        elif status is None or took >= SLOW_ANSWER:
            self.interval = min(self.interval * SLOW_DOWN, LONGEST_INTERVAL)
        if alone:
            self.next_start = max(self.next_start, time.monotonic() + self.interval)

    def hold(self, seconds: float) -> None:
        """No request before ``seconds`` from now (a ``Retry-After``)."""
        self.next_start = max(self.next_start, time.monotonic() + seconds)

    def eta(self, left: int) -> float:
        """Seconds the origin's ``left`` requests take at the present pace."""
        return left * self.interval
