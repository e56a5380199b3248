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

MOUNT_IDS = ("root", "app", "__next", "__nuxt", "___gatsby", "svelte")
_MOUNTS = ", ".join([*(f"#{name}" for name in MOUNT_IDS), "app-root"])
_MARKERS = (("script#__NEXT_DATA__", "Next.js data (script#__NEXT_DATA__)"),
            ("[data-server-rendered]", "Vue hydration ([data-server-rendered])"),
            ("[ng-version]", "Angular ([ng-version])"),
            ("[data-reactroot]", "React ([data-reactroot])"))


def client_rendered(tree: LexborHTMLParser, page_url: str, links: list[str]) -> str | None:
    """Why this page needs a browser to be read, or None when its raw HTML will do."""
    for node in tree.css(_MOUNTS):
        if node.child is None or (_empty(node)):
            name = node.id if node.tag != "app-root" else None
            return f"empty mount element {'#' + name if name else '<app-root>'}"
    for selector, named in _MARKERS:
        if tree.css_first(selector) is not None:
            return f"hydration marker: {named}"
    scripts = tree.tags("script")
    for script in scripts:
        if "window.__NUXT__" in (script.text() or ""):
            return "hydration marker: Nuxt state (window.__NUXT__)"
    for node in tree.tags("noscript"):
        if "javascript" in (node.text(deep=True) or "").lower():
            return "a <noscript> asking for JavaScript"
    if scripts and not any(link.startswith(_origin(page_url)) for link in links):
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


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}/"
