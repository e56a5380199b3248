"""The seen set past 100,000 URLs: at most 16 bytes a URL, no doubling spike, exact."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from crawler.frontier.frontier import Frontier
from crawler.frontier.seen_hashes import SeenHashes, key_of

MB = 1_000_000


def _url(n: int) -> str:
    return f"https://www.example.com/section-{n % 97}/topic-{n // 97}/page-{n}.html"


@pytest.mark.slow(24)  # tracemalloc traces the counters' ints: 10 times slower
# a guard against a hang, not a speed limit: on a machine busy with a benchmark (two
# crawls of ten million pages) the 24 s took more than the suite's usual 60 s
@pytest.mark.timeout(300)
def test_a_million_urls_in_20_mb_two_million_without_a_40_mb_peak_exactly() -> None:
    keys = [key_of(_url(n)) for n in range(2_000_000)]  # made before memory is traced
    tracemalloc.start()
    seen = SeenHashes()
    for key in keys[:1_000_000]:
        assert seen.add(key)
    held = tracemalloc.get_traced_memory()[0]
    assert held <= 20 * MB, f"{held / MB:.1f} MB for a million URLs"
    tracemalloc.reset_peak()
    for key in keys[1_000_000:]:
        seen.add(key)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= 40 * MB, f"{peak / MB:.1f} MB at the peak of two million"
    assert len(seen) == 2_000_000 and seen.nbytes <= 16 * 2_000_000
    # membership exactly as a Python set answers it, for seen and unseen URLs alike
    truth = set(keys)
    rng = random.Random(20261129)
    for n in (rng.randrange(4_000_000) for _ in range(20_000)):
        key = keys[n] if n < 2_000_000 else key_of(_url(n))
        assert (key in seen) == (key in truth) == (n < 2_000_000)
    assert not seen.add(keys[12345])  # seen again: not new


def test_the_frontier_keeps_text_then_hashes_and_never_forgets(monkeypatch) -> None:
    monkeypatch.setenv("SITEMAP_CRAWLER_URLS_KEPT_EXACTLY", "1000")
    frontier = Frontier()
    assert all(frontier.first_sight(_url(n)) for n in range(5000))
    assert not any(frontier.first_sight(_url(n)) for n in range(5000))
    assert all(frontier.seen(_url(n)) for n in range(0, 5000, 7))
    assert not frontier.seen(_url(5001))


def test_a_url_added_by_its_text_is_the_key_added_by_its_hash() -> None:
    by_text, by_key = SeenHashes(), SeenHashes()
    urls = [_url(n) for n in range(20_000)]
    assert [by_text.add_text(url) for url in urls] == [by_key.add(key_of(url)) for url in urls]
    assert not any(by_text.add_text(url) for url in urls)
    assert all(key_of(url) in by_text for url in urls) and len(by_text) == 20_000
    assert [by_text.add_text(url) for url in ("new", "new")] == [True, False]


def test_a_counting_set_counts_beside_each_key_through_its_growth() -> None:
    counts = SeenHashes(counting=True)
    keys = [key_of(_url(n)) for n in range(50_000)]
    for times, key in enumerate(keys):
        for _ in range(times % 4 + 1):
            counts.increment(key)
    assert len(counts) == 50_000 and counts.nbytes <= 24 * 50_000
    assert [counts.count(key) for key in keys[:8]] == [1, 2, 3, 4, 1, 2, 3, 4]
    assert counts.count(key_of(_url(99_999_999))) == 0


def test_query_variants_are_counted_a_path_without_its_text() -> None:
    from crawler.core.records import Verdict
    from crawler.frontier.job import Job

    frontier = Frontier(max_query_variants=3)
    offered = [frontier.offer(Job(f"https://x.test/list?page={n}", 1)) for n in range(5)]
    assert offered == [None, None, None, Verdict.QUERY_VARIANTS, Verdict.QUERY_VARIANTS]
    assert frontier.offer(Job("https://x.test/other?page=1", 1)) is None
