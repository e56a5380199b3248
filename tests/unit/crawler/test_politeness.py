"""The pacing gate, on anyio's clock (real time, small intervals)."""

from __future__ import annotations

import time
from itertools import pairwise

import anyio

from crawler.http.politeness import Gate


def starts(gate: Gate, n: int) -> list[float]:
    times: list[float] = []

    async def go() -> None:
        async def one() -> None:
            await gate.wait()
            times.append(anyio.current_time())

        async with anyio.create_task_group() as group:
            for _ in range(n):
                group.start_soon(one)

    anyio.run(go)
    return sorted(times)


def test_unlimited_gate_does_not_wait() -> None:
    times = starts(Gate(), 5)
    assert times[-1] - times[0] < 0.05


def test_delay_and_rate_space_request_starts() -> None:
    for gate, gap in ((Gate(delay=0.05), 0.05), (Gate(rate=20), 0.05)):
        assert min(b - a for a, b in pairwise(starts(gate, 4))) >= gap - 0.005


def test_crawl_delay_only_raises_the_interval() -> None:
    gate = Gate(delay=0.2)
    gate.raise_interval(0.1)
    assert gate.interval == 0.2
    gate.raise_interval(0.3)
    assert gate.interval == 0.3


def test_back_off_pauses_everyone_then_recovers() -> None:
    gate = Gate()

    async def go() -> float:
        gate.back_off(0.2)
        started = anyio.current_time()
        await gate.wait()
        return anyio.current_time() - started

    assert anyio.run(go) >= 0.19
    assert gate.penalty > 0
    for _ in range(20):
        gate.recover()
    assert gate.penalty == 0


def test_the_gate_holds_while_anything_spaces_or_pauses_requests() -> None:
    async def main() -> list[bool]:
        free, spaced, paused = Gate(), Gate(delay=0.5), Gate()
        paused.back_off(0.2)
        seen = [free.holds(), spaced.holds(), paused.holds()]
        await anyio.sleep(0.25)
        paused.recover()
        paused.penalty = 0.0
        return [*seen, paused.holds()]

    assert anyio.run(main) == [False, True, True, False]


def test_a_late_waker_does_not_let_the_next_start_sooner_than_the_delay() -> None:
    """A busy event loop wakes a waiting request late: the next one must still keep
    its distance from when that request really left, not from when it was due."""
    gate = Gate(delay=0.1)
    left: list[float] = []

    async def go() -> None:
        async def one() -> None:
            await gate.wait()
            left.append(anyio.current_time())

        async def busy() -> None:
            await anyio.sleep(0.05)
            time.sleep(0.135)  # the loop blocked past the second request's turn

        async with anyio.create_task_group() as group:
            group.start_soon(busy)
            for _ in range(3):
                group.start_soon(one)

    anyio.run(go)
    assert min(b - a for a, b in pairwise(sorted(left))) >= 0.099


def test_a_back_off_while_waiting_is_not_forgotten() -> None:
    gate = Gate(delay=0.05)
    left: list[float] = []

    async def go() -> float:
        started = anyio.current_time()

        async def one() -> None:
            await gate.wait()
            left.append(anyio.current_time() - started)

        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(one)
            await anyio.sleep(0.01)
            gate.back_off(0.3)  # the second is asleep until 0.05: it must now wait on
        return started

    anyio.run(go)
    assert sorted(left)[1] >= 0.29
