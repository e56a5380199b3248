"""HTTP dates → trustworthy UTC datetimes — pure.

A ``Last-Modified`` in the future, or before the web had such headers (1994),
is a server bug, and publishing it would teach search engines to ignore the
site's lastmod altogether; such values are dropped, never replaced by "now".
"""

from __future__ import annotations

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
