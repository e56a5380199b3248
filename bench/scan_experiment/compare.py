"""The DOM-free tag scanner (``scan.py``) against lexbor's DOM (``extract_two_paths.py``,
the crawler's extraction split into "read the tags" and "what they mean"):
the same page facts on every page, and the CPU each takes. Issue #27 asked for a
tokenizer instead of the DOM; measured here, it is the slower one, so the crawler
keeps lexbor.

    python bench/scan_experiment/compare.py DIR... [--results FILE]

Every ``*.html``/``*.htm``/``*.xhtml`` under each DIR is decoded as the crawler
decodes it and read both ways; a JSON line per DIR gives pages, pages whose facts
differ (the first few named), links per page, and CPU ms per page of each step.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from extract_two_paths import dom_scan, facts_from
from scan import scan
from selectolax.lexbor import LexborHTMLParser

from crawler.page.decode import decode_html

FIELDS = ("links", "nofollow_links", "canonical", "directives", "refresh_to", "alternates",
          "title", "images")


def _cpu(step, pages) -> float:
    started = time.process_time()
    for html, url in pages:
        step(html, url)
    return (time.process_time() - started) / len(pages) * 1e3


def compare(root: Path) -> dict[str, object]:
    pages = [(decode_html(path.read_bytes(), None), f"http://example.test/{path.relative_to(root)}")
             for path in sorted(root.rglob("*"))
             if path.suffix in (".html", ".htm", ".xhtml") and path.is_file()]
    differ: list[str] = []
    links = 0
    for html, url in pages:
        ours = facts_from(scan(html, images=True), url, "sitemap-crawler")
        dom = facts_from(dom_scan(LexborHTMLParser(html), images=True), url, "sitemap-crawler")
        links += len(dom.links) + dom.nofollow_links
        if ours != dom:
            differ.append(f"{url}: " + ", ".join(f for f in FIELDS
                                                  if getattr(ours, f) != getattr(dom, f)))
    return {
        "dir": str(root), "pages": len(pages), "differ": len(differ), "first": differ[:5],
        "distinct_links_per_page": round(links / max(1, len(pages)), 1),
        "scan_ms": round(_cpu(lambda h, u: scan(h), pages), 3),
        "dom_ms": round(_cpu(lambda h, u: dom_scan(LexborHTMLParser(h)), pages), 3),
        "scan_facts_ms": round(_cpu(lambda h, u: facts_from(scan(h), u, "x"), pages), 3),
        "dom_facts_ms": round(_cpu(
            lambda h, u: facts_from(dom_scan(LexborHTMLParser(h)), u, "x"), pages), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    for root in args.dirs:
        line = json.dumps({"when": time.strftime("%Y-%m-%d"), **compare(root)})
        print(line, flush=True)
        if args.results:
            with args.results.open("a") as out:
                out.write(line + "\n")


if __name__ == "__main__":
    main()
