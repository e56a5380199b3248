"""A page's meaningful content, hashed — so "changed" means changed for a reader.

Dynamic sites rarely send ``Last-Modified``; comparing this hash between runs
is how an incremental crawl learns when a page really changed. It covers the
visible text and the links, and leaves out what changes on every request
without changing the page: scripts, styles, comments, hidden inputs (CSRF
tokens), whitespace, and whatever ``--ignore-selector`` names (a clock in the
footer, a rotating banner).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from selectolax.lexbor import LexborHTMLParser, SelectolaxError

NOISE_TAGS = ["script", "style", "noscript", "template"]
DIGEST_SIZE = 16
_WHITESPACE = b" \t\n\r\x0b\x0c"


def check_selector(selector: str) -> bool:
    """Can selectolax parse this CSS selector?"""
    try:
        LexborHTMLParser("<p></p>").css(selector)
    except SelectolaxError:
        return False
    return bool(selector.strip())


def fingerprint(tree: LexborHTMLParser, ignore: Sequence[str],
                hrefs: list[str] | None = None) -> bytes:
    """Hash of the page's text and link targets. Mutates ``tree``: call it last.

    Links are taken after the noise is removed, so a rotating banner's link
    inside an ignored element does not count as a change either. ``hrefs`` are
    the page's ``a`` then ``area`` hrefs in tree order, as the caller read them
    already: used when taking the noise out removed no element that could hold
    a link and nothing is ignored, which spares a walk of the whole tree (a
    fifth of a page's hash). Hidden inputs (CSRF tokens) are not looked for: a
    token is an attribute, and neither text nor a link, so it never counted.
    """
    holds_elements = False
    for tag in NOISE_TAGS:
        for node in tree.tags(tag):
            # a script's or a style's children are text; a <noscript>, or a script
            # in SVG, may hold links the page's own walk counted
            holds_elements = holds_elements or next(node.iter(), None) is not None
            node.decompose(recursive=False)  # unlinked, as strip_tags does
    for selector in ignore:
        for node in tree.css(selector):
            node.decompose()
    root = tree.root
    text = root.text(separator=" ").encode("utf-8", "replace") if root is not None else b""
    digest = hashlib.blake2b(digest_size=DIGEST_SIZE)
    # Whitespace is dropped altogether (one C pass): re-indented or re-wrapped
    # markup is no change, and a real edit changes more than spacing.
    digest.update(text.translate(None, _WHITESPACE))
    if hrefs is None or holds_elements or ignore:
        hrefs = [href for tag in ("a", "area") for node in tree.tags(tag)
                 if (href := node.attrs.get("href")) is not None]
    digest.update("\n".join(hrefs).encode("utf-8", "replace"))
    return digest.digest()
