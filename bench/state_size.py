"""How big the ``--state`` file of a large site gets, measured rather than extrapolated.

    python bench/state_size.py --pages 1000000 [--links 40] [--out /tmp/state.db]

Writes one run's worth of pages through :class:`crawler.store.state.CrawlState`
(the crawler's own code, no HTTP): each page with an ETag, a Last-Modified,
a fingerprint and ``--links`` outlinks to its parent, children and siblings,
shaped like the synthetic bench site. Then it reads every page back the way a
304 does and prints the file size, bytes per page and the time of both passes.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from crawler.core.records import PageRecord, Verdict
from crawler.store.state import CrawlState
from crawler.store.stored import StoredPage

ORIGIN = "https://www.example.com"


def page_url(n: int) -> str:
    return f"{ORIGIN}/section-{n % 97}/topic-{n // 97}/page-{n}.html"


def outlinks(n: int, pages: int, count: int) -> list[str]:
    """Parent, children and siblings, wrapping around: most targets are shared."""
    targets = [max(0, (n - 1) // 8)] + [8 * n + k for k in range(1, 9)]
    targets += [n + k for k in range(-count, count) if k]
    return [page_url(t % pages) for t in targets[:count]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--links", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    path = args.out or Path(tempfile.mkdtemp()) / "state.db"
    path.unlink(missing_ok=True)
    changed = datetime(2026, 1, 1, tzinfo=UTC)

    started = time.monotonic()
    state = CrawlState(path, ORIGIN + "/")
    state.begin(resume=False)
    for n in range(args.pages):
        url = page_url(n)
        links = outlinks(n, args.pages, args.links)
        record = PageRecord(url, n.bit_length(), 200, "text/html", verdict=Verdict.LISTED,
                            links_found=len(links))
        state.save(StoredPage(record, f'"{n:x}-4a60"', "Sun, 22 Nov 2026 06:00:00 GMT",
                              n.to_bytes(16, "big"), changed, links))
    state.finish()
    state.close()
    written = time.monotonic() - started

    started = time.monotonic()
    state = CrawlState(path, ORIGIN + "/")
    state.begin(resume=False)
    for n in range(args.pages):
        url = page_url(n)
        state.validators(url)
        stored = state.previous(url, with_links=False)
        assert stored is not None
        state.new_outlinks(stored)
    state.close()
    read = time.monotonic() - started

    size = sum(os.path.getsize(p) for p in path.parent.glob(path.name + "*"))
    print(json.dumps({"pages": args.pages, "links_per_page": args.links,
                      "file_bytes": size, "bytes_per_page": round(size / args.pages, 1),
                      "write_s": round(written, 1), "read_back_s": round(read, 1)}))


if __name__ == "__main__":
    main()
