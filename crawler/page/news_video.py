"""What News and video sitemaps need from a page — pure.

News (``--news``): when the article was published and its headline. The date is
the ``article:published_time`` OpenGraph property, else the ``datePublished`` of
a JSON-LD or Microdata Article, NewsArticle or BlogPosting; the headline is
that item's ``headline``, else ``og:title``, else the page's ``<title>``.

Videos (``--videos``): every JSON-LD or Microdata VideoObject, and every
``<video>`` element whose file no VideoObject already describes (its ``src`` or
first ``<source>``, ``poster`` as the thumbnail, ``title`` or ``aria-label`` as
the title). A page with a single ``<video>`` and nothing more lends it its own
title and meta description. Google requires a thumbnail, a title, a
description and a content or player URL: a video lacking one is left out, and
the page says which and why (``video_problems``).

Videos travel as plain tuples (:data:`VIDEO_FIELDS`) so records stay cheap to
store; the sitemap writer's checks come later, in the CLI.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from crawler.page.structured_data import Structured, typed_nodes
from crawler.urls.normalize import resolve_link

ARTICLES = frozenset({"Article", "NewsArticle", "BlogPosting"})
VIDEO_FIELDS = ("thumbnail", "title", "description", "content", "player", "duration",
                "published")
MAX_VIDEOS = 100  # a page's; Google reads far fewer
TITLE_CHARS, DESCRIPTION_CHARS = 100, 2048
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?",
                       re.IGNORECASE)

Video = tuple[str | None, str | None, str | None, str | None, str | None, int | None,
              str | None]


def parse_date(text: Any) -> datetime | None:
    """An ISO 8601 date or date-time, in UTC (a date or a time without offset: UTC)."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return (moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment).astimezone(UTC)


def article_facts(structured: Structured | None, title: str | None
                  ) -> tuple[datetime | None, str | None]:
    """(published, headline) of a news article, if the page says it is one."""
    if structured is None:
        return None, None
    published = parse_date(structured.opengraph.get("article:published_time"))
    headline = None
    for item in structured.items:
        kinds = item.get("@type")
        kinds = set(kinds if isinstance(kinds, list) else [kinds])
        if kinds & ARTICLES:
            published = published or parse_date(_text(item.get("datePublished")))
            headline = headline or _text(item.get("headline"))
    headline = headline or structured.opengraph.get("og:title") or title
    return published, _clip(headline, TITLE_CHARS * 5)


def page_videos(tree: LexborHTMLParser, structured: Structured | None, base: str,
                title: str | None, description: str | None
                ) -> tuple[list[Video], list[str]]:
    """The page's complete videos, and what is wrong with the incomplete ones."""
    videos: list[Video] = []
    problems: list[str] = []
    described: set[str] = set()
    for node in typed_nodes(structured.items if structured else []):
        kinds = node.get("@type")
        if "VideoObject" not in (kinds if isinstance(kinds, list) else [kinds]):
            continue
        content = _url(base, _text(node.get("contentUrl")))
        if content:
            described.add(content)
        _keep((_url(base, _text(node.get("thumbnailUrl"))),
               _clip(_text(node.get("name")), TITLE_CHARS),
               _clip(_text(node.get("description")), DESCRIPTION_CHARS),
               content, _url(base, _text(node.get("embedUrl"))),
               _seconds(_text(node.get("duration"))),
               _iso(parse_date(_text(node.get("uploadDate"))))), videos, problems)
    elements = list(tree.tags("video"))
    for node in elements:
        attrs = node.attributes
        source = attrs.get("src") or next(
            (child.attributes.get("src") for child in node.css("source")
             if child.attributes.get("src")), None)
        content = _url(base, source)
        if content is not None and content in described:
            continue
        single = len(elements) == 1 and not described
        _keep((_url(base, attrs.get("poster")),
               _clip(attrs.get("title") or attrs.get("aria-label") or
                     (title if single else None), TITLE_CHARS),
               _clip(description if single else None, DESCRIPTION_CHARS),
               content, None, None, None), videos, problems)
    return videos[:MAX_VIDEOS], problems[:MAX_VIDEOS]


def _keep(video: Video, videos: list[Video], problems: list[str]) -> None:
    thumbnail, title, description, content, player = video[:5]
    missing = [name for name, value in (("thumbnail", thumbnail), ("title", title),
                                        ("description", description)) if not value]
    if not content and not player:
        missing.append("content or player URL")
    if missing:
        problems.append(f"video {content or player or title or '(unnamed)'}: no "
                        + ", no ".join(missing))
    else:
        videos.append(video)


def _text(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("@id") or value.get("url") or value.get("contentUrl")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _url(base: str, href: str | None) -> str | None:
    return resolve_link(base, href) if href else None


def _clip(text: str | None, most: int) -> str | None:
    if text is None:
        return None
    collapsed = " ".join(text.split())
    return collapsed[:most] or None


def _seconds(duration: str | None) -> int | None:
    """ISO 8601 duration (``PT1M33S``) in whole seconds, within Google's 1 to 28,800."""
    match = _DURATION.fullmatch(duration or "")
    if not duration or match is None or not any(match.groups()):
        return None
    days, hours, minutes, seconds = (float(part) if part else 0.0 for part in match.groups())
    total = round(days * 86400 + hours * 3600 + minutes * 60 + seconds)
    return total if 1 <= total <= 28_800 else None


def _iso(moment: datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else None
