"""Does a page read as its UTF-8 bytes give what its decoded text gives? (issue #27)

Pages go to lexbor as the bytes that came (``crawler.page.decode.html_source``)
instead of being decoded into a Python string that lexbor encodes back. This
reads every HTML file under each directory both ways, with every option that
reads the page (images, anchors, fragments, the link graph, structured data,
news and videos), and counts the pages whose facts differ, naming each; then
times both ways on the same pages.

    python bench/bytes_vs_text.py /usr/share/doc/python3.11/html fixtures/sites ...
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from crawler.page.decode import decode_html, html_source
from crawler.page.extract import extract

OPTIONS = {"images": True, "anchors": True, "fragments": True, "edges": True,
           "structured": True, "news": True, "videos": True}


def pages(roots: list[Path]) -> list[tuple[Path, str, bytes]]:
    found = []
    for root in roots:
        for folder, _dirs, names in os.walk(root):
            for name in sorted(names):
                if name.endswith((".html", ".htm", ".xhtml")):
                    path = Path(folder) / name
                    url = "http://bench.example/" + str(path.relative_to(root))
                    found.append((path, url, path.read_bytes()))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", nargs="+", type=Path)
    args = parser.parse_args()
    found = pages(args.roots)
    as_bytes = differ = 0
    for path, url, body in found:
        source = html_source(body, "text/html")
        as_bytes += isinstance(source, bytes)
        text = decode_html(body, "text/html")
        if extract(source, url, "bot", **OPTIONS) != extract(text, url, "bot", **OPTIONS):
            differ += 1
            print(f"differs: {path}", file=sys.stderr)
    print(f"{len(found)} pages, {as_bytes} read as bytes, {differ} differ")
    for label, prepare in (("text", decode_html), ("bytes", html_source)):
        started = time.process_time()
        for _path, url, body in found:
            extract(prepare(body, "text/html"), url, "bot")
        spent = time.process_time() - started
        print(f"{label}: {spent / len(found) * 1e6:.0f} µs a page (decoding included)")


if __name__ == "__main__":
    main()
