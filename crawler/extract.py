"""What a crawler needs from one HTML page, read with selectolax — pure.

Links come from ``a[href]`` and ``area[href]``, resolved against ``<base
href>`` when the page has one; ``rel=nofollow`` links are counted but not
returned. The canonical URL comes from ``<link rel=canonical>`` in the head
(several that disagree cancel out, as search engines treat them), robots
directives from ``<meta name=robots|TOKEN>``, and an instant
``<meta http-equiv=refresh>`` is reported so it can be followed like a redirect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser

from crawler.fingerprint import fingerprint
from crawler.robots import Directives, meta_directives
from crawler.urls import resolve_link

_REFRESH = re.compile(
    r"""^\s*(\d+)(?:\.\d*)?\s*(?:[;,]\s*(?:url\s*=\s*)?["']?([^"']*)["']?)?""",
    re.IGNORECASE,
)
_LINK_HEADER = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,]*)*)")
_REL_PARAM = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))""", re.IGNORECASE)


@dataclass(slots=True)
class PageFacts:
    """What one page says about itself and where it leads."""

    links: list[str] = field(default_factory=list)
    nofollow_links: int = 0
    canonical: str | None = None
    directives: Directives = field(default_factory=Directives)
    refresh_to: str | None = None
    content_hash: bytes | None = None


def extract(
    html: str, page_url: str, token: str, *, fingerprint_ignoring: tuple[str, ...] | None = None
) -> PageFacts:
    """Read links, canonical, meta robots and meta refresh from a page.

    With ``fingerprint_ignoring`` (CSS selectors, possibly none), also hash the
    page's meaningful content for change detection.
    """
    tree = LexborHTMLParser(html)
    facts = PageFacts()
    base = page_url
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        base = resolve_link(page_url, base_node.attributes.get("href") or "") or page_url

    seen: set[str] = set()
    for node in tree.css("a[href], area[href]"):
        attrs = node.attributes
        rel = attrs.get("rel")
        if rel and "nofollow" in rel.lower().split():
            facts.nofollow_links += 1
            continue
        url = resolve_link(base, attrs.get("href") or "")
        if url is not None and url not in seen:
            seen.add(url)
            facts.links.append(url)

    head = tree.head
    canonicals: set[str | None] = set()
    if head is not None:
        for node in head.css("link[rel][href]"):
            attrs = node.attributes
            if "canonical" in (attrs.get("rel") or "").lower().split():
                canonicals.add(resolve_link(base, attrs.get("href") or ""))
    if len(canonicals) == 1:
        facts.canonical = canonicals.pop()

    contents = []
    for node in tree.css("meta[name][content]"):
        attrs = node.attributes
        if (attrs.get("name") or "").strip().lower() in ("robots", token):
            contents.append(attrs.get("content") or "")
    facts.directives = meta_directives(contents)

    for node in tree.css("meta[http-equiv][content]"):
        attrs = node.attributes
        if (attrs.get("http-equiv") or "").strip().lower() != "refresh":
            continue
        match = _REFRESH.match(attrs.get("content") or "")
        if match and match.group(2) and match.group(2).strip():
            target = resolve_link(base, match.group(2).strip())
            if int(match.group(1)) == 0:
                facts.refresh_to = target
            elif target is not None and target not in seen:
                seen.add(target)
                facts.links.append(target)
        break
    if fingerprint_ignoring is not None:
        facts.content_hash = fingerprint(tree, fingerprint_ignoring)
    return facts


def canonical_from_link_headers(values: Iterable[str], page_url: str) -> str | None:
    """The ``rel="canonical"`` target of HTTP ``Link`` headers (RFC 8288), if one."""
    found: set[str | None] = set()
    for value in values:
        for match in _LINK_HEADER.finditer(value):
            for rel in _REL_PARAM.finditer(match.group(2)):
                rels = (rel.group(1) or rel.group(2) or "").lower().split()
                if "canonical" in rels:
                    found.add(resolve_link(page_url, match.group(1).strip()))
    return found.pop() if len(found) == 1 else None
