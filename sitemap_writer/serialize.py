"""The bytes of sitemap XML — pure.

Built by hand rather than with an XML library because the writer must know
each element's exact size *before* it commits it to a shard (the 50 MiB rule),
and because the format is tiny. Escaping follows the sitemaps.org table.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sitemap_writer.entry import SitemapEntry

NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
XML_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_HEAD = XML_DECLARATION + f'<urlset xmlns="{NAMESPACE}">\n'.encode()
URLSET_FOOT = b"</urlset>\n"
INDEX_HEAD = XML_DECLARATION + f'<sitemapindex xmlns="{NAMESPACE}">\n'.encode()
INDEX_FOOT = b"</sitemapindex>\n"

# sitemaps.org "Entity escaping": & ' " > <
_ESCAPES = str.maketrans(
    {"&": "&amp;", "'": "&apos;", '"': "&quot;", ">": "&gt;", "<": "&lt;"}
)


def escape(text: str) -> str:
    return text.translate(_ESCAPES)


def w3c_datetime(moment: datetime) -> str:
    """W3C Datetime (the XSD's ``dateTime``) in UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def url_element(entry: SitemapEntry) -> bytes:
    lastmod = entry.lastmod
    inner = f"<loc>{escape(entry.loc)}</loc>"
    if lastmod is not None:
        inner += f"<lastmod>{w3c_datetime(lastmod)}</lastmod>"
    return f"<url>{inner}</url>\n".encode()


def sitemap_element(loc: str, lastmod: datetime | None) -> bytes:
    inner = f"<loc>{escape(loc)}</loc>"
    if lastmod is not None:
        inner += f"<lastmod>{w3c_datetime(lastmod)}</lastmod>"
    return f"<sitemap>{inner}</sitemap>\n".encode()
