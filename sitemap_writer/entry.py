"""One URL to publish, validated against the Sitemaps 0.9 protocol.

The limits below come from https://www.sitemaps.org/protocol.html; each
constant names the sentence it implements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from sitemap_writer.errors import InvalidEntry

# "must be less than 2,048 characters" (<loc>)
MAX_LOC_LENGTH = 2047
# "no more than 50,000 URLs" per sitemap file
MAX_URLS_PER_SITEMAP = 50_000
# "no larger than 50MB (52,428,800 bytes)" uncompressed
MAX_SITEMAP_BYTES = 52_428_800
# "can list up to 50,000 sitemaps" in one index; "no larger than 50MB"
MAX_SITEMAPS_PER_INDEX = 50_000

# XML 1.0 §2.2 Char, minus what an URL may never contain anyway.
_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ABSOLUTE = re.compile(r"https?://[^/?#\s]+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """A ``<url>``: its location and, when known truthfully, its last modification."""

    loc: str
    lastmod: datetime | None = None

    def __post_init__(self) -> None:
        if not _ABSOLUTE.match(self.loc):
            raise InvalidEntry(f"<loc> must be an absolute http(s) URL: {self.loc!r}")
        if len(self.loc) > MAX_LOC_LENGTH:
            raise InvalidEntry(
                f"<loc> must be under 2,048 characters ({len(self.loc)}): {self.loc[:80]}..."
            )
        if _NOT_XML_CHAR.search(self.loc) or any(c in self.loc for c in " \t\r\n"):
            raise InvalidEntry(f"<loc> holds characters XML or URLs forbid: {self.loc!r}")
        if self.lastmod is not None and self.lastmod.tzinfo is None:
            raise InvalidEntry("lastmod must be timezone-aware, so it can be written in UTC")

    @property
    def lastmod_utc(self) -> datetime | None:
        return self.lastmod.astimezone(UTC) if self.lastmod is not None else None
