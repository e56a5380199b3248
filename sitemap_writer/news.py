"""Google News sitemaps: recent articles with their publication, language, date
and title — pure.

From Google Search Central's "Build and submit a News sitemap": a News sitemap
lists articles published in the last two days, at most 1,000 ``<news:news>``
tags in one file; each names the publication (``<news:name>`` as it appears on
news.google.com, ``<news:language>`` an ISO 639 code, or ``zh-cn``/``zh-tw``),
the ``<news:publication_date>`` (W3C format) and the article's ``<news:title>``.
The tags Google no longer uses (access, genres, keywords, stock_tickers) are
never written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sitemap_writer.entry import _check_url
from sitemap_writer.errors import InvalidEntry
from sitemap_writer.serialize import (
    NAMESPACE,
    XML_DECLARATION,
    escape,
    stylesheet_pi,
    w3c_datetime,
)

NEWS_NAMESPACE = "http://www.google.com/schemas/sitemap-news/0.9"
NEWS_NAME = "sitemap-news.xml"
MAX_NEWS_URLS = 1000  # "up to 1,000 news:news tags"
NEWS_LANGUAGE = re.compile(r"[a-z]{2,3}|zh-cn|zh-tw")
TITLE_CHARS = 500


@dataclass(frozen=True, slots=True)
class NewsEntry:
    loc: str
    publication: str
    language: str
    published: datetime
    title: str

    def __post_init__(self) -> None:
        _check_url("<loc>", self.loc)
        if not self.publication.strip():
            raise InvalidEntry("<news:name> must not be empty")
        if not NEWS_LANGUAGE.fullmatch(self.language):
            raise InvalidEntry(f"<news:language> {self.language!r} is not an ISO 639 code "
                               "(or zh-cn, zh-tw)")
        if self.published.tzinfo is None:
            raise InvalidEntry("<news:publication_date> must be timezone-aware")
        if not self.title.strip():
            raise InvalidEntry(f"<news:title> of {self.loc} must not be empty")


def newest_news(entries: list[NewsEntry]) -> list[NewsEntry]:
    """The articles the News sitemap holds: the newest :data:`MAX_NEWS_URLS`, by loc."""
    newest = sorted(entries, key=lambda entry: entry.published, reverse=True)[:MAX_NEWS_URLS]
    return sorted(newest, key=lambda entry: entry.loc)


def news_bytes(entries: list[NewsEntry], stylesheet: str | None = None) -> bytes:
    """The News sitemap of the newest :data:`MAX_NEWS_URLS` entries, in loc order."""
    newest = newest_news(entries)
    body = "".join(
        f"<url><loc>{escape(entry.loc)}</loc><news:news><news:publication>"
        f"<news:name>{escape(entry.publication)}</news:name>"
        f"<news:language>{entry.language}</news:language></news:publication>"
        f"<news:publication_date>{w3c_datetime(entry.published)}</news:publication_date>"
        f"<news:title>{escape(' '.join(entry.title.split())[:TITLE_CHARS])}</news:title>"
        "</news:news></url>\n"
        for entry in newest)
    head = f'<urlset xmlns="{NAMESPACE}" xmlns:news="{NEWS_NAMESPACE}">\n'
    return (XML_DECLARATION + stylesheet_pi(stylesheet) + head.encode() + body.encode()
            + b"</urlset>\n")
