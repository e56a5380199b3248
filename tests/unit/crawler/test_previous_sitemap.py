"""What changed against the sitemap already published: the same in memory and on disk."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from crawler.cli.previous_sitemap import PreviousSitemap
from sitemap_writer import SitemapEntry, write_sitemaps


def _entry(n: int, day: int) -> SitemapEntry:
    return SitemapEntry(f"https://x.test/p{n}", datetime(2026, 11, day, tzinfo=UTC))


@pytest.mark.parametrize("in_memory", [200_000, 2])
def test_added_changed_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   in_memory: int) -> None:
    write_sitemaps([_entry(n, 1) for n in range(5)], out_dir=tmp_path,
                   base_url="https://x.test/", max_urls=2)
    monkeypatch.setattr(PreviousSitemap, "IN_MEMORY", in_memory)
    previous = PreviousSitemap(tmp_path)
    try:
        now = [_entry(1, 1), _entry(2, 9), _entry(3, 1), _entry(7, 1)]
        found = previous.changes(now)
    finally:
        previous.close()
    assert (found.added, found.changed, found.removed) == (
        ["https://x.test/p7"], ["https://x.test/p2"], ["https://x.test/p0", "https://x.test/p4"])


@pytest.mark.parametrize("published", [False, True])
def test_a_sitemap_held_in_memory_opens_no_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  published: bool) -> None:
    """A first run (nothing published) and a sitemap within IN_MEMORY make no temporary
    file: most --state runs never need the table."""
    if published:
        write_sitemaps([_entry(n, 1) for n in range(3)], out_dir=tmp_path,
                       base_url="https://x.test/")

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a temporary table was made")

    monkeypatch.setattr("tempfile.mkstemp", refused)
    previous = PreviousSitemap(tmp_path)
    try:
        found = previous.changes([_entry(1, 1), _entry(5, 1)])
    finally:
        previous.close()
    assert previous.exists is published
    assert found.added == (["https://x.test/p5"] if published else
                           ["https://x.test/p1", "https://x.test/p5"])
