"""The bytes of sitemap XML — pure.

Built by hand rather than with an XML library because the writer must know
each element's exact size *before* it commits it to a shard (the 50 MiB rule),
and because the format is tiny. Escaping follows the sitemaps.org table.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sitemap_writer.entry import SitemapEntry, Video

NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML_NAMESPACE = "http://www.w3.org/1999/xhtml"
IMAGE_NAMESPACE = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NAMESPACE = "http://www.google.com/schemas/sitemap-video/1.1"
XML_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_HEAD = XML_DECLARATION + f'<urlset xmlns="{NAMESPACE}">\n'.encode()
URLSET_FOOT = b"</urlset>\n"
INDEX_HEAD = XML_DECLARATION + f'<sitemapindex xmlns="{NAMESPACE}">\n'.encode()
INDEX_FOOT = b"</sitemapindex>\n"


def stylesheet_pi(href: str | None) -> bytes:
    """``<?xml-stylesheet?>``: how a browser shows the file to a person; search engines
    ignore it."""
    if href is None:
        return b""
    return f'<?xml-stylesheet type="text/xsl" href="{escape(href)}"?>\n'.encode()


def urlset_head(*, alternates: bool = False, images: bool = False, videos: bool = False,
                stylesheet: str | None = None) -> bytes:
    """The head of a shard: the namespaces of the extensions it carries."""
    names = f'xmlns="{NAMESPACE}"'
    if alternates:
        names += f' xmlns:xhtml="{XHTML_NAMESPACE}"'
    if images:
        names += f' xmlns:image="{IMAGE_NAMESPACE}"'
    if videos:
        names += f' xmlns:video="{VIDEO_NAMESPACE}"'
    return XML_DECLARATION + stylesheet_pi(stylesheet) + f"<urlset {names}>\n".encode()


def index_head(stylesheet: str | None = None) -> bytes:
    return XML_DECLARATION + stylesheet_pi(stylesheet) + (
        f'<sitemapindex xmlns="{NAMESPACE}">\n'.encode())

# sitemaps.org "Entity escaping": & ' " > <
_ESCAPES = str.maketrans(
    {"&": "&amp;", "'": "&apos;", '"': "&quot;", ">": "&gt;", "<": "&lt;"}
)
# What XML 1.0 §2.2 Char excludes: C0 controls but tab, LF and CR; lone surrogates
# (which UTF-8 cannot even encode); U+FFFE and U+FFFF.
_NOT_XML_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
REPLACEMENT = "\ufffd"


def xml_text(text: str, *, escaped: bool = True) -> str:
    """Text any page gave, made fit for an XML 1.0 document: what XML forbids becomes
    U+FFFD (a title with ``&#1;`` or a JSON-LD name with a lone surrogate would
    otherwise make the whole file unreadable, or unwritable), then the five
    sitemaps.org escapes. Every XML file the tool writes goes through this one
    function (sitemaps, news, video, image, hreflang, index, JUnit)."""
    # Most text (URLs, titles) holds nothing to replace or escape: asking first is a
    # tenth of translating each character through the table (0.1 against 1.6 us for
    # a URL; 10,000 a shard). isprintable() is false for every forbidden character.
    if not text.isprintable():
        text = _NOT_XML_CHAR.sub(REPLACEMENT, text)
    if escaped and ("&" in text or "<" in text or ">" in text or '"' in text
                    or "'" in text):
        return text.translate(_ESCAPES)
    return text


def escape(text: str) -> str:
    """:func:`xml_text`, escaped: what goes between tags and in attributes."""
    return xml_text(text)


def w3c_datetime(moment: datetime) -> str:
    """W3C Datetime (the XSD's ``dateTime``) in UTC, to the second, the year in four
    digits as the XSD requires (``strftime`` writes the year 999 as ``999``)."""
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def url_element(entry: SitemapEntry) -> bytes:
    lastmod = entry.lastmod
    inner = f"<loc>{escape(entry.loc)}</loc>"
    if lastmod is not None:
        inner += f"<lastmod>{w3c_datetime(lastmod)}</lastmod>"
    if entry.changefreq is not None:
        inner += f"<changefreq>{entry.changefreq}</changefreq>"
    if entry.priority is not None:
        inner += f"<priority>{entry.priority:.1f}</priority>"
    for code, href in entry.alternates:
        inner += (f'<xhtml:link rel="alternate" hreflang="{code}" '
                  f'href="{escape(href)}"/>')
    for image in entry.images:
        inner += f"<image:image><image:loc>{escape(image)}</image:loc></image:image>"
    for video in entry.videos:
        inner += video_element(video)
    return f"<url>{inner}</url>\n".encode()


def sitemap_element(loc: str, lastmod: datetime | None) -> bytes:
    inner = f"<loc>{escape(loc)}</loc>"
    if lastmod is not None:
        inner += f"<lastmod>{w3c_datetime(lastmod)}</lastmod>"
    return f"<sitemap>{inner}</sitemap>\n".encode()


def video_element(video: Video) -> str:
    """In the order Google's video sitemap page lists the tags."""
    inner = (f"<video:thumbnail_loc>{escape(video.thumbnail)}</video:thumbnail_loc>"
             f"<video:title>{escape(video.title)}</video:title>"
             f"<video:description>{escape(video.description)}</video:description>")
    if video.content is not None:
        inner += f"<video:content_loc>{escape(video.content)}</video:content_loc>"
    if video.player is not None:
        inner += f"<video:player_loc>{escape(video.player)}</video:player_loc>"
    if video.duration is not None:
        inner += f"<video:duration>{video.duration}</video:duration>"
    if video.published is not None:
        inner += (f"<video:publication_date>{w3c_datetime(video.published)}"
                  "</video:publication_date>")
    return f"<video:video>{inner}</video:video>"
