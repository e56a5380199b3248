from __future__ import annotations

import tracemalloc

import pytest

from crawler.config import CrawlConfig
from crawler.core.records import SkippedUrl, Verdict
from crawler.engine import coordinator as engine
from crawler.engine.result import CrawlResult
from crawler.frontier.outside import SAMPLE_SIZE, OutsideLinks
from crawler.urls.robots import allow_all
from crawler.urls.scope import Scope


def test_small_sets_are_exact_and_complete() -> None:
    links = OutsideLinks()
    added = [links.add(f"https://x{i}.test/", 1, Verdict.EXTERNAL) for i in range(300)]
    again = [links.add(f"https://x{i}.test/", 2, Verdict.EXTERNAL) for i in range(300)]
    assert all(item is not None for item in added) and not any(again)
    assert links.counts() == {"external": {"urls": 300, "estimated": False, "in_report": 300}}


def test_large_sets_keep_a_bounded_sample_and_an_estimate() -> None:
    links = OutsideLinks()
    n = 100_000
    rows = sum(links.add(f"https://h{i % 5000}.test/p{i}", 1, Verdict.EXTERNAL) is not None
               for i in range(n))
    for i in range(0, n, 7):  # seen again: counted once
        links.add(f"https://h{i % 5000}.test/p{i}", 1, Verdict.EXTERNAL)
    counted = links.counts()["external"]
    assert rows == counted["in_report"] == SAMPLE_SIZE
    assert counted["estimated"] is True
    assert abs(counted["urls"] - n) / n < 0.05, counted


def test_sketches_survive_the_state_round_trip() -> None:
    first = OutsideLinks()
    for i in range(5000):
        first.add(f"https://h{i}.test/", 1, Verdict.OTHER_HOST)
    second = OutsideLinks()
    second.load(first.dump())
    for i in range(SAMPLE_SIZE):
        second.restore(SkippedUrl(f"https://h{i}.test/", 1, Verdict.OTHER_HOST))
    assert second.counts() == first.counts()


@pytest.mark.slow(13)
def test_a_page_with_100000_external_links_costs_kilobytes() -> None:
    """The coordinator's whole handling of out-of-scope links (seen set, skipped list,
    classification), measured by allocation: it used to hold every URL (about 20 MB
    for these); now a bounded sample and sketches."""
    start = "http://site.test/"
    scope = Scope.for_start(start)
    result = CrawlResult(start)
    coordinator = engine._Coordinator(engine.SiteRules(CrawlConfig(start_url=start), scope,
                                                       allow_all("x")),
                                      None, result)  # type: ignore[arg-type]
    urls = [f"https://h{i}.example/articles/{i:06d}-a-reasonably-long-slug.html"
            for i in range(100_000)]
    for url in urls[:2000]:  # warm up: the sample fills, caches reach their bound
        coordinator.consider(url, 1)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for url in urls[2000:]:
        coordinator.consider(url, 1)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 256 * 1024, f"{grown / 1e6:.1f} MB kept for 98,000 external URLs"
    assert len(result.skipped) == SAMPLE_SIZE
    coordinator.result.outside = coordinator.outside.counts()
    assert abs(result.outside["external"]["urls"] - 100_000) < 5000
