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
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.page.client_rendered import client_rendered
from crawler.page.custom_extract import Rule, extract_values
from crawler.page.fingerprint import fingerprint
from crawler.page.images import page_images
from crawler.page.page_facts import Facts, meta_description, page_facts
from crawler.page.soft_404 import ProbeAnswer, soft_404_reason
from crawler.urls.normalize import resolve_link
from crawler.urls.page_links import PageLinks
from crawler.urls.robots import Directives, meta_directives

if TYPE_CHECKING:  # read only with --news, --videos or an audit: imported then
    from crawler.page.news_video import Video
    from crawler.page.structured_data import Structured

_REFRESH = re.compile(
    r"""^\s*(\d+)(?:\.\d*)?\s*(?:[;,]\s*(?:url\s*=\s*)?["']?([^"']*)["']?)?""",
    re.IGNORECASE,
)

# the rel values the link graph reports: what search engines read of a link
LINK_RELS = frozenset({"nofollow", "ugc", "sponsored"})
_UNRESOLVED: Any = object()  # an href not resolved yet (resolving gives None for some)
MAX_EDGES = 5000  # link-graph rows a page gives; a page of 100,000 links is a trap


@dataclass(slots=True)
class PageFacts:
    """What one page says about itself and where it leads."""

    links: list[str] = field(default_factory=list)
    nofollow_links: int = 0
    canonical: str | None = None
    directives: Directives = field(default_factory=Directives)
    refresh_to: str | None = None
    content_hash: bytes | None = None
    # <link rel=alternate hreflang> in the head: (code as written, resolved URL or None)
    alternates: list[tuple[str, str | None]] = field(default_factory=list)
    images: list[str] = field(default_factory=list)  # with images=True only
    title: str | None = None  # as browsers show it: the first HTML <title>, not an icon's
    # with anchors=True: each link's first anchor text (for an audit's "found on")
    anchors: dict[str, str] = field(default_factory=dict)
    # with client_rendering=True: why the raw HTML looks built by JavaScript, if it does
    client_rendered: str | None = None
    # with fragments=True: (link, fragment) of each #fragment link, and the page's own
    # anchors (id attributes and <a name>), for --check-fragments
    fragment_links: list[tuple[str, str]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    page: Facts | None = None  # with anchors=True (audits): description, h1, words
    soft_404: str | None = None  # why the page is a "not found" page (crawler.page.soft_404)
    extracted: tuple[tuple[str, Any], ...] = ()  # --extract's (NAME, value)s
    structured: Structured | None = None  # with structured=True, when the page has any
    # with edges=True (--links): every a/area link as (target, anchor text, rel values),
    # nofollow ones too, in page order, the first MAX_EDGES
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    # with news=True: when the article was published, and its headline
    published: datetime | None = None
    headline: str | None = None
    # with videos=True: its complete videos, and what the incomplete ones lack
    videos: list[Video] = field(default_factory=list)
    video_problems: list[str] = field(default_factory=list)
    # no link and no text of its own: a single-page app's shell, the same at every URL
    shell: bool = False


# From this size (bytes or characters) a page's title and head links are found with
# CSS, which starts slower than a tags() walk of the tree but stops early: the
# Python docs' pages (~100 KB) read 4 % faster, the synthetic site's 20 KB pages
# 5 % slower that way (bench/README.md).
LARGE_PAGE = 64 * 1024


def _head_links(tree: LexborHTMLParser) -> list[LexborNode]:
    head = tree.head
    return head.css("link") if head is not None else []


def extract(
    html: str | bytes, page_url: str, token: str, *,
    fingerprint_ignoring: tuple[str, ...] | None = None, images: bool = False,
    anchors: bool = False, client_rendering: bool = False,
    fragments: bool = False, extractions: tuple[Rule, ...] = (), structured: bool = False,
    edges: bool = False, news: bool = False, videos: bool = False,
    soft_404: tuple[ProbeAnswer, ...] | None = None,
) -> PageFacts:
    """Read links, canonical, meta robots and meta refresh from a page.

    With ``fingerprint_ignoring`` (CSS selectors, possibly none), also hash the
    page's meaningful content for change detection. Elements are found with
    ``tags()`` rather than CSS selectors: on a typical page that is a third of
    the extraction time, and this runs for every page crawled. But each
    ``tags()`` reads the whole tree (30 µs on a Python-docs page, however few
    it finds), where CSS costs a few µs to start on a tree and then stops at
    the first title, or reads the head alone for its links: on a page of
    :data:`LARGE_PAGE` bytes or more, those two are found with CSS.
    """
    asked = _Asked(fingerprint_ignoring=fingerprint_ignoring, images=images, anchors=anchors,
                   client_rendering=client_rendering, fragments=fragments,
                   extractions=extractions, structured=structured, edges=edges, news=news,
                   videos=videos, soft_404=soft_404)
    tree = LexborHTMLParser(html)
    # the text, for what reads it rather than the tree (bytes are UTF-8: html_source)
    page_text = html if isinstance(html, str) else ""
    if not page_text and html and (structured or news or videos or client_rendering
                                   or extractions):
        page_text = html.decode("utf-8", "replace")  # type: ignore[union-attr]
    facts = PageFacts()
    base = _base_of(tree, page_url)
    resolve = PageLinks(base).resolve
    seen: set[str] = set()
    hrefs = _read_links(tree, facts, resolve, seen, asked)
    large = len(html) >= LARGE_PAGE
    _read_head_links(tree, facts, resolve, large)
    _read_meta(tree, facts, token, base, seen)
    _read_asked(tree, facts, _Page(page_url, base, page_text, large, html), asked)
    facts.shell = not facts.links and not has_own_text(tree)
    if fingerprint_ignoring is not None:  # last: it takes noise out of the tree
        facts.content_hash = fingerprint(tree, fingerprint_ignoring, hrefs)
    return facts


class _Asked(NamedTuple):
    """What a caller asked of :func:`extract` beyond links, canonical and robots."""

    fingerprint_ignoring: tuple[str, ...] | None
    images: bool
    anchors: bool
    client_rendering: bool
    fragments: bool
    extractions: tuple[Rule, ...]
    structured: bool
    edges: bool
    news: bool
    videos: bool
    soft_404: tuple[ProbeAnswer, ...] | None


class _Page(NamedTuple):
    url: str
    base: str  # where its links resolve from (its <base href>, else its URL)
    text: str  # decoded, for what reads the text rather than the tree
    large: bool  # at least LARGE_PAGE: found with CSS, which stops early
    source: str | bytes  # the HTML as read


def _base_of(tree: LexborHTMLParser, page_url: str) -> str:
    for node in tree.tags("base"):
        href = node.attrs.get("href")
        if href is not None:
            return resolve_link(page_url, href) or page_url
    return page_url


def _read_links(tree: LexborHTMLParser, facts: PageFacts, resolve: Callable[[str], str | None],
                seen: set[str], asked: _Asked) -> list[str] | None:
    """The a and area links, in page order, once each; the hrefs as written when a
    fingerprint will want them (spares it a walk of its own)."""
    links = facts.links
    edges, fragments, anchors = asked.edges, asked.fragments, asked.anchors
    hrefs: list[str] | None = [] if asked.fingerprint_ignoring is not None else None
    for tag in ("a", "area"):
        for node in tree.tags(tag):
            attrs = node.attributes  # one dict: cheaper than two attrs.get()
            href = attrs.get("href")
            if href is None:
                continue
            if hrefs is not None:
                hrefs.append(href)
            rel = attrs.get("rel")
            url: str | None = _UNRESOLVED
            if edges and len(facts.edges) < MAX_EDGES:
                url = resolve(href)  # once: the link graph's row, then the link
                _edge(facts.edges, url, node, attrs, rel)
            if rel and "nofollow" in rel.lower().split():
                facts.nofollow_links += 1
                continue
            if url is _UNRESOLVED:
                url = resolve(href)
            if fragments and url is not None and "#" in href:
                fragment = fragment_of(href)
                if fragment is not None:
                    facts.fragment_links.append((url, fragment))
            if url is not None and url not in seen:
                seen.add(url)
                links.append(url)
                if anchors:
                    text = " ".join((node.text(deep=True) or attrs.get("alt") or "").split())
                    facts.anchors[url] = text[:ANCHOR_CHARS]
    return hrefs


def _read_head_links(tree: LexborHTMLParser, facts: PageFacts,
                     resolve: Callable[[str], str | None], large: bool) -> None:
    """The canonical (when the head names one, and only one) and hreflang alternates."""
    canonicals: set[str | None] = set()
    for node in _head_links(tree) if large else tree.tags("link"):
        attrs = node.attrs
        rel, href = attrs.get("rel"), attrs.get("href")
        parent = node.parent
        if rel and href is not None and parent is not None and parent.tag == "head":
            rels = rel.lower().split()
            if "canonical" in rels:
                canonicals.add(resolve(href))
            elif "alternate" in rels and (code := attrs.get("hreflang")) is not None:
                facts.alternates.append((code.strip(), resolve(href)))
    if len(canonicals) == 1:
        facts.canonical = canonicals.pop()


def _read_meta(tree: LexborHTMLParser, facts: PageFacts, token: str, base: str,
               seen: set[str]) -> None:
    """Meta robots (for every robot and for ours) and meta refresh."""
    robots: list[str] = []
    refresh: str | None = None
    for node in tree.tags("meta"):
        attrs = node.attrs
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


def _read_asked(tree: LexborHTMLParser, facts: PageFacts, page: _Page, asked: _Asked) -> None:
    """Whatever the caller asked for beyond links (each loaded only when asked for: a
    plain crawl does not pay to import them)."""
    news, videos = asked.news, asked.videos
    if asked.structured or news or videos:
        from crawler.page.structured_data import has_structured_data, read_structured

        if has_structured_data(tree):
            facts.structured = read_structured(page.text, page.url)
    if asked.images:
        facts.images = page_images(tree, page.base)
    facts.title = page_title(tree, page.large)
    if asked.soft_404 is not None:
        facts.soft_404 = soft_404_reason(tree, facts.title, page.source, asked.soft_404)
    if asked.client_rendering:
        facts.client_rendered = client_rendered(tree, page.url, facts.links, page.text)
    if asked.fragments:
        facts.ids = page_ids(tree)
    if asked.anchors:  # an audit: what the page says of itself
        facts.page = page_facts(tree)
    if asked.extractions:
        facts.extracted = extract_values(asked.extractions, tree, page.text)
    if news or videos:
        from crawler.page.news_video import article_facts, page_videos

        if news:
            facts.published, facts.headline = article_facts(facts.structured, facts.title)
        if videos:
            facts.videos, facts.video_problems = page_videos(
                tree, facts.structured, page.base, facts.title, meta_description(tree))


MAX_IDS = 10_000  # anchors a page may keep for --check-fragments
_NOT_SHOWN = "script, style, noscript, template"


def has_own_text(tree: LexborHTMLParser) -> bool:
    """Does the body show any text (scripts, styles and templates aside)? Asked of
    pages without a link only: an app's shell shows none until a browser runs it."""
    body = tree.body
    if body is None:
        return False
    shown = len((body.text(deep=True, separator=" ") or "").split())
    hidden = sum(len((node.text(deep=True, separator=" ") or "").split())
                 for node in body.css(_NOT_SHOWN))
    return shown > hidden


def fragment_of(href: str) -> str | None:
    """The anchor a link points into, percent-decoded; None for none, for the top of
    the page (``#``, ``#top``) and for a client-side route (``#/view``, ``#!view``),
    which names no element."""
    fragment = urllib.parse.unquote(href.partition("#")[2])
    if not fragment or fragment.lower() == "top" or fragment.startswith(("/", "!")):
        return None
    return fragment


def page_ids(tree: LexborHTMLParser) -> list[str]:
    """What a fragment can point at: every ``id``, and ``<a name>`` (the HTML standard's
    "indicated part of the document")."""
    found: dict[str, None] = {}
    for node in tree.css("[id], a[name]"):
        attrs = node.attributes
        for value in (attrs.get("id"), attrs.get("name") if node.tag == "a" else None):
            if value:
                found.setdefault(value)
        if len(found) >= MAX_IDS:
            break
    return list(found)


TITLE_CHARS = 300
_ASCII_WHITESPACE = "\t\n\f\r "
_ASCII_RUNS = re.compile(r"[\t\n\f\r ]+")
# Inside these, SVG and MathML hold HTML again (the HTML standard's integration points).
_HTML_AGAIN = frozenset({"foreignObject", "desc", "title", "mi", "mo", "mn", "ms", "mtext"})
_FOREIGN = frozenset({"svg", "math"})
# what may stand before the title in a head and hold no element (noscript and
# template may)
_HEAD_LEAVES = frozenset({"meta", "link", "script", "style", "base"})


def page_title(tree: LexborHTMLParser, large: bool) -> str | None:
    """What a browser shows as the page's title (``document.title``), or ``None``.

    The first ``<title>`` in tree order that is HTML's: an icon's ``<svg><title>``
    is a tooltip, and taking it named pages after their logos. Whitespace is
    collapsed as browsers do, ASCII only (a no-break space is part of the text).
    Large pages look with CSS, which stops at the first (see :data:`LARGE_PAGE`).
    Most pages say it in their head, where it is found first (:func:`_head_title`)."""
    first = _head_title(tree) or _first_html_title(tree, large)
    if first is None:
        return None
    text = _ASCII_RUNS.sub(" ", first.text() or "").strip(_ASCII_WHITESPACE)
    return text[:TITLE_CHARS]


def _first_html_title(tree: LexborHTMLParser, large: bool) -> LexborNode | None:
    first = tree.css_first("title") if large else next(iter(tree.tags("title")), None)
    if first is not None and not _in_html(first):
        found = tree.css("title") if large else tree.tags("title")
        first = next((node for node in found if _in_html(node)), None)
    return first


def _head_title(tree: LexborHTMLParser) -> LexborNode | None:
    """The head's ``<title>`` when nothing before it can hold one, or ``None`` (then
    the whole tree is searched). The parser puts the head first in the tree, and
    what may come before a title there holds no element (metas, links, scripts,
    styles, a base), so that title is the first in tree order, and HTML's. A few
    nodes read, where finding every title walks the whole page (6.9 µs for 20 KB)."""
    head = tree.head
    if head is None:
        return None
    for node in head.iter():
        tag = node.tag
        if tag == "title":
            return node
        if tag not in _HEAD_LEAVES:
            return None
    return None


def _in_html(node: LexborNode) -> bool:
    """Is ``node`` in the HTML namespace? The parser puts what follows ``<svg>`` or
    ``<math>`` in theirs, up to the nearest point where they hold HTML again."""
    parent = node.parent
    while parent is not None:
        tag = parent.tag
        if tag in _HTML_AGAIN:
            return True
        if tag == "annotation-xml" and (parent.attrs.get("encoding") or "").lower() in (
                "text/html", "application/xhtml+xml"):
            return True
        if tag in _FOREIGN:
            return False
        parent = parent.parent
    return True


ANCHOR_CHARS = 120


def _follow_refresh(content: str, base: str, facts: PageFacts, seen: set[str]) -> None:
    """An instant refresh acts as a redirect; a delayed one as a link."""
    match = _REFRESH.match(content)
    if not match or not match.group(2) or not match.group(2).strip():
        return
    target = resolve_link(base, match.group(2).strip())
    if int(match.group(1)) == 0:
        facts.refresh_to = target
    elif target is not None and target not in seen:
        seen.add(target)
        facts.links.append(target)


def _edge(edges: list[tuple[str, str, str]], url: str | None, node: Any,
          attrs: dict[str, str | None], rel: str | None) -> None:
    """One row of the link graph: the rel values a crawler cares about, as written."""
    if url is None:
        return
    text = " ".join((node.text(deep=True) or attrs.get("alt") or "").split())[:ANCHOR_CHARS]
    kept = " ".join(value for value in (rel or "").lower().split() if value in LINK_RELS)
    edges.append((url, text, kept))
