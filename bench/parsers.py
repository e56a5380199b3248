"""Is there a maintained HTML parser on PyPI that reads a page's links faster than
selectolax's lexbor? Issue #27 asked; this measures the candidates that install
as wheels, on the same pages, and checks that each finds the same hrefs.

    pip install markupever resiliparse python-lolhtml   # beside the crawler, in a
                                                        # scratch venv (lxml comes with it)
    python bench/parsers.py SITE_DIR [--name s10k] [--pages 400] [--results FILE]

Each candidate parses a page's bytes and lists the ``href`` of its ``a`` and
``area`` elements in document order; the best of three passes over a fixed random
sample of SITE_DIR's ``.html`` files, one core. A candidate that is not
installed is reported as such, not skipped silently.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import random
import time
from collections.abc import Callable
from pathlib import Path

from results_file import emit


def _lexbor() -> Callable[[bytes], list[str]]:
    from selectolax.lexbor import LexborHTMLParser

    def links(page: bytes) -> list[str]:
        tree = LexborHTMLParser(page)
        found = []
        for tag in ("a", "area"):
            for node in tree.tags(tag):
                href = node.attributes.get("href")
                if href is not None:
                    found.append(href)
        return found
    return links


def _resiliparse() -> Callable[[bytes], list[str]]:
    from resiliparse.parse.html import HTMLTree  # lexbor too, with its own DOM API

    def links(page: bytes) -> list[str]:
        document = HTMLTree.parse_from_bytes(page, "utf-8").document
        found = []
        for tag in ("a", "area"):
            for element in document.get_elements_by_tag_name(tag):
                href = element.getattr("href")
                if href is not None:
                    found.append(href)
        return found
    return links


def _markupever() -> Callable[[bytes], list[str]]:
    import markupever  # html5ever (Rust)

    def links(page: bytes) -> list[str]:
        root = markupever.parse(page, markupever.HtmlOptions())
        return [element.attrs["href"] for element in root.select("a[href], area[href]")]
    return links


def _lxml() -> Callable[[bytes], list[str]]:
    import lxml.html  # libxml2's HTML parser: fast, but HTML 4's rules, not the standard's

    parser = lxml.html.HTMLParser(encoding="utf-8")

    def links(page: bytes) -> list[str]:
        root = lxml.html.fromstring(page, parser=parser)
        return [href for tag in ("a", "area") for element in root.iter(tag)
                if (href := element.get("href")) is not None]
    return links


def _lolhtml() -> Callable[[bytes], list[str]]:
    import html

    import lolhtml  # Cloudflare's lol_html (Rust): a tokenizer with no tree at all

    class Hrefs:
        """The handler lol_html calls for each matching start tag."""

        def __init__(self) -> None:
            self.found: list[str] = []

        def element(self, element: lolhtml.Element) -> None:
            href = element.get_attribute("href")
            # lol_html hands attribute values over as written: character references
            # are left for the caller (html.unescape's rules, near the attribute's)
            self.found.append(html.unescape(href) if "&" in href else href)

    def discard(_chunk: bytes) -> None:
        """A rewriter streams the document back out; reading needs none of it."""

    def links(page: bytes) -> list[str]:
        hrefs = Hrefs()
        rewriter = lolhtml.HTMLRewriter(discard)
        rewriter.on("a[href], area[href]", hrefs)
        rewriter.write(page)
        rewriter.end()
        return hrefs.found
    return links


CANDIDATES = {"selectolax-lexbor": _lexbor, "resiliparse": _resiliparse,
              "markupever": _markupever, "lxml": _lxml, "lolhtml": _lolhtml}
DISTRIBUTIONS = {"selectolax-lexbor": "selectolax", "resiliparse": "resiliparse",
                 "markupever": "markupever", "lxml": "lxml", "lolhtml": "python-lolhtml"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--name", help="the corpus's name in the results (default: SITE's)")
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--results")
    args = parser.parse_args()
    files = sorted(args.site.rglob("*.html"))
    sample = random.Random(1).sample(files, min(args.pages, len(files)))
    pages = [path.read_bytes() for path in sample]
    reference = [_lexbor()(page) for page in pages]
    corpus = args.name or args.site.name
    rows: list[dict[str, object]] = []
    for name, make in CANDIDATES.items():
        try:
            links = make()
        except ImportError:
            rows.append({"corpus": corpus, "parser": name, "installed": False})
            continue
        same = sum(links(page) == expected for page, expected in zip(pages, reference,
                                                                    strict=True))
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            for page in pages:
                links(page)
            best = min(best, (time.perf_counter() - started) / len(pages))
        rows.append({"corpus": corpus, "parser": name, "installed": True,
                     "version": importlib.metadata.version(DISTRIBUTIONS[name]),
                     "us_per_page": round(best * 1e6, 1),
                     "same_links": same, "pages": len(pages)})
    emit(rows, args.results)


if __name__ == "__main__":
    main()
