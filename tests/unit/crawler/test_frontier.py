from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.core.records import Verdict
from crawler.frontier.frontier import Frontier, trap_reason
from crawler.frontier.job import Job


@pytest.mark.parametrize(("url", "reason"), [
    ("http://h/" + "a" * 2030, None),
    ("http://h/" + "a" * 2040, Verdict.URL_TOO_LONG),
    ("http://h/a/b/a/b/a/b/", None),
    ("http://h/a/b/a/b/a/b/a/", Verdict.REPEATED_SEGMENT),
    ("http://h/cal/2024/01/2024/01/2024/01/2024/", Verdict.REPEATED_SEGMENT),
])
def test_trap_reason(url: str, reason: Verdict | None) -> None:
    path = "/" + url.partition("://")[2].partition("/")[2]
    assert trap_reason(url, path) is reason


@given(st.lists(st.sampled_from(["a", "b", "c", "2024", "01"]), max_size=12))
def test_a_path_is_a_trap_when_one_segment_comes_more_than_three_times(
        segments: list[str]) -> None:
    """However the repeats are found, the rule is the count of the commonest segment."""
    path = "/".join(segments)
    repeated = bool(segments) and Counter(segments).most_common(1)[0][1] > 3
    assert (trap_reason("http://h/" + path, path) is Verdict.REPEATED_SEGMENT) == repeated


def test_fifo_order_and_seen_once() -> None:
    frontier = Frontier()
    for url in ("http://h/a", "http://h/b", "http://h/a"):
        if frontier.first_sight(url):
            assert frontier.offer(Job(url, 1)) is None
    assert [frontier.pop(), frontier.pop(), frontier.pop()] == [
        Job("http://h/a", 1), Job("http://h/b", 1), None]


def test_depth_budget() -> None:
    frontier = Frontier(max_depth=2)
    assert frontier.offer(Job("http://h/2", 2)) is None
    assert frontier.offer(Job("http://h/3", 3)) is Verdict.MAX_DEPTH


def test_page_budget_stops_popping_and_drains_the_rest() -> None:
    frontier = Frontier(max_pages=2)
    for n in range(4):
        frontier.offer(Job(f"http://h/{n}", 1))
    assert frontier.pop() is not None
    assert frontier.pop() is not None
    assert frontier.pop() is None
    assert [job.url for job in frontier.drain()] == ["http://h/2", "http://h/3"]


def test_query_variants_per_path() -> None:
    frontier = Frontier(max_query_variants=3)
    verdicts = [frontier.offer(Job(f"http://h/cal?d={n}", 1)) for n in range(5)]
    assert verdicts == [None, None, None, Verdict.QUERY_VARIANTS, Verdict.QUERY_VARIANTS]
    assert frontier.offer(Job("http://h/other?d=1", 1)) is None


def test_redirect_chain_budget() -> None:
    frontier = Frontier(max_redirects=10)
    assert frontier.offer(Job("http://h/r10", 0, hops=10)) is None
    assert frontier.offer(Job("http://h/r11", 0, hops=11)) is Verdict.REDIRECT_LIMIT
