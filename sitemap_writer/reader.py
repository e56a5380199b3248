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

import io
import zlib
from dataclasses import dataclass, field
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from sitemap_writer.entry import MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP

NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(slots=True)
class ReadSitemap:
    """What one sitemap file holds. ``kind``: ``urlset``, ``sitemapindex``, ``text``
    or ``None`` (unreadable); ``entries``: (loc, lastmod as written) in file order —
    for an index, the child sitemaps."""

    kind: str | None = None
    entries: list[tuple[str, str | None]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


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
    try:
        for event, element in iterparse(io.BytesIO(data), events=("start", "end"),
                                        forbid_dtd=True):
            namespace, _, name = element.tag.rpartition("}")
            if event == "start":
                depth += 1
                if depth == 1:
                    root = name
                    if name not in ("urlset", "sitemapindex"):
                        result.problems.append(
                            f"not-a-sitemap: the root element is <{name}>, not <urlset> "
                            "or <sitemapindex>")
                        return
                    result.kind = name
                    if namespace.lstrip("{") != NAMESPACE:
                        result.problems.append(
                            f"wrong-namespace: <{name}> must be in {NAMESPACE}")
                elif depth == 2:
                    wanted = "url" if root == "urlset" else "sitemap"
                    item = name if name == wanted else None
                continue
            depth -= 1
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
    except DefusedXmlException:
        result.problems.append("invalid-xml: a DTD or entity declaration, which a sitemap "
                               "may not carry")
    except ParseError as exc:
        result.problems.append(f"invalid-xml: {exc}")
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
