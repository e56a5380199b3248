"""The frontier's queue keeps a list's order whether its jobs wait in memory or on disk."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from crawler.frontier.frontier import Frontier
from crawler.frontier.job import Job
from crawler.frontier.job_queue import JobQueue


@pytest.mark.parametrize(("keep", "chunk"), [(0, 1), (1, 1), (3, 2), (5, 4), (1000, 10)])
def test_interleaved_appends_and_pops_keep_fifo_order(keep: int, chunk: int, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    rng = random.Random(keep * 31 + chunk)
    queue, model = JobQueue(keep=keep, chunk=chunk), []
    made = 0
    for _ in range(2_000):
        if model and rng.random() < 0.45:
            assert queue.popleft() == model.pop(0)
        else:
            job = Job(f"http://s.test/{made}", made % 7, hops=made % 2,
                      chain=(f"http://s.test/r{made}",) if made % 5 == 0 else ())
            made += 1
            queue.append(job)
            model.append(job)
        assert len(queue) == len(model)
        assert bool(queue) is bool(model)
    assert list(queue) == model
    assert list(tmp_path.iterdir()) == []  # the spill file is unlinked when made
    while model:
        assert queue.popleft() == model.pop(0)
    with pytest.raises(IndexError):
        queue.popleft()
    queue.close()


def test_a_long_queue_keeps_only_its_head_in_memory() -> None:
    queue = JobQueue(keep=100, chunk=50)
    for number in range(10_000):
        queue.append(Job(f"http://s.test/{number}", 1))
    assert len(queue._head) + len(queue._tail) <= 150
    assert [queue.popleft().url for _ in range(10_000)] == [
        f"http://s.test/{number}" for number in range(10_000)]


def test_the_frontier_remembers_urls_past_the_exact_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEMAP_CRAWLER_URLS_KEPT_EXACTLY", "10")
    frontier = Frontier()
    urls = [f"http://s.test/{number}" for number in range(100)]
    assert all(frontier.first_sight(url) for url in urls)
    assert not any(frontier.first_sight(url) for url in urls)
    assert all(frontier.seen(url) for url in urls)
    assert not frontier.seen("http://s.test/new")
    # at the limit every URL moves to the hashed set, the ten kept as text too
    assert len(frontier._seen) == 0 and len(frontier._hashed) == 100
    frontier.restore("http://s.test/restored")
    assert frontier.seen("http://s.test/restored")
    assert not frontier.first_sight("http://s.test/restored")
