from __future__ import annotations

import tracemalloc

import pytest

from crawler.config import CrawlConfig
from crawler.core.records import SkippedUrl, Verdict
from crawler.engine import coordinator as engine
from crawler.engine.result import CrawlResult
from crawler.frontier.outside import EXACT_UP_TO, SAMPLE_SIZE, OutsideLinks
from crawler.urls.robots import allow_all
from crawler.urls.scope import Scope


def test_small_sets_are_exact_and_complete() -> None:
    links = OutsideLinks()
    added = [links.add(f"https://x{i}.test/", 1, Verdict.EXTERNAL) for i in range(300)]
    again = [links.add(f"https://x{i}.test/", 2, Verdict.EXTERNAL) for i in range(300)]
    assert all(item is not None for item in added) and not any(again)
    assert links.counts() == {"external": {"urls": 300, "estimated": False, "in_report": 300}}


def test_sets_past_the_sample_are_counted_exactly_up_to_a_bound() -> None:
    """The PostgreSQL docs link 1,675 other URLs: past the sample of 1,000 the count
    must still be exact, as the audit's link checks count them."""
    links = OutsideLinks()
    for i in range(EXACT_UP_TO):
        links.add(f"https://x{i}.test/a", 1, Verdict.EXTERNAL)
        links.add(f"https://x{i}.test/a", 2, Verdict.EXTERNAL)  # again: once
    assert links.counts()["external"] == {"urls": EXACT_UP_TO, "estimated": False,
                                          "in_report": SAMPLE_SIZE}
    links.add("https://one-more.test/", 1, Verdict.EXTERNAL)
    assert links.counts()["external"]["estimated"] is True


def test_the_three_numbers_links_and_pages_are_counted_apart() -> None:
    links = OutsideLinks()
    for _page in range(3):
        for i in range(5):
            links.add(f"https://x{i}.test/", 1, Verdict.EXTERNAL)
        links.page_links(5)
    links.page_links(0)  # a page with no link out
    assert links.totals() == {"urls": 5, "estimated": False, "links": 15, "pages": 3}
    again = OutsideLinks()
    again.load(links.dump())
    assert (again.links, again.pages) == (15, 3)


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
    # the exact count past the sample is not kept in the state: a resumed run estimates
    kept, resumed = first.counts()["other-host-same-site"], \
        second.counts()["other-host-same-site"]
    assert kept == {"urls": 5000, "estimated": False, "in_report": SAMPLE_SIZE}
    assert resumed["estimated"] is True and resumed["in_report"] == SAMPLE_SIZE
    assert abs(resumed["urls"] - 5000) / 5000 < 0.05, resumed


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
    warm = EXACT_UP_TO + 1000
    for url in urls[:warm]:  # warm up: the sample fills, the exact count gives way to
        coordinator.consider(url, 1)  # the sketch, caches reach their bound
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for url in urls[warm:]:
        coordinator.consider(url, 1)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 256 * 1024, f"{grown / 1e6:.1f} MB kept for 79,000 external URLs"
    assert len(result.skipped) == SAMPLE_SIZE
    coordinator.result.outside = coordinator.outside.counts()
    assert abs(result.outside["external"]["urls"] - 100_000) < 5000


def test_the_three_numbers_read_in_the_singular_and_the_plural() -> None:
    from crawler.core.counts import external_words

    assert external_words({"urls": 1, "links": 2, "pages": 1, "estimated": False}) == (
        "1 external URL, 2 links to it, on 1 page")
    assert external_words({"urls": 120_000, "links": 1, "pages": 1, "estimated": True}) == (
        "about 120,000 external URLs, 1 link to them, on 1 page")


def test_the_skipped_line_reads_in_the_singular_too() -> None:
    from crawler.cli.sitemaps import skipped_words

    assert skipped_words({"external": 1, "other-host-same-site": 2}) == (
        "2 links to other hosts of the site (other-host-same-site), "
        "1 link to other sites (external)")
