"""Does a page's raw HTML show that JavaScript builds it? The rule ``--render auto``
renders by — pure.

A page is rendered when its raw HTML has any of, in this order (the first one
found is the reason reported):

1. an empty mount element: ``#root``, ``#app``, ``#__next``, ``#__nuxt``,
   ``#___gatsby``, ``#svelte`` or ``<app-root>`` with no child element and no text;
2. a framework's hydration marker: ``script#__NEXT_DATA__``, ``window.__NUXT__``,
   ``[data-server-rendered]`` (Vue), ``[ng-version]`` (Angular),
   ``[data-reactroot]`` (React);
3. a ``<noscript>`` asking for JavaScript (its text names it);
4. scripts, and no link to the page's own origin.

Everything else is read from its raw HTML. The PostgreSQL documentation, for
one, has none of these on any page (``bench/render.py`` checks it).
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from crawler.urls.normalize import origin_of

MOUNT_IDS = ("root", "app", "__next", "__nuxt", "___gatsby", "svelte")
_MARKERS = (("script#__NEXT_DATA__", "Next.js data (script#__NEXT_DATA__)"),
            ("[data-server-rendered]", "Vue hydration ([data-server-rendered])"),
            ("[ng-version]", "Angular ([ng-version])"),
            ("[data-reactroot]", "React ([data-reactroot])"))
# one query for every sign an element gives: each CSS query walks the whole tree
_SIGNS = ", ".join([*(f"#{name}" for name in MOUNT_IDS), "app-root",
                    *(selector for selector, _named in _MARKERS)])


def client_rendered(tree: LexborHTMLParser, page_url: str, links: list[str],
                    html: str = "") -> str | None:
    """Why this page needs a browser to be read, or None when its raw HTML will do.
    ``html``: the page's text, searched for Nuxt's state (cheaper than every script's)."""
    mounts: list[str] = []
    markers: set[str] = set()
    for node in tree.css(_SIGNS):
        if (node.tag == "app-root" or node.id in MOUNT_IDS) and _empty(node):
            mounts.append("<app-root>" if node.tag == "app-root" else f"#{node.id}")
        for selector, named in _MARKERS:
            if node.css_matches(selector):
                markers.add(named)
    if mounts:
        return f"empty mount element {mounts[0]}"
    for _selector, named in _MARKERS:
        if named in markers:
            return f"hydration marker: {named}"
    if "window.__NUXT__" in html:
        return "hydration marker: Nuxt state (window.__NUXT__)"
    for node in tree.tags("noscript"):
        if "javascript" in (node.text(deep=True) or "").lower():
            return "a <noscript> asking for JavaScript"
    origin = origin_of(page_url) + "/"
    if not any(link.startswith(origin) for link in links) and tree.css_first("script"):
        return "scripts and no link to its own origin"
    return None


def _empty(node: object) -> bool:
    """No element child and no text but whitespace (a comment is no content)."""
    child = getattr(node, "child", None)
    while child is not None:
        if child.tag not in ("-text", "_text", "_comment", "-comment"):
            return False
        if child.tag in ("-text", "_text") and (child.text_content or "").strip():
            return False
        child = child.next
    return True

