from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crawler.core.dates import parse_http_date, retry_after_seconds, trusted_lastmod

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


def test_w3c_datetime_names_a_span_and_refuses_everything_else() -> None:
    from crawler.core.dates import w3c_period
    day = w3c_period("2024-05-01")
    assert day == (datetime(2024, 5, 1, tzinfo=UTC), datetime(2024, 5, 2, tzinfo=UTC))
    assert w3c_period("2024-12") == (datetime(2024, 12, 1, tzinfo=UTC),
                                     datetime(2025, 1, 1, tzinfo=UTC))
    assert w3c_period("2024") == (datetime(2024, 1, 1, tzinfo=UTC),
                                  datetime(2025, 1, 1, tzinfo=UTC))
    start, _end = w3c_period("2024-05-01T10:00:05.25+02:00") or (None, None)
    assert start == datetime(2024, 5, 1, 8, 0, 5, tzinfo=UTC)
    assert w3c_period("2024-05-01T10:00Z") is not None
    for wrong in ("yesterday", "2024-02-30", "2024-05-01T10:00", "2024-05-01 10:00Z",
                  "2024-05-01T25:00Z", "01/05/2024", "2024-05-01T10:00+15:00", ""):
        assert w3c_period(wrong) is None, wrong
