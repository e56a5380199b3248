"""HTTP dates → trustworthy UTC datetimes — pure.

A ``Last-Modified`` in the future, or before the web had such headers (1994),
is a server bug, and publishing it would teach search engines to ignore the
site's lastmod altogether; such values are dropped, never replaced by "now".
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from functools import lru_cache

EARLIEST_TRUSTED = datetime(1994, 1, 1, tzinfo=UTC)
# Clocks drift: a header a few minutes ahead of ours is still plausible.
CLOCK_SKEW = timedelta(minutes=5)


@lru_cache(maxsize=4096)
def parse_http_date(value: str | None) -> datetime | None:
    """An RFC 9110 HTTP-date as an aware UTC datetime, or ``None`` if unparseable.

    Cached: a site's pages share few distinct dates (one deploy, one mtime), and
    email.utils' parser is slow enough to show on a crawl of 304s.
    """
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:  # "-0000" or no zone: HTTP dates are GMT
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def trusted_lastmod(value: str | None, now: datetime) -> datetime | None:
    """``Last-Modified`` if it is plausible at ``now``, else ``None``."""
    parsed = parse_http_date(value)
    if parsed is None or parsed < EARLIEST_TRUSTED or parsed > now + CLOCK_SKEW:
        return None
    return parsed


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """``Retry-After`` (delay-seconds or HTTP-date) as seconds from ``now``."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    parsed = parse_http_date(value)
    if parsed is None:
        return None
    return max(0.0, (parsed - now).total_seconds())


# W3C Datetime (the profile of ISO 8601 the Sitemaps protocol names): YYYY, YYYY-MM,
# YYYY-MM-DD, or a date with hh:mm[:ss[.s…]] and a zone (Z or ±hh:mm).
_W3C = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"(Z|[+-]\d{2}:\d{2}))?)?)?")


def w3c_period(value: str) -> tuple[datetime, datetime] | None:
    """The span a W3C Datetime names, as UTC (start, end): a day for ``2024-05-01``,
    an instant for a full timestamp. ``None`` when it is not W3C Datetime — which
    is what a sitemap's ``<lastmod>`` must be."""
    match = _W3C.fullmatch(value.strip())
    if match is None:
        return None
    year, month, day, hour = match.groups()[:4]
    try:  # a date that does not exist (February 30th): not W3C Datetime
        if hour is None:
            return _date_period(int(year), month, day)
        return _instant(match.groups())
    except (ValueError, OverflowError):
        return None


def _date_period(year: int, month: str | None, day: str | None) -> tuple[datetime, datetime]:
    """A year, a month or a day, as UTC (start, end)."""
    start = datetime(year, int(month or 1), int(day or 1), tzinfo=UTC)
    if day is not None:
        return start, start + timedelta(days=1)
    if month is not None:
        after = (start.replace(year=start.year + 1, month=1) if start.month == 12
                 else start.replace(month=start.month + 1))
        return start, after
    return start, start.replace(year=start.year + 1)


def _instant(groups: tuple[str | None, ...]) -> tuple[datetime, datetime] | None:
    """A full timestamp, as the UTC second it names (None: an offset past 14 hours)."""
    year, month, day, hour, minute, second, zone = groups
    assert zone is not None and hour is not None and minute is not None
    offset = timedelta(0) if zone == "Z" else (
        (1 if zone[0] == "+" else -1) * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    if abs(offset) > timedelta(hours=14):
        return None
    local = datetime(int(year or 0), int(month or 0), int(day or 0), int(hour), int(minute),
                     int(second or 0), tzinfo=UTC)
    instant = local - offset
    return instant, instant + timedelta(seconds=1)
