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

# What XML 1.0 §2.2 Char excludes (it allows \t \n \r, U+0020-U+D7FF, U+E000-U+FFFD
# and U+10000-U+10FFFF), spelt as the excluded ranges: the same class as the
# complement of the allowed ones, compiled in a third of the time (3.5 ms otherwise,
# on the way to every crawl's first request).
_NOT_XML_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ABSOLUTE = re.compile(r"https?://[^/?#\s]+", re.IGNORECASE)


# sitemaps.org <changefreq>: "Valid values are" these seven
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
# Google's image sitemaps: "up to 1,000 images" per <url>
MAX_IMAGES_PER_URL = 1000
# hreflang: ISO 639-1 language (Google accepts 639-2 too), optional ISO 15924 script,
# optional ISO 3166-1 alpha-2 region (or a UN M.49 area), or x-default
HREFLANG = re.compile(r"x-default|[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?")


# Google's video sitemaps: <video:duration> "from 1 to 28800 (8 hours)" seconds
MAX_VIDEO_SECONDS = 28_800
VIDEO_TEXT_CHARS = {"title": 100, "description": 2048}  # Google's stated maxima


@dataclass(frozen=True, slots=True)
class Video:
    """A ``<video:video>``: the elements Google's video sitemap page requires
    (thumbnail, title, description, and a content or a player URL) and two it
    recommends."""

    thumbnail: str
    title: str
    description: str
    content: str | None = None
    player: str | None = None
    duration: int | None = None  # seconds
    published: datetime | None = None

    def __post_init__(self) -> None:
        _check_url("<video:thumbnail_loc>", self.thumbnail)
        for name, most in VIDEO_TEXT_CHARS.items():
            if not getattr(self, name).strip():
                raise InvalidEntry(f"<video:{name}> must not be empty")
            if len(getattr(self, name)) > most:
                raise InvalidEntry(f"<video:{name}> is over {most} characters")
        if self.content is None and self.player is None:
            raise InvalidEntry("a video needs <video:content_loc> or <video:player_loc>")
        for name, url in (("content_loc", self.content), ("player_loc", self.player)):
            if url is not None:
                _check_url(f"<video:{name}>", url)
        if self.duration is not None and not 1 <= self.duration <= MAX_VIDEO_SECONDS:
            raise InvalidEntry(f"<video:duration> must be 1 to {MAX_VIDEO_SECONDS} seconds")
        if self.published is not None and self.published.tzinfo is None:
            raise InvalidEntry("<video:publication_date> must be timezone-aware")


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """A ``<url>``: its location and, when known truthfully, its last modification;
    optionally its changefreq and priority, its language versions (hreflang code and
    URL, itself included) and its images."""

    loc: str
    lastmod: datetime | None = None
    changefreq: str | None = None
    priority: float | None = None
    alternates: tuple[tuple[str, str], ...] = ()
    images: tuple[str, ...] = ()
    videos: tuple[Video, ...] = ()

    def __post_init__(self) -> None:
        _check_url("<loc>", self.loc)
        if self.lastmod is not None and self.lastmod.tzinfo is None:
            raise InvalidEntry("lastmod must be timezone-aware, so it can be written in UTC")
        if self.changefreq is not None and self.changefreq not in CHANGEFREQS:
            raise InvalidEntry(f"<changefreq> must be one of {', '.join(CHANGEFREQS)}: "
                               f"{self.changefreq!r}")
        if self.priority is not None and not (
                0.0 <= self.priority <= 1.0 and round(self.priority, 1) == self.priority):
            raise InvalidEntry(f"<priority> must be 0.0 to 1.0 in steps of 0.1: "
                               f"{self.priority!r}")
        for code, href in self.alternates:
            if not HREFLANG.fullmatch(code):
                raise InvalidEntry(f"hreflang {code!r} is not a language[-Script][-REGION] "
                                   "code or x-default")
            _check_url("an hreflang href", href)
        if len(self.images) > MAX_IMAGES_PER_URL:
            raise InvalidEntry(f"{len(self.images)} images for {self.loc}: at most "
                               f"{MAX_IMAGES_PER_URL}")
        for image in self.images:
            _check_url("<image:loc>", image)

    @property
    def lastmod_utc(self) -> datetime | None:
        return self.lastmod.astimezone(UTC) if self.lastmod is not None else None


def _check_url(what: str, url: str) -> None:
    if not _ABSOLUTE.match(url):
        raise InvalidEntry(f"{what} must be an absolute http(s) URL: {url!r}")
    if len(url) > MAX_LOC_LENGTH:
        raise InvalidEntry(f"{what} must be under 2,048 characters ({len(url)}): {url[:80]}...")
    if (_NOT_XML_CHAR.search(url) or " " in url or "\t" in url or "\n" in url
            or "\r" in url):
        raise InvalidEntry(f"{what} holds characters XML or URLs forbid: {url!r}")
