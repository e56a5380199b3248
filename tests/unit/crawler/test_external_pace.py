"""An external origin's adaptive pace (crawler.http.external_pace): polite at first,
quicker while answers stay fast, slower on 429/503 and slow answers — pure arithmetic."""

from __future__ import annotations

import time

import pytest

from crawler.http.external_pace import LONGEST_INTERVAL, Pace


def test_the_pace_starts_polite_and_rises_to_its_ceiling_while_answers_are_fast() -> None:
    pace = Pace(rate=1.0, max_rate=10.0)
    assert pace.interval == 1.0
    intervals = []
    for _ in range(20):
        pace.answered(0.05, 200)
        intervals.append(pace.interval)
    assert intervals[0] == pytest.approx(0.8)
    assert intervals == sorted(intervals, reverse=True)  # never slower after a fast answer
    assert pace.interval == pytest.approx(0.1)  # the ceiling: ten a second, no more
    assert intervals.index(pace.interval) <= 12  # reached within about a dozen answers


def test_busy_and_slow_answers_slow_it_down_and_retry_after_holds_it() -> None:
    pace = Pace(rate=1.0, max_rate=10.0)
    for _ in range(20):
        pace.answered(0.05, 200)
    pace.answered(0.05, 429)
    assert pace.interval == pytest.approx(0.2)
    pace.answered(5.0, 200)  # slower than SLOW_ANSWER
    assert pace.interval == pytest.approx(0.3)
    pace.answered(2.0, 200)  # neither fast nor slow: unchanged
    assert pace.interval == pytest.approx(0.3)
    for _ in range(50):
        pace.answered(0.0, 503)
    assert pace.interval == LONGEST_INTERVAL
    pace.answered(0.01, None)  # no answer at all: slower, never faster
    assert pace.interval == LONGEST_INTERVAL
    before = time.monotonic()
    pace.hold(30)
    assert pace.next_start >= before + 30


def test_a_rate_above_the_ceiling_is_kept_and_the_estimate_follows_the_pace() -> None:
    pace = Pace(rate=20.0, max_rate=10.0)  # --external-rate above --external-max-rate
    pace.answered(0.01, 200)
    assert pace.interval == pytest.approx(0.05)
    assert Pace(rate=2.0, max_rate=10.0).eta(10) == pytest.approx(5.0)
