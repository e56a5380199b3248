from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crawler.dates import parse_http_date, retry_after_seconds, trusted_lastmod

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("value", "expected"), [
    ("Wed, 21 Oct 2015 07:28:00 GMT", datetime(2015, 10, 21, 7, 28, tzinfo=UTC)),
    ("Sunday, 06-Nov-94 08:49:37 GMT", datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)),
    ("Sun Nov  6 08:49:37 1994", datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)),
    ("Wed, 21 Oct 2015 09:28:00 +0200", datetime(2015, 10, 21, 7, 28, tzinfo=UTC)),
    ("yesterday", None), ("", None), (None, None),
])
def test_parse_http_date(value: str | None, expected: datetime | None) -> None:
    assert parse_http_date(value) == expected


@pytest.mark.parametrize(("value", "trusted"), [
    ("Wed, 21 Oct 2015 07:28:00 GMT", True),
    ("Sun, 22 Nov 2026 12:04:00 GMT", True),  # within clock skew
    ("Sun, 22 Nov 2026 13:00:00 GMT", False),  # the future
    ("Thu, 01 Jan 1970 00:00:00 GMT", False),  # before the web had Last-Modified
])
def test_trusted_lastmod(value: str, trusted: bool) -> None:
    assert (trusted_lastmod(value, NOW) is not None) is trusted


@pytest.mark.parametrize(("value", "seconds"), [
    ("120", 120.0), ("Sun, 22 Nov 2026 12:00:30 GMT", 30.0), ("Sun, 22 Nov 2026 11:00:00 GMT", 0.0),
    ("soon", None), (None, None),
])
def test_retry_after(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value, NOW) == seconds
