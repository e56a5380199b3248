"""The watch over requests' deadlines: a timeout where one is due, and nowhere else."""

from __future__ import annotations

import asyncio
import time

import pytest

from crawler.http.deadlines import Deadlines


async def _wait_out(deadlines: Deadlines, seconds: float, sleep: float = 5.0) -> tuple[str, float]:
    """What a request of ``sleep`` seconds under a ``seconds`` deadline comes to."""
    started = time.monotonic()
    deadline = deadlines.start(seconds)
    try:
        await asyncio.sleep(sleep)
        outcome = "answered"
    except asyncio.CancelledError:
        if not deadline.expired_here():
            raise
        outcome = "timeout"
    finally:
        deadlines.stop(deadline)
    return outcome, time.monotonic() - started


def test_a_request_past_its_deadline_is_a_timeout_within_a_tick() -> None:
    async def main() -> None:
        deadlines = Deadlines()
        outcome, took = await _wait_out(deadlines, 0.3)
        assert outcome == "timeout"
        assert 0.3 <= took < 0.3 + 0.03 + 0.1, took  # a tick is a tenth of the timeout
        outcome, took = await _wait_out(deadlines, 1.0, sleep=0.05)
        assert outcome == "answered" and took < 0.5
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]

    asyncio.run(main())


def test_requests_end_each_at_their_own_deadline() -> None:
    """A short timeout after a long one is watched as closely as it needs; a
    request answered in time is never cancelled, however many expire around it."""
    async def main() -> None:
        deadlines = Deadlines()
        results = await asyncio.gather(_wait_out(deadlines, 10.0, sleep=0.4),
                                       _wait_out(deadlines, 0.1),
                                       _wait_out(deadlines, 0.2, sleep=0.05),
                                       _wait_out(deadlines, 0.25))
        assert [outcome for outcome, _ in results] == ["answered", "timeout", "answered",
                                                        "timeout"]
        assert results[1][1] < 0.1 + 0.05 and results[3][1] < 0.25 + 0.05, results
        await asyncio.sleep(0.05)
        assert deadlines._watch is None  # nothing in flight: no timer left on the loop

    asyncio.run(main())


def test_a_cancellation_from_outside_is_never_taken_for_a_timeout() -> None:
    async def main() -> None:
        deadlines = Deadlines()
        request = asyncio.ensure_future(_wait_out(deadlines, 5.0))
        await asyncio.sleep(0.05)
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request
        # both at once: the watch ends the request, and someone cancels its task besides
        both = asyncio.ensure_future(_wait_out(deadlines, 0.01))
        await asyncio.sleep(0)  # the request is in flight
        time.sleep(0.02)  # its deadline passes
        deadlines._look()  # the watch's turn comes
        both.cancel()
        with pytest.raises(asyncio.CancelledError):
            await both

    asyncio.run(main())


def test_time_given_back_moves_the_deadline() -> None:
    async def main() -> None:
        deadlines = Deadlines()
        deadline = deadlines.start(0.2)
        # moved far: a loaded machine (CI, the browser tests beside it) woke a 0.35 s
        # sleep more than 0.15 s late, past a deadline moved by 0.3 s only
        deadline.extend(3.0)
        try:
            await asyncio.sleep(0.35)  # past the first deadline, within the moved one
        finally:
            deadlines.stop(deadline)
        assert not deadline.expired

    asyncio.run(main())
