"""Read a sitemap a site already publishes — for audits that compare it with a crawl.

The bytes come from a hostile world: a sitemap may be a gzip bomb, a billion
laughs, a 2 GB file or an HTML error page served as 200. Each of those ends as
a problem named in the result, never an exception. The limits are the
protocol's: 50,000 URLs and 50 MiB uncompressed per file; a file over them is
what search engines reject, so it is reported as such.

XML goes through defusedxml (no DTDs, no entities, no network) and is read as
a stream, one ``<url>`` at a time, so a full-size sitemap costs its entries,
not its tree.
"""

from __future__ import annotations

import contextlib
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from sitemap_writer.entry import MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP

NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
# Google's own namespace of the protocol's first texts (2005), before sitemaps.org:
# still read by its crawlers, a legacy to replace, not a broken file
LEGACY_NAMESPACES = frozenset({"http://www.google.com/schemas/sitemap/0.84"})
_GZIP_MAGIC = b"\x1f\x8b"
ATOM_NAMESPACES = ("http://www.w3.org/2005/Atom", "http://purl.org/atom/ns#")
# Tags of the image and video extensions Google announced it no longer reads (Google
# Search Central, "Simplifying sitemap extensions", 2022): still valid XML, but
# whatever they say is ignored.
DEPRECATED_TAGS = {
    "http://www.google.com/schemas/sitemap-image/1.1": (
        "image", ("caption", "title", "geo_location", "license")),
    "http://www.google.com/schemas/sitemap-video/1.1": (
        "video", ("category", "gallery_loc", "price", "tvshow")),
}
DEPRECATED_ATTRIBUTES = ("allow_embed", "autoplay")  # of <video:player_loc>


@dataclass(slots=True)
class ReadSitemap:
    """What one sitemap file holds. ``kind``: ``urlset``, ``sitemapindex``, ``text``,
    ``rss``, ``atom`` or ``None`` (unreadable); ``entries``: (loc, lastmod) in file
    order — for an index, the child sitemaps; a feed's dates are given in W3C
    format. ``deprecated``: the tags Google no longer reads, and how often."""

    kind: str | None = None
    entries: list[tuple[str, str | None]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    deprecated: dict[str, int] = field(default_factory=dict)
    legacy_namespace: str | None = None  # its root's, when one of LEGACY_NAMESPACES


def read_sitemap(data: bytes) -> ReadSitemap:
    """Parse one sitemap (XML or text, plain or gzip) as served."""
    result = ReadSitemap()
    if data.startswith(_GZIP_MAGIC):
        inflated = _gunzip(data)
        if inflated is None:
            result.problems.append("invalid-gzip: the file is not a complete gzip stream")
            return result
        data = inflated
    if len(data) > MAX_SITEMAP_BYTES:
        result.problems.append(f"too-large: over {MAX_SITEMAP_BYTES:,} bytes uncompressed "
                               "(the protocol's limit); not read")
        return result
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:14].lower() in (b"<!doctype html", b"<html") or head[:5].lower() == b"<html":
        # the commonest broken sitemap: a page (a soft 404, a login form) answering 200
        result.problems.append("not-a-sitemap: an HTML page, not a sitemap")
    elif not head.startswith(b"<"):
        _read_text(data, result)
    else:
        _read_xml(data, result)
    if len(result.entries) > MAX_URLS_PER_SITEMAP:
        del result.entries[MAX_URLS_PER_SITEMAP:]
        result.problems.append(f"too-many-urls: over {MAX_URLS_PER_SITEMAP:,} entries (the "
                               f"protocol's limit); the first {MAX_URLS_PER_SITEMAP:,} read")
    return result


def _gunzip(data: bytes) -> bytes | None:
    """Inflate at most one byte past the limit: enough to know a file is too large,
    never enough for a bomb to cost more."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, MAX_SITEMAP_BYTES + 1)
    except zlib.error:
        return None
    if len(out) <= MAX_SITEMAP_BYTES and not inflater.eof:
        return None  # truncated
    return out


def _read_text(data: bytes, result: ReadSitemap) -> None:
    """The protocol's text format: one URL a line, UTF-8, nothing else."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        result.problems.append("not-a-sitemap: neither XML nor a UTF-8 text file")
        return
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if any(not line.startswith(("http://", "https://")) for line in lines[:20]):
        result.problems.append("not-a-sitemap: neither XML nor a text file of URLs")
        return
    result.kind = "text"
    result.entries = [(line, None) for line in lines[: MAX_URLS_PER_SITEMAP + 1]]


def _read_xml(data: bytes, result: ReadSitemap) -> None:
    depth = 0
    root: str | None = None
    item: str | None = None  # "url" or "sitemap" while inside one
    loc: str | None = None
    lastmod: str | None = None
    missing_loc = 0
    with _xml_errors_named(result):
        for event, element in iterparse(io.BytesIO(data), events=("start", "end"),
                                        forbid_dtd=True):
            namespace, _, name = element.tag.rpartition("}")
            if event == "start":
                depth += 1
                if depth == 1:
                    root = name
                    if name == "rss" or (name == "feed" and namespace.lstrip("{")
                                         in ATOM_NAMESPACES):
                        _read_feed(data, result, name)
                        return
                    if name not in ("urlset", "sitemapindex"):
                        result.problems.append(
                            f"not-a-sitemap: the root element is <{name}>, not <urlset> "
                            "or <sitemapindex>")
                        return
                    result.kind = name
                    _check_namespace(namespace.lstrip("{"), name, result)
                elif depth == 2:
                    wanted = "url" if root == "urlset" else "sitemap"
                    item = name if name == wanted else None
                continue
            depth -= 1
            if depth >= 2 and item is not None and namespace:
                _deprecated(namespace.lstrip("{"), name, element, result.deprecated)
            if depth == 2 and item is not None:
                if name == "loc":
                    loc = (element.text or "").strip()
                elif name == "lastmod":
                    lastmod = (element.text or "").strip()
            elif depth == 1:
                if item is not None:
                    if loc:
                        if len(result.entries) <= MAX_URLS_PER_SITEMAP:
                            result.entries.append((loc, lastmod))
                    else:
                        missing_loc += 1
                item = loc = lastmod = None
                element.clear()
    if any(problem.startswith("invalid-xml") for problem in result.problems):
        # search engines reject the whole file, so none of its entries count
        result.kind, result.entries = None, []
        return
    if root is None and not result.problems:
        result.problems.append("not-a-sitemap: no XML element")
    expected = "url" if root == "urlset" else "sitemap"
    if missing_loc:
        result.problems.append(f"missing-loc: {missing_loc} <{expected}> element(s) "
                               "without a <loc>")


def _check_namespace(namespace: str, root: str, result: ReadSitemap) -> None:
    if namespace in LEGACY_NAMESPACES:
        result.legacy_namespace = namespace
    elif namespace != NAMESPACE:
        result.problems.append(f"wrong-namespace: <{root}> must be in {NAMESPACE}")


def _deprecated(namespace: str, name: str, element: object,
                found: dict[str, int]) -> None:
    known = DEPRECATED_TAGS.get(namespace)
    if known is None:
        return
    prefix, names = known
    if name in names:
        tag = f"{prefix}:{name}"
        found[tag] = found.get(tag, 0) + 1
    elif prefix == "video" and name == "player_loc":
        for attribute in DEPRECATED_ATTRIBUTES:
            if attribute in element.attrib:  # type: ignore[attr-defined]
                tag = f"video:player_loc@{attribute}"
                found[tag] = found.get(tag, 0) + 1


def _read_feed(data: bytes, result: ReadSitemap, root: str) -> None:
    """RSS 2.0 and Atom 0.3/1.0 feeds, which the protocol accepts as sitemaps: an
    item's (or entry's) link is the URL, its pubDate (updated, or Atom 0.3's
    modified) its lastmod. A feed lists only recent URLs, which is what it is for."""
    result.kind = "rss" if root == "rss" else "atom"
    entry_tag = "item" if root == "rss" else "entry"
    link: str | None = None
    when: str | None = None
    inside = False
    with _xml_errors_named(result):
        for event, element in iterparse(io.BytesIO(data), events=("start", "end"),
                                        forbid_dtd=True):
            name = element.tag.rpartition("}")[2]
            if event == "start":
                if name == entry_tag:
                    inside, link, when = True, None, None
                continue
            if not inside:
                continue
            if name == "link" and link is None:
                if root == "rss":
                    link = (element.text or "").strip() or None
                elif element.get("rel", "alternate") == "alternate":
                    link = (element.get("href") or "").strip() or None
            elif name == "pubDate" and root == "rss":
                when = _rfc822_as_w3c((element.text or "").strip())
            elif name in ("updated", "modified") and root != "rss" and when is None:
                when = (element.text or "").strip() or None
            elif name == entry_tag:
                inside = False
                if link and len(result.entries) <= MAX_URLS_PER_SITEMAP:
                    result.entries.append((link, when))
                element.clear()
    if result.problems:
        result.kind, result.entries = None, []


@contextlib.contextmanager
def _xml_errors_named(result: ReadSitemap) -> Iterator[None]:
    """What defusedxml and the parser raise, as the problems a report names."""
    try:
        yield
    except DefusedXmlException:
        result.problems.append("invalid-xml: a DTD or entity declaration, which a sitemap "
                               "may not carry")
    except ParseError as exc:
        result.problems.append(f"invalid-xml: {exc}")


def _rfc822_as_w3c(text: str) -> str | None:
    """RSS's dates (RFC 822) in the W3C format the rest of the audit reads."""
    from email.utils import parsedate_to_datetime  # feeds only: 7 ms off every start

    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
