"""A page's images, as Google reads them for image sitemaps (``--images``)."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from crawler.urls.normalize import resolve_link

MAX_IMAGES = 1000


def page_images(tree: LexborHTMLParser, base: str) -> list[str]:
    """The page's images as Google reads them for image sitemaps: ``<img src>``, the
    largest candidate of an ``srcset`` (on ``<img>`` and ``<picture><source>``);
    absolute, each once, in page order, at most 1,000; ``data:`` URIs left out
    (resolution refuses every scheme but http(s))."""
    found: dict[str, None] = {}
    for node in tree.css("img, picture source"):
        attrs = node.attributes
        for candidate in (attrs.get("src"), largest_candidate(attrs.get("srcset"))):
            if candidate:
                url = resolve_link(base, candidate)
                if url is not None and url != base:
                    found.setdefault(url)
        if len(found) >= MAX_IMAGES:
            break
    return list(found)[:MAX_IMAGES]


def srcset_candidates(srcset: str) -> list[tuple[str, str]]:
    """(URL, descriptor) pairs of an ``srcset``, split the way the HTML standard does:
    a URL is a run of non-space characters (commas inside it are its own); trailing
    commas end it, else its descriptors run to the next comma."""
    found: list[tuple[str, str]] = []
    pos, n = 0, len(srcset)
    while True:
        while pos < n and (srcset[pos].isspace() or srcset[pos] == ","):
            pos += 1
        if pos >= n:
            return found
        start = pos
        while pos < n and not srcset[pos].isspace():
            pos += 1
        url, descriptor = srcset[start:pos], ""
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            start = pos
            while pos < n and srcset[pos] != ",":
                pos += 1
            descriptor = srcset[start:pos].strip()
        if url:
            found.append((url, descriptor))


def _size(descriptor: str) -> tuple[int, float] | None:
    """How large a candidate is, to compare: (1, width) or (0, density); None when its
    descriptor cannot be read."""
    if not descriptor:
        return 0, 1.0
    unit, number = descriptor[-1], descriptor[:-1]
    if unit not in "wx":
        return None
    try:
        value = int(number) if unit == "w" else float(number)
    except ValueError:
        return None
    if unit == "x":
        return 0, float(value)
    return (1, float(value)) if value else (0, 1.0)


def largest_candidate(srcset: str | None) -> str | None:
    """The URL of an ``srcset``'s largest image: the widest ``w`` descriptor, else the
    highest density ``x`` (none means 1x). An unparseable descriptor is skipped,
    as browsers do."""
    if not srcset:
        return None
    best: tuple[int, float] | None = None
    chosen: str | None = None
    for url, descriptor in srcset_candidates(srcset):
        key = _size(descriptor)
        if key is None:
            continue
        if best is None or key > best:
            best, chosen = key, url
    return chosen
