"""The page facts read by lol_html's tokens (``streamed.py``) against the facts read
from lexbor's tree (the crawler's ``extract``), page by page, and what each costs.

    pip install python-lolhtml   # beside the crawler, in a scratch venv
    python bench/streamed_experiment/compare.py DIR... [--name NAME]... [--results FILE]

Every ``*.html``/``*.htm``/``*.xhtml`` under each DIR is read as the crawler reads
it (``html_source``), then two ways: by the tokens where they may read the page
(the tree where they may not, as a crawler using them would), and by the tree
alone. A JSON line per DIR gives the pages, how many the tokens read, how many
answers differ (the first few named, with the fields), and CPU µs a page of each
way, the best of three passes, one core; and of the tokens' reading alone
(lol_html and its handlers) beside lexbor's parse alone.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "scan_experiment"))

from results_file import emit
from selectolax.lexbor import LexborHTMLParser
from streamed import facts_from_tokens, read_tokens

from crawler.page.decode import html_source
from crawler.page.extract import PageFacts, extract

TOKEN = "sitemap-crawler"


# Pages made to split a tokenizer from a tree (issue #27's list, and more): each is
# read both ways like a corpus page (``--hostile``).
_HEAD = b"<!doctype html><html><head><title>t</title>"
HOSTILE: dict[str, bytes] = {
    "unclosed-comment": _HEAD + b"</head><body><a href=/a>a</a><!-- <a href=/b>",
    "script-with-a": _HEAD + b"<script>x='</a><a href=/s>'</script></head><a href=/a>a</a>",
    "unquoted": _HEAD + b"</head><a href=/u?x=1&y=2 rel=nofollow>a</a><a href=/v>v</a>",
    "entities": _HEAD + b'</head><a href="/e?a=1&amp;b=2&copy=3&copy;&#x41;&#65&notit;">e</a>',
    "base-twice": _HEAD + b"<base href=/one/><base href=/two/></head><a href=x>x</a>",
    "uppercase": b"<!DOCTYPE HTML><HTML><HEAD><TITLE>T</TITLE><LINK REL=CANONICAL "
                 b"HREF=/c></HEAD><BODY><A HREF=/A>A</A><AREA HREF=/AR>",
    "nul": _HEAD + b"</head><a href='/n\x00ul'>n</a>",
    "text-in-head": b"<html><head>oops<link rel=canonical href=/c></head><a href=/a>",
    "div-in-head": b"<html><head><div></div><link rel=canonical href=/c></head>",
    "link-after-head": _HEAD + b"</head><link rel=canonical href=/c><body><a href=/a>",
    "link-in-body": _HEAD + b"</head><body><link rel=canonical href=/c><a href=/a>",
    "p-before-head": b"<p>x</p><head><link rel=canonical href=/c></head>",
    "svg-title": _HEAD.replace(b"<title>t</title>", b"") + b"</head><body><svg><title>icon"
                 b"</title></svg><title>real</title>",
    "template": _HEAD + b"</head><template><a href=/t>t</a></template><a href=/a>",
    "noscript": _HEAD + b"</head><noscript><a href=/n>n</a></noscript><a href=/a>",
    "table-a": _HEAD + b"</head><table><tr><td>1</td></tr><a href=/f>f</a></table><a href=/a>",
    "table-form-a": _HEAD + b"</head><table><form><a href=/f>f</a></form></table><a href=/a>",
    "select-a": _HEAD + b"</head><select><a href=/s>s</a></select><a href=/a>",
    "adoption": _HEAD + b"</head><a href=/x rel=nofollow><div>d</a></div><p><a href=/y>y",
    "misnested": _HEAD + b"</head><p><a href=/x rel=nofollow>x</p><p>more</p><a href=/z>",
    "title-entities": b"<html><head><title> A &amp;\r\n B &copy &lt;x&gt; </title></head>",
    "refresh": _HEAD + b"<meta http-equiv=Refresh content='0; url=/r?a=1&amp;b=2'></head>",
    "robots": _HEAD + b"<meta name=ROBOTS content='noindex, nofollow'></head><a href=/a>",
    "hreflang": _HEAD + b"<link rel=alternate hreflang=de href=/de><link rel=alternate "
                b"hreflang=x-default href=/></head>",
    "no-head": b"<title>t</title><link rel=canonical href=/c><a href=/a>a</a>",
    "xml-prolog": b"<?xml version='1.0'?><!DOCTYPE html><html xmlns='http://www.w3.org/1999/"
                  b"xhtml' lang=\"en>x\"><head><link rel=canonical href=/c></head>",
    "huge": _HEAD + b"</head><body>" + b"<p>filler text <a href=/big>big</a></p>\n" * 400_000,
}


def _hostile_pages() -> list[tuple[str | bytes, str]]:
    return [(html_source(body, None), f"http://example.test/{name}.html")
            for name, body in HOSTILE.items()]


def _pages(root: Path) -> list[tuple[str | bytes, str]]:
    return [(html_source(path.read_bytes(), None), f"http://example.test/{path.relative_to(root)}")
            for path in sorted(root.rglob("*"))
            if path.suffix in (".html", ".htm", ".xhtml") and path.is_file()]


def tree(html: str | bytes, url: str) -> PageFacts:
    return extract(html, url, TOKEN)


def tokens_where_they_may(html: str | bytes, url: str) -> PageFacts:
    tokens = read_tokens(html) if isinstance(html, bytes) else None
    return tree(html, url) if tokens is None else facts_from_tokens(tokens, url, TOKEN)


def _best_of_three(step: Callable[[str | bytes, str], object],
                   pages: list[tuple[str | bytes, str]]) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for html, url in pages:
            step(html, url)
        best = min(best, (time.process_time() - started) / len(pages))
    return round(best * 1e6, 1)


def compare(root: Path | None, name: str) -> dict[str, object]:
    pages = _pages(root) if root is not None else _hostile_pages()
    streamed = [tokens_where_they_may(html, url) for html, url in pages]
    trees = [tree(html, url) for html, url in pages]
    read = sum(isinstance(html, bytes) and read_tokens(html) is not None for html, _ in pages)
    as_bytes = [(html, url) for html, url in pages if isinstance(html, bytes)]
    differ = [f"{url}: " + ", ".join(field for field in ("links", "nofollow_links", "canonical",
                                                          "directives", "refresh_to",
                                                          "alternates", "title")
                                     if getattr(one, field) != getattr(other, field))
              for (_html, url), one, other in zip(pages, streamed, trees, strict=True)
              if one != other]
    return {"corpus": name, "pages": len(pages), "read_by_tokens": read,
            "differ": len(differ), "first": differ[:5],
            "us_per_page_tokens_where_they_may": _best_of_three(tokens_where_they_may, pages),
            "us_per_page_tree": _best_of_three(tree, pages),
            "us_per_page_tokens_alone": _best_of_three(lambda html, _url: read_tokens(html),
                                                       as_bytes),
            "us_per_page_lexbor_parse_alone": _best_of_three(
                lambda html, _url: LexborHTMLParser(html), as_bytes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--hostile", action="store_true",
                        help="also read the made pages of HOSTILE both ways")
    parser.add_argument("--name", action="append", default=[],
                        help="each DIR's name in the results, in order (default: its own)")
    parser.add_argument("--results")
    args = parser.parse_args()
    names = args.name + [path.name for path in args.dirs[len(args.name):]]
    rows = [compare(root, name) for root, name in zip(args.dirs, names, strict=True)]
    if args.hostile:
        rows.append(compare(None, "hostile"))
    emit(rows, args.results)


if __name__ == "__main__":
    main()
