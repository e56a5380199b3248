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
    ("http://h/plain/path.html", "http://h/plain/path.html"),
    ("a<b>c'd\"e&f", "a&lt;b&gt;c&apos;d&quot;e&amp;f"),
])
def test_entity_escaping(raw: str, escaped: str) -> None:
    assert escape(raw) == escaped


def test_w3c_datetime_is_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert w3c_datetime(datetime(2025, 3, 1, 14, 30, 45, tzinfo=plus_two)) == "2025-03-01T12:30:45Z"


@pytest.mark.parametrize(("moment", "text"), [
    (datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC), "0999-01-02T03:04:05Z"),  # four digits
    (datetime(2026, 1, 1, 0, 0, 0, 999_999, tzinfo=UTC), "2026-01-01T00:00:00Z"),  # seconds
    (datetime(2026, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=5))), "2025-12-31T20:30:00Z"),
])
def test_w3c_datetime_is_an_xsd_datetime_to_the_second(moment: datetime, text: str) -> None:
    assert w3c_datetime(moment) == text


def test_url_element() -> None:
    entry = SitemapEntry("http://h/a?x=1&y=2", datetime(2024, 1, 2, tzinfo=UTC))
    assert url_element(entry) == (
        b"<url><loc>http://h/a?x=1&amp;y=2</loc><lastmod>2024-01-02T00:00:00Z</lastmod></url>\n")
    assert url_element(SitemapEntry("http://h/")) == b"<url><loc>http://h/</loc></url>\n"


@pytest.mark.parametrize("loc", [
    "/relative", "ftp://h/x", "http://h/" + "a" * 2040, "http://h/a\x00b", "http://h/a\x0bb",
    "http://h/a b", "http://h/a\tb", "http://h/a\nb", "http://h/a\rb", "http://h/\ufffe",
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


def test_the_characters_xml_forbids_are_exactly_those_refused() -> None:
    """XML 1.0 §2.2 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
    [#x10000-#x10FFFF]; every other code point is one the writer refuses."""
    from sitemap_writer.entry import _NOT_XML_CHAR

    for code in [*range(0x11000), *range(0x11000, 0x110000, 251), 0x10FFFF]:
        allowed = code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or (
            0xE000 <= code <= 0xFFFD) or 0x10000 <= code <= 0x10FFFF
        assert (_NOT_XML_CHAR.search(chr(code)) is None) == allowed, hex(code)
    with pytest.raises(InvalidEntry):
        SitemapEntry("http://h/a\ufffe")
