"""A plain crawl's page facts read by lol_html's tokenizer, with no tree built: an
experiment for issue #27, measured by ``compare.py`` and not adopted (bench/README.md).

Building lexbor's tree and walking it is most of what reading a page costs
(issue #27); lol_html (through python-lolhtml) tokenizes the page in Rust and
calls back only for the elements asked for, in 0.5-0.65 of the time
(``bench/parsers.py``). But a tokenizer does not build the tree the HTML
standard builds, and the tree is what a browser (and :func:`extract`) reads: a
``<link>`` is the head's only if the tree builder put it there, ``<template>``
holds no links, a table moves what does not belong in it. So this reads a page
only where the tokens and the tree cannot disagree on what the crawl takes
from it, and answers ``None`` everywhere else, for the tree to read:

* the page is UTF-8 bytes (:func:`html_source`: no NUL, no byte order mark)
  with an explicit ``<head>`` that only a doctype, comments and ``<html>``
  precede;
* the head holds only what may stay in a head (``base``, ``link``, ``meta``,
  ``title``, ``style``, ``script``), and no text but whitespace between them;
* no ``<template>``, ``<noscript>`` (lexbor reads its content as markup, as a
  browser without scripts does), links inside ``<select>``, or element a table
  would move out of itself;
* a ``link rel=canonical`` or ``rel=alternate hreflang`` stands in the head.

lol_html hands attribute values over as written; character references are
decoded here, by the attribute rules of the HTML standard.

What still differs (``compare.py --hostile``): a misnested ``<a>`` that the
tree builder clones (``<a rel=nofollow><div>…</a>``) is one link to the tokens
and two to the tree, as to Chromium, which counts both.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Any

# the tag scanner's (bench/scan_experiment, on the path compare.py sets): the HTML
# standard's attribute rules for references, and what a page's tags mean
from extract_two_paths import facts_from
from scan import Scanned, attribute_value

from crawler.page.extract import PageFacts

try:
    from lolhtml import HTMLRewriter
except ImportError:  # the tree reads every page
    HTMLRewriter = None  # type: ignore[assignment, misc]

# what may precede an explicit <head> without the tree builder making one first
_HEAD_START = re.compile(rb"<head[\t\n\f\r />]", re.IGNORECASE)
_BEFORE_HEAD = re.compile(
    rb"(?:[\t\n\f\r ]+|<!--(?!-?>)(?:(?!--!?>).)*--!?>|<!doctype[^>]*>|<\?[^>]*>"
    rb"|<html(?:[\t\n\f\r /](?:[^<>\"']|\"[^\"]*\"|'[^']*')*)?>)*",
    re.IGNORECASE | re.DOTALL)
_WS = "\t\n\f\r "
_ASCII_RUNS = re.compile(r"[\t\n\f\r ]+")
_HTML = "http://www.w3.org/1999/xhtml"
TITLE_CHARS = 300

# Elements the tokens cannot place as the tree does: their presence sends the page
# to the tree. A table keeps only its own parts; anything else is moved before it.
# (lol_html says an <svg>'s <title> is HTML's.)
_TABLE_PARTS = "caption, colgroup, col, tbody, thead, tfoot, tr, td, th, script, style, input"
_ROW_PARTS = "tr, td, th, script, style, input"
_TREE_ONLY = ", ".join((
    "template", "noscript", "select a", "select area", "svg title", "math title",
    f"table > :not({_TABLE_PARTS})",
    *(f"{group} > :not({_ROW_PARTS})" for group in ("tbody", "thead", "tfoot")),
    "tr > :not(td, th, script, style, input)",
))
_IN_HEAD = frozenset(("base", "link", "meta", "title", "style", "script", "body"))


def _attr(element: object, name: str) -> str | None:
    value = element.get_attribute(name)  # type: ignore[attr-defined]
    if value is not None and "&" in value:
        return attribute_value(value)
    return value


def _attrs(element: object, names: tuple[str, ...]) -> dict[str, str]:
    return {name: value for name in names if (value := _attr(element, name)) is not None}


class _Reader:
    """lol_html's handlers for one page, and what they found.

    lol_html calls the handlers registered for one text chunk in the order they
    were registered: the head's raw-text children claim their chunks first, so
    the head's own handler knows a chunk of text that stands in the head itself.
    """

    def __init__(self) -> None:
        self.tree_needed = False
        self.a: list[tuple[str, str | None]] = []
        self.area: list[tuple[str, str | None]] = []
        self.base: str | None = None
        self.head_links: list[dict[str, str]] = []  # the head's canonical and hreflang links
        self.metas: list[dict[str, str]] = []
        self.title: list[str] | None = None
        self._title_open = False
        self._claimed = False  # a head child's text chunk, seen before the head's handler
        self._head_link = False
        self._in_body = False

    def rewriter(self) -> HTMLRewriter:
        rewriter = HTMLRewriter(_discard)
        rewriter.on("a[href], area[href]", _Handler(element=self._link))
        rewriter.on(_TREE_ONLY, _Handler(element=self._needs_tree))
        rewriter.on("base[href]", _Handler(element=self._base))
        rewriter.on("meta", _Handler(element=self._meta))
        rewriter.on("head > *", _Handler(element=self._head_child, text=self._claim))
        rewriter.on("title", _Handler(element=self._title, text=self._title_text))
        rewriter.on("head", _Handler(text=self._head_text))
        rewriter.on("link[rel]", _Handler(element=self._any_link))
        return rewriter

    def _link(self, element: object) -> None:
        href = _attr(element, "href")
        if href is not None:
            found = self.a if element.tag_name == "a" else self.area  # type: ignore[attr-defined]
            found.append((href, _attr(element, "rel")))

    def _needs_tree(self, _element: object) -> None:
        self.tree_needed = True

    def _base(self, element: object) -> None:
        if self.base is None:
            self.base = _attr(element, "href")

    def _meta(self, element: object) -> None:
        self.metas.append(_attrs(element, ("name", "http-equiv", "content")))

    def _claim(self, _chunk: object) -> None:
        self._claimed = True

    def _title(self, element: object) -> None:
        if self.title is None and element.namespace_uri == _HTML:  # type: ignore[attr-defined]
            self.title, self._title_open = [], True

    def _title_text(self, chunk: object) -> None:
        if self._title_open:
            self.title.append(chunk.text)  # type: ignore[union-attr, attr-defined]
            if chunk.last_in_text_node:  # type: ignore[attr-defined]
                self._title_open = False

    def _head_text(self, chunk: object) -> None:
        if self._claimed:
            self._claimed = False
        elif not self._in_body and chunk.text.strip(_WS):  # type: ignore[attr-defined]
            self.tree_needed = True  # text ends the head: what follows is the body's

    def _head_child(self, element: object) -> None:
        tag = element.tag_name  # type: ignore[attr-defined]
        if tag not in _IN_HEAD:
            self.tree_needed = True  # it ends the head: the tree builder moves on to the body
        elif tag == "body":
            self._in_body = True
        elif tag == "link":
            self._head_link_element(element)

    def _head_link_element(self, element: object) -> None:
        self._head_link = True
        self.head_links.append(_attrs(element, ("rel", "href", "hreflang")))

    def _any_link(self, element: object) -> None:
        if self._head_link:
            self._head_link = False
            return
        rels = (_attr(element, "rel") or "").lower().split()
        if "canonical" in rels or ("alternate" in rels and element.has_attribute("hreflang")):  # type: ignore[attr-defined]
            self.tree_needed = True  # after </head> the tree may still put it in the head


class _Handler:
    __slots__ = ("element", "text")

    def __init__(self, element: object = None, text: object = None) -> None:
        if element is not None:
            self.element = element
        if text is not None:
            self.text = text


def _discard(_chunk: bytes) -> None:
    """A rewriter streams the page back out; reading it needs none of that."""


def read_tokens(html: bytes) -> _Reader | None:
    """What lol_html's handlers found on the page, or ``None`` where the tree must
    read it (see the module's docstring), or lol_html is not installed."""
    if HTMLRewriter is None:
        return None
    head = _HEAD_START.search(html)
    if head is None or _BEFORE_HEAD.fullmatch(html, 0, head.start()) is None:
        return None
    reader = _Reader()
    rewriter = reader.rewriter()
    try:
        rewriter.write(html)
        rewriter.end()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # a panic in Rust arrives as a BaseException
        return None
    return None if reader.tree_needed else reader


def title_text(chunks: list[str] | None) -> str | None:
    """The title as :func:`crawler.page.extract.page_title` gives it, from its raw
    text (an escapable raw text element: references decoded as in text)."""
    if chunks is None:
        return None
    text = "".join(chunks)
    if "&" in text:
        text = unescape(text)
    return _ASCII_RUNS.sub(" ", text).strip(_WS)[:TITLE_CHARS]



def facts_from_tokens(tokens: Any, page_url: str, token: str) -> PageFacts:
    """``extract``'s answer for a plain crawl from what the tokens found: what they
    mean is read as for the tag scanner (scan_experiment), the title as
    ``extract`` collapses it (ASCII whitespace only)."""
    found = Scanned(anchors=tokens.a, areas=tokens.area, base=tokens.base,
                    head_links=tokens.head_links, metas=tokens.metas)
    facts = facts_from(found, page_url, token)
    facts.title = title_text(tokens.title)
    return facts
