"""What an audit row says of a page beyond its links: meta description, the first
``<h1>`` and how many there are, and how many words its body shows — pure.

Read only for audits and reports (``anchors``' flag): a plain crawl pays nothing.
Words are counted in the body's text with scripts, styles, templates and
``noscript`` left out, split on whitespace, the way SEO tools count them.
"""

from __future__ import annotations

from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

DESCRIPTION_CHARS = 500
H1_CHARS = 300
_INVISIBLE = ("script", "style", "template", "noscript")


@dataclass(slots=True)
class Facts:
    description: str | None
    h1: str | None
    h1_count: int
    word_count: int


def meta_description(tree: LexborHTMLParser) -> str | None:
    for node in tree.tags("meta"):
        attrs = node.attributes
        if (attrs.get("name") or "").strip().lower() == "description":
            return " ".join((attrs.get("content") or "").split())[:DESCRIPTION_CHARS]
    return None


def page_facts(tree: LexborHTMLParser) -> Facts:
    description = meta_description(tree)
    headings = tree.tags("h1")
    h1 = " ".join((headings[0].text(deep=True) or "").split())[:H1_CHARS] if headings else None
    words = 0
    body = tree.body
    if body is not None:  # the body's words, less those of what is never shown
        words = len((body.text(deep=True, separator=" ") or "").split())
        for node in body.css(", ".join(_INVISIBLE)):
            words -= len((node.text(deep=True, separator=" ") or "").split())
    return Facts(description, h1, len(headings), max(words, 0))
