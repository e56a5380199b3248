"""The crawler's extraction (``crawler/page/extract.py``) split in two for the
experiment: "read the tags" (lexbor's DOM in :func:`dom_scan`, or ``scan.py``)
and "what they mean" (:func:`facts_from`, shared by both), so that the two
readers can be compared on equal terms. The helpers both use are the crawler's.
"""

from __future__ import annotations

from itertools import chain

from scan import Scanned, scan  # this directory
from selectolax.lexbor import LexborHTMLParser

from crawler.page.extract import PageFacts, _follow_refresh, largest_candidate
from crawler.page.fingerprint import fingerprint
from crawler.urls.normalize import PageLinks, resolve_link
from crawler.urls.robots import meta_directives


def extract(
    html: str, page_url: str, token: str, *, fingerprint_ignoring: tuple[str, ...] | None = None,
    images: bool = False, anchors: bool = False,
) -> PageFacts:
    """Read links, canonical, meta robots and meta refresh from a page.

    The tags come from :func:`crawler.page.scan.scan`, which reads them without
    building a DOM (a third of the CPU lexbor's tree and walk take). A page is
    parsed into lexbor's DOM only when it needs what a token stream cannot give:
    each link's anchor text (audits) or a fingerprint of its content
    (``fingerprint_ignoring``, CSS selectors, possibly none).
    """
    if not anchors and fingerprint_ignoring is None:
        return facts_from(scan(html, images=images), page_url, token)
    tree = LexborHTMLParser(html)
    texts: list[str] | None = [] if anchors else None
    facts = facts_from(dom_scan(tree, images=images, anchor_texts=texts), page_url, token,
                       anchor_texts=texts)
    if fingerprint_ignoring is not None:
        facts.content_hash = fingerprint(tree, fingerprint_ignoring)
    return facts


def dom_scan(tree: LexborHTMLParser, *, images: bool = False,
             anchor_texts: list[str] | None = None) -> Scanned:
    """The same raw material as :func:`crawler.page.scan.scan`, read from lexbor's DOM:
    for the pages that need the DOM anyway, and the differential test's reference.
    With ``anchor_texts``, each ``<a href>``'s text (or ``alt``) is appended to it."""
    found = Scanned()
    for node in tree.tags("base"):
        attrs = node.attributes
        if "href" in attrs:
            found.base = attrs["href"] or ""
            break
    # lexbor gives a valueless attribute (<a href>) as None; the standard's value is ""
    for node in tree.tags("a"):
        attrs = node.attributes  # one dict: cheaper than two attrs.get()
        if "href" in attrs:
            found.anchors.append((attrs["href"] or "", attrs.get("rel")))
            if anchor_texts is not None:
                anchor_texts.append(node.text(deep=True) or attrs.get("alt") or "")
    for node in tree.tags("area"):
        attrs = node.attributes
        if "href" in attrs:
            found.areas.append((attrs["href"] or "", attrs.get("rel")))
            if anchor_texts is not None:
                anchor_texts.append(node.text(deep=True) or attrs.get("alt") or "")
    for node in tree.tags("link"):
        parent = node.parent
        if parent is not None and parent.tag == "head":
            found.head_links.append({k: v or "" for k, v in node.attributes.items()})
    found.metas = [{k: v or "" for k, v in node.attributes.items()} for node in tree.tags("meta")]
    for node in tree.tags("title"):
        found.title = node.text() or ""
        break
    if images:
        found.images = [(attrs.get("src"), attrs.get("srcset"))
                        for attrs in (node.attributes for node in tree.css("img, picture source"))]
    return found


def facts_from(found: Scanned, page_url: str, token: str, *,
               anchor_texts: list[str] | None = None) -> PageFacts:
    """What the tags mean for a crawl: links resolved against ``<base href>`` (each
    once, ``rel=nofollow`` counted instead), the canonical (several that disagree
    cancel out, as search engines treat them), hreflang alternates, robots
    directives, an instant refresh, the title and the images."""
    facts = PageFacts()
    base = page_url
    if found.base is not None:
        base = resolve_link(page_url, found.base) or page_url

    seen: set[str] = set()
    links = facts.links
    resolve = PageLinks(base).resolve
    for index, (href, rel) in enumerate(chain(found.anchors, found.areas)):
        if rel and "nofollow" in rel.lower().split():
            facts.nofollow_links += 1
            continue
        url = resolve(href)
        if url is not None and url not in seen:
            seen.add(url)
            links.append(url)
            if anchor_texts is not None and index < len(anchor_texts):
                facts.anchors[url] = " ".join(anchor_texts[index].split())[:ANCHOR_CHARS]

    canonicals: set[str | None] = set()
    for attrs in found.head_links:
        rel, href = attrs.get("rel"), attrs.get("href")
        if rel and href is not None:
            rels = rel.lower().split()
            if "canonical" in rels:
                canonicals.add(resolve_link(base, href))
            elif "alternate" in rels and (code := attrs.get("hreflang")) is not None:
                facts.alternates.append((code.strip(), resolve_link(base, href)))
    if len(canonicals) == 1:
        facts.canonical = canonicals.pop()

    robots: list[str] = []
    refresh: str | None = None
    for attrs in found.metas:
        content = attrs.get("content")
        if content is None:
            continue
        name = attrs.get("name")
        if name is not None and name.strip().lower() in ("robots", token):
            robots.append(content)
        equiv = attrs.get("http-equiv")
        if refresh is None and equiv is not None and equiv.strip().lower() == "refresh":
            refresh = content
    facts.directives = meta_directives(robots)
    if refresh is not None:
        _follow_refresh(refresh, base, facts, seen)
    if found.images:
        facts.images = page_images(found.images, base)
    if found.title is not None:
        facts.title = " ".join(found.title.split())[:TITLE_CHARS]
    return facts


TITLE_CHARS = 300
ANCHOR_CHARS = 120


MAX_IMAGES = 1000


def page_images(candidates: list[tuple[str | None, str | None]], base: str) -> list[str]:
    """The page's images as Google reads them for image sitemaps: ``<img src>``, the
    largest candidate of an ``srcset`` (on ``<img>`` and ``<picture><source>``);
    absolute, each once, in page order, at most 1,000; ``data:`` URIs left out
    (resolution refuses every scheme but http(s))."""
    found: dict[str, None] = {}
    for src, srcset in candidates:
        for candidate in (src, largest_candidate(srcset)):
            if candidate:
                url = resolve_link(base, candidate)
                if url is not None and url != base:
                    found.setdefault(url)
        if len(found) >= MAX_IMAGES:
            break
    return list(found)[:MAX_IMAGES]
