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


def check_selector(selector: str) -> bool:
    """Can selectolax parse this CSS selector?"""
    try:
        LexborHTMLParser("<p></p>").css(selector)
    except SelectolaxError:
        return False
    return bool(selector.strip())


def fingerprint(tree: LexborHTMLParser, ignore: Sequence[str]) -> bytes:
    """Hash of the page's text and link targets. Mutates ``tree``: call it last.

    Links are taken after the noise is removed, so a rotating banner's link
    inside an ignored element does not count as a change either.
    """
    tree.strip_tags(NOISE_TAGS)
    for node in tree.tags("input"):
        if (node.attrs.get("type") or "").strip().lower() == "hidden":
            node.decompose()
    for selector in ignore:
        for node in tree.css(selector):
            node.decompose()
    root = tree.root
    text = root.text(separator=" ").encode("utf-8", "replace") if root is not None else b""
    digest = hashlib.blake2b(digest_size=DIGEST_SIZE)
    # Whitespace runs fold to one space. Splitting bytes (ASCII whitespace) is
    # twice as fast as splitting str on a 20 KB page; a changed no-break space
    # still counts as a change.
    digest.update(b" ".join(text.split()))
    for tag in ("a", "area"):
        for node in tree.tags(tag):
            href = node.attrs.get("href")
            if href is not None:
                digest.update(b"\n" + href.encode("utf-8", "replace"))
    return digest.digest()
