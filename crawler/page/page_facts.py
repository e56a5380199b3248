"""What an audit row says of a page beyond its links: meta description, the first
``<h1>`` and how many there are, and how many words its body shows — pure.

Read only for audits and reports (``anchors``' flag): a plain crawl pays nothing.
Words are counted in the body's text with scripts, styles, templates and
``noscript`` left out, split on whitespace, the way SEO tools count them.

The page's *outline* names its template: the tags of the body's first three
levels, a run of equal siblings counted once (a list of 3 items and one of 30
have the same outline), hashed short. Pages built from one template share it,
so an audit can say "1 template, 1,154 pages" where a list of URLs says nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser
from selectolax.lexbor import LexborNode as Node

DESCRIPTION_CHARS = 500
H1_CHARS = 300
_INVISIBLE = ("script", "style", "template", "noscript")
OUTLINE_DEPTH = 3


@dataclass(slots=True)
class Facts:
    description: str | None
    h1: str | None
    h1_count: int
    word_count: int
    outline: str | None = None


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
    return Facts(description, h1, len(headings), max(words, 0),
                 outline(body) if body is not None else None)


def outline(body: Node) -> str:
    """A short hash of the body's tag outline (see the module's docstring)."""
    tags: list[str] = []
    level: list[Node] = [body]
    for _depth in range(OUTLINE_DEPTH):
        below: list[Node] = []
        for node in level:
            previous = None
            child = node.child
            while child is not None:
                tag = child.tag
                if tag and not tag.startswith(("-", "!")) and tag not in _INVISIBLE:
                    if tag != previous:
                        tags.append(tag)
                        below.append(child)
                    previous = tag
                child = child.next
            tags.append("/")
        level = below
    return hashlib.blake2b(" ".join(tags).encode(), digest_size=5).hexdigest()
