"""The soft-404 probes asked as the crawl goes: one in each directory, within a budget.

The fetcher here is a stand-in that records what it is asked; the same probes
over a socket are in tests/e2e/test_soft_404.py."""

from __future__ import annotations

import anyio
import pytest

from crawler.core.response import Response
from crawler.engine.result import CrawlResult
from crawler.engine.soft_404 import (
    DIRECTORY_BUDGET,
    DirectoryProbes,
    ProbeSite,
    probe_directory,
    probe_ending,
)
from crawler.urls.robots import RobotsMode, RobotsPolicy
from crawler.urls.scope import Scope

START = "http://s.test/"
NOT_FOUND = (b"<!doctype html><title>Shop</title><p>We could not find that one in the "
             b"shop. Browse the catalogue or write to us, we answer every letter.</p>")


class _Fetcher:
    """Answers every URL 200 with the same page, after a turn of the loop."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def fetch(self, url: str, **_options: object) -> Response:
        self.asked.append(url)
        await anyio.sleep(0.01)
        return Response(url=url, status=200, content_type="text/html", body=NOT_FOUND)


def _probes(mode: RobotsMode = RobotsMode.ALLOW_ALL) -> tuple[DirectoryProbes, _Fetcher]:
    fetcher = _Fetcher()
    site = ProbeSite(fetcher, Scope.for_start(START, None),  # type: ignore[arg-type]
                     RobotsPolicy(mode, "sitemap-crawler"), START, "sitemap-crawler-probe-x")
    return DirectoryProbes(site, CrawlResult(START)), fetcher


@pytest.mark.parametrize(("url", "directory"), [
    ("http://s.test/", "http://s.test/"),
    ("http://s.test/a.html", "http://s.test/"),
    ("http://s.test/shop/", "http://s.test/shop/"),
    ("http://s.test/shop/cups.html?x=/y/z", "http://s.test/shop/"),
    ("http://s.test/blog/2024/05/post.html", "http://s.test/blog/2024/"),
])
def test_a_pages_probe_directory_is_its_own_cut_to_two_levels(url: str, directory: str
                                                              ) -> None:
    assert probe_directory(url) == directory


@pytest.mark.parametrize(("url", "ending"), [
    ("http://s.test/shop/cups.html", ".html"), ("http://s.test/wiki/page.php?id=1", ".php"),
    ("http://s.test/shop/", ""), ("http://s.test/shop/cups", ""),
    ("http://s.test/v1.2/notes", ""), ("http://s.test/a/b.tar-gz-and-more", ""),
])
def test_a_probe_ends_as_the_page_that_asked_for_it(url: str, ending: str) -> None:
    assert probe_ending(url) == ending


def test_one_probe_a_directory_and_pages_fetched_meanwhile_wait_for_it() -> None:
    probes, fetcher = _probes()

    async def main() -> list[object]:
        answers: list[object] = []

        async def page(url: str) -> None:
            answers.append(await probes.answer_for(url))

        async with anyio.create_task_group() as group:
            for name in ("cups.html", "pots.html", "kettles.html"):
                group.start_soon(page, f"http://s.test/shop/{name}")
        return answers

    answers = anyio.run(main)
    assert fetcher.asked == ["http://s.test/shop/sitemap-crawler-probe-x.html"]
    assert len(answers) == 3 and all(answer is answers[0] for answer in answers)
    assert answers[0] is not None and answers[0].title == "Shop"  # type: ignore[attr-defined]
    # settled: the next page of the folder is answered by a lookup, with no await
    assert probes.settled == {"http://s.test/shop/": answers[0]}
    assert probes.result.soft_404_probes == [{
        "url": "http://s.test/shop/sitemap-crawler-probe-x.html", "status": 200,
        "answer": "a page, compared"}]


def test_the_start_directories_are_never_asked_again_and_the_budget_holds() -> None:
    probes, fetcher = _probes()

    async def main() -> None:
        assert await probes.answer_for("http://s.test/about.html") is None  # asked at start
        for number in range(DIRECTORY_BUDGET + 5):
            await probes.answer_for(f"http://s.test/d{number}/page")

    anyio.run(main)
    assert len(fetcher.asked) == DIRECTORY_BUDGET
    # past the budget a folder is settled too: no probe will ever be asked there
    assert f"http://s.test/d{DIRECTORY_BUDGET + 4}/" in probes.settled
    assert fetcher.asked[0] == "http://s.test/d0/sitemap-crawler-probe-x"


def test_a_probe_robots_txt_disallows_is_named_and_never_asked() -> None:
    probes, fetcher = _probes(RobotsMode.DISALLOW_ALL)
    assert anyio.run(probes.answer_for, "http://s.test/shop/cups.html") is None
    assert fetcher.asked == []
    assert probes.result.soft_404_probes[0]["answer"] == "not asked: robots.txt disallows it"
