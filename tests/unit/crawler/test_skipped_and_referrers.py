"""Skipped URLs and who links where: on disk past a threshold, with the same answers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from crawler.core.records import SkippedUrl, Verdict
from crawler.store.referrers import FOUND_ON, Referrers
from crawler.store.skipped_store import SkippedStore


@pytest.mark.parametrize("keep", [0, 2, 100])
def test_skipped_urls_answer_alike_on_disk(keep: int, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    items = [SkippedUrl("http://s.test/z", 1, Verdict.DISALLOWED),
             SkippedUrl("http://s.test/\u00e9", 2, Verdict.EXCLUDED),
             SkippedUrl("http://s.test/a", 3, Verdict.MAX_DEPTH),
             SkippedUrl("http://s.test/\udcff", 1, Verdict.DISALLOWED),
             SkippedUrl("http://s.test/z", 4, Verdict.MAX_PAGES)]
    store = SkippedStore(keep=keep)
    for item in items:
        store.append(item)
    assert store.spilled is (keep < len(items))
    assert list(tmp_path.iterdir()) == []  # unlinked once open
    assert len(store) == 5 and bool(store) and not SkippedStore(keep=keep)
    assert list(store) == items
    assert list(store.by_url()) == sorted(items, key=lambda item: item.url)
    assert store.reason("http://s.test/z") is Verdict.MAX_PAGES  # the last reason given
    assert store.reason("http://s.test/\udcff") is Verdict.DISALLOWED
    assert store.reason("http://s.test/never") is None
    store.close()


def _page(number: int) -> str:
    return f"http://s.test/p{number:03d}"


def _links(seed: int) -> list[tuple[str, str, str | None]]:
    """A crawl's links: navigation on every page, and a long tail of pages linked once
    or twice, with and without anchor text; the pages in the order a concurrent crawl
    might finish them, not in URL order."""
    rng = random.Random(seed)
    order = list(range(300))
    rng.shuffle(order)
    links = []
    for page in order:
        for target in ("/", "/about", "/contact", f"/p{page + 1}", f"/p{rng.randrange(400)}"):
            anchor = rng.choice([None, "", f"to {target} from {page}"])
            links.append((f"http://s.test{target}", _page(page), anchor))
    return links


@pytest.mark.parametrize("keep", [0, 1, 7, 150])
def test_who_links_where_adds_up_the_same_from_chunks(keep: int) -> None:
    links = _links(keep)
    memory, chunked = Referrers(keep=10**9), Referrers(keep=keep)
    for url, page, anchor in links:
        memory.add(url, page, anchor)
        chunked.add(url, page, anchor)
    assert chunked.spilled and not memory.spilled
    urls = {url for url, _page, _anchor in links} | {"http://s.test/never"}
    for url in sorted(urls):
        assert chunked.entry(url) == memory.entry(url), url
    # a report reads them in URL order, beside its rows: the same entries
    linked = sorted(urls - {"http://s.test/never"})
    assert list(chunked.in_url_order()) == [(url, memory.entry(url)) for url in linked]
    assert list(memory.in_url_order()) == [(url, memory.entry(url)) for url in linked]
    assert memory.entry("http://s.test/never") == (0, [], None)
    chunked.close()


@pytest.mark.parametrize("keep", [0, 7, 10**9])
def test_the_pages_named_are_the_first_five_in_url_order(keep: int) -> None:
    """Whatever order the pages were read in: two runs of one site name the same."""
    for seed in (1, 2):
        links = _links(seed)
        referrers = Referrers(keep=keep)
        for url, page, anchor in links:
            referrers.add(url, page, anchor)
        for url in {url for url, _page, _anchor in links}:
            pages = [page for target, page, _anchor in links if target == url]
            count, first, anchor = referrers.entry(url)
            assert count == len(pages)
            assert first == sorted(set(pages))[:FOUND_ON]
            # the anchor is the one on the first page named, if that link had text
            assert anchor == (next(text for target, page, text in links
                                   if target == url and page == first[0]) or None)
        nav = referrers.entry("http://s.test/about")
        assert nav[0] == 300 and nav[1] == [_page(number) for number in range(FOUND_ON)]
        referrers.close()


def test_two_links_of_one_page_to_one_url_name_the_page_once() -> None:
    referrers = Referrers()
    for page in ("http://s.test/b", "http://s.test/a", "http://s.test/a"):
        referrers.add("http://s.test/x", page, "text " + page[-1])
    assert referrers.entry("http://s.test/x") == (3, ["http://s.test/a", "http://s.test/b"],
                                                  "text a")
