"""A deterministic synthetic website for benchmarks.

``--pages N`` HTML pages of about 20 KB, laid out as a tree of sections, each
with about 40 links: its parent and children (so every page is reachable),
siblings, pages elsewhere in the site, ``../`` links, query-string and
fragment variants, a few broken and a few external links. The set of pages
reachable from ``/`` is written to ``groundtruth.txt`` (one path a line), so a
crawl can be scored for completeness. Same ``--pages`` and ``--seed``, same
bytes.

``--hreflang`` pairs the pages as English and German versions of each other
(page 2k+1 with 2k+2, each naming both and ``x-default``), ``--images`` gives
each page six images (five ``<img src>``, one ``srcset`` of three candidates)
and one on a CDN: the input for measuring what those sitemap extensions cost.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

PER_DIR = 100
BRANCHING = 6
FILLER = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
          "incididunt ut labore et dolore magna aliqua. ")


def page_path(n: int) -> str:
    return "/" if n == 0 else f"/s{n // PER_DIR:04d}/p{n}.html"


def relative(from_n: int, to_n: int) -> str:
    """A relative href from page ``from_n`` to page ``to_n`` (``../`` where it applies)."""
    target = page_path(to_n)
    if from_n == 0:
        return target.lstrip("/") or "./"
    if to_n == 0:
        return "../"
    if from_n // PER_DIR == to_n // PER_DIR:
        return target.rsplit("/", 1)[1]
    return "../" + target.lstrip("/")


def alternates(n: int, pages: int) -> str:
    """<link rel=alternate> for page ``n`` and its partner, reciprocal, x-default on English."""
    if n == 0:
        return ""
    english = n if n % 2 else n - 1
    german = english + 1
    if german >= pages:
        return ""
    return (f'<link rel="alternate" hreflang="en" href="{page_path(english)}">'
            f'<link rel="alternate" hreflang="de" href="{page_path(german)}">'
            f'<link rel="alternate" hreflang="x-default" href="{page_path(english)}">')


def images(n: int) -> str:
    tags = "".join(f'<img src="/img/{n // PER_DIR:04d}/{n}-{k}.jpg" alt="figure {k}">'
                   for k in range(5))
    srcset = ", ".join(f"/img/{n}-wide-{w}.jpg {w}w" for w in (480, 960, 1920))
    return (f'{tags}<img src="/img/{n}-wide-480.jpg" srcset="{srcset}" alt="wide">'
            f'<img src="https://cdn.example.net/{n}.png" alt="cdn">')


def build(pages: int, seed: int, out: Path, *, hreflang: bool = False,
          with_images: bool = False) -> int:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    for n in range(pages):
        parent = (n - 1) // BRANCHING if n else None
        children = [c for c in range(n * BRANCHING + 1, n * BRANCHING + BRANCHING + 1)
                    if c < pages]
        links: list[str] = []
        if parent is not None:
            links.append(relative(n, parent))
        links += [relative(n, c) for c in children]
        links += [relative(n, rng.randrange(pages)) for _ in range(24 - len(links))]
        links += [page_path(rng.randrange(pages)) for _ in range(6)]           # absolute paths
        links += [relative(n, rng.randrange(pages)) + "#section-2" for _ in range(3)]
        if rng.random() < 0.02:
            links.append(page_path(rng.randrange(pages)) + "?ref=nav")         # query variant
        if rng.random() < 0.02:
            links.append(f"/missing/{rng.randrange(10**6)}.html")               # broken
        links += ["https://example.com/", "mailto:team@example.com", "/"]
        body = "".join(f'<li><a href="{href}">link {i}</a></li>\n' for i, href in
                       enumerate(links))
        text = "".join(f"<p>{FILLER * 3}</p>\n" for _ in range(45))
        head = alternates(n, pages) if hreflang else ""
        figures = images(n) if with_images else ""
        html = (f"<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
                f"<title>Page {n}</title>{head}</head>\n<body><nav><ul>\n{body}</ul></nav>\n"
                f"<main><h1>Page {n}</h1>\n{figures}{text}</main></body></html>\n")
        path = out / (page_path(n).lstrip("/") or "index.html")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html)
    # every page is reachable through the parent/child tree
    (out / "groundtruth.txt").write_text("".join(page_path(n) + "\n" for n in range(pages)))
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--hreflang", action="store_true",
                        help="pages in English/German pairs that name each other")
    parser.add_argument("--images", action="store_true", help="seven images a page")
    args = parser.parse_args()
    print(build(args.pages, args.seed, args.out, hreflang=args.hreflang,
                with_images=args.images), "pages in", args.out)


if __name__ == "__main__":
    main()
