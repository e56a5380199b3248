from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from sitemap_writer.entry import SitemapEntry
from sitemap_writer.errors import InvalidEntry
from sitemap_writer.serialize import escape, url_element, w3c_datetime


# sitemaps.org "Entity escaping" table.
@pytest.mark.parametrize(("raw", "escaped"), [
    ("&", "&amp;"), ("'", "&apos;"), ('"', "&quot;"), (">", "&gt;"), ("<", "&lt;"),
    ("http://www.example.com/view.html?item=12&desc=vacation_hawaii",
     "http://www.example.com/view.html?item=12&amp;desc=vacation_hawaii"),
])
def test_entity_escaping(raw: str, escaped: str) -> None:
    assert escape(raw) == escaped


def test_w3c_datetime_is_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert w3c_datetime(datetime(2025, 3, 1, 14, 30, 45, tzinfo=plus_two)) == "2025-03-01T12:30:45Z"


def test_url_element() -> None:
    entry = SitemapEntry("http://h/a?x=1&y=2", datetime(2024, 1, 2, tzinfo=UTC))
    assert url_element(entry) == (
        b"<url><loc>http://h/a?x=1&amp;y=2</loc><lastmod>2024-01-02T00:00:00Z</lastmod></url>\n")
    assert url_element(SitemapEntry("http://h/")) == b"<url><loc>http://h/</loc></url>\n"


@pytest.mark.parametrize("loc", [
    "/relative", "ftp://h/x", "http://h/" + "a" * 2040, "http://h/a\x00b", "http://h/a\x0bb",
    "http://h/a b", "http://h/\ufffe",
])
def test_invalid_entries_are_refused(loc: str) -> None:
    with pytest.raises(InvalidEntry):
        SitemapEntry(loc)


def test_2047_characters_is_the_longest_loc() -> None:
    loc = "http://h/" + "a" * (2047 - len("http://h/"))
    assert len(SitemapEntry(loc).loc) == 2047
    with pytest.raises(InvalidEntry):
        SitemapEntry(loc + "a")


def test_naive_lastmod_is_refused() -> None:
    with pytest.raises(InvalidEntry):
        SitemapEntry("http://h/", datetime(2024, 1, 1))
