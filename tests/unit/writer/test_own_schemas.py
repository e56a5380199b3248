"""The schemas the tests validate with (tests/schemas, written from the protocol
text) accept what Sitemaps 0.9 allows and refuse what it does not, so a test that
validates with them can fail; where the official schemas are present, both agree."""

from __future__ import annotations

import pytest
from conftest import OFFICIAL_SCHEMAS, OWN_SCHEMAS
from lxml import etree

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def urlset(*urls: str) -> bytes:
    return f'<urlset xmlns="{NS}" xmlns:i="urn:x">{"".join(urls)}</urlset>'.encode()


def index(*entries: str) -> bytes:
    return f'<sitemapindex xmlns="{NS}">{"".join(entries)}</sitemapindex>'.encode()


VALID_URLSETS = [
    urlset("<url><loc>http://example.com/</loc></url>"),
    urlset("<url><loc>https://example.com/a?b=1&amp;c=2</loc><lastmod>2025</lastmod></url>"),
    *(urlset(f"<url><loc>http://example.com/</loc><lastmod>{when}</lastmod></url>")
      for when in ("2025-03", "2025-03-01", "2025-03-01T12:30Z", "2025-03-01T12:30:45+01:00",
                   "2025-03-01T12:30:45.5-05:00")),
    urlset("<url><loc>http://example.com/</loc><lastmod>2025-03-01</lastmod>"
           "<changefreq>weekly</changefreq><priority>0.8</priority></url>"),
    urlset("<url><loc>http://example.com/</loc><i:image>x</i:image></url>"),
]
INVALID_URLSETS = [
    urlset(),  # at least one <url>
    urlset("<url><lastmod>2025</lastmod></url>"),  # no <loc>
    urlset("<url><loc>/relative</loc></url>"),
    urlset(f"<url><loc>http://example.com/{'a' * 2030}</loc></url>"),  # 2,048 characters
    *(urlset(f"<url><loc>http://example.com/</loc><lastmod>{when}</lastmod></url>")
      for when in ("2025-13-01", "2025-03-01T12:30", "2025-03-01 12:30Z", "yesterday",
                   "2025-03-01T25:00Z")),
    urlset("<url><loc>http://example.com/</loc><changefreq>sometimes</changefreq></url>"),
    urlset("<url><loc>http://example.com/</loc><priority>1.5</priority></url>"),
    urlset("<url><lastmod>2025</lastmod><loc>http://example.com/</loc></url>"),  # order
    urlset("<url><loc>http://example.com/</loc><extra>x</extra></url>"),  # own namespace
]


def own(name: str) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(OWN_SCHEMAS / f"{name}.xsd")))


# The protocol text's W3C Datetime also allows "2025", "2025-03" and hh:mm without
# seconds, which the official XSD (xsd:date or xsd:dateTime) refuses; the writer only
# ever writes full seconds, which both accept.
TEXT_ONLY = (b">2025<", b">2025-03<", b"12:30Z", b"<i:image>")


@pytest.mark.parametrize("document", VALID_URLSETS)
def test_valid_urlsets_pass(document: bytes) -> None:
    assert own("sitemap").validate(etree.fromstring(document))
    official = OFFICIAL_SCHEMAS / "sitemap.xsd"  # a cross-check, beside a development checkout
    if official.exists() and not any(part in document for part in TEXT_ONLY):
        assert etree.XMLSchema(etree.parse(str(official))).validate(etree.fromstring(document))


@pytest.mark.parametrize("document", INVALID_URLSETS)
def test_invalid_urlsets_fail(document: bytes) -> None:
    assert not own("sitemap").validate(etree.fromstring(document))


def test_index_schema() -> None:
    schema = own("siteindex")
    assert schema.validate(etree.fromstring(index(
        "<sitemap><loc>http://example.com/s1.xml.gz</loc><lastmod>2025-01-02</lastmod>"
        "</sitemap>")))
    assert not schema.validate(etree.fromstring(index()))
    assert not schema.validate(etree.fromstring(index(
        "<sitemap><loc>http://example.com/s1.xml</loc><lastmod>soon</lastmod></sitemap>")))
