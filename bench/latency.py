"""Speed where latency rules: every answer held 50 ms by the server, as across the Internet.

    python bench/latency.py [--pages 10000] [--latency 0.05] [--concurrency 8,32,128]
                            [--workers 1,2]

On loopback the crawl is bound by CPU; on the Internet by round trips. Here
nginx (with its njs module) holds each answer for ``--latency`` seconds before
serving the file as usual (ETag, Last-Modified, 304), so a crawl at
concurrency C can fetch at most C / latency pages a second: the physical
limit. For each concurrency the script runs the real CLI once and reports
pages/s, the limit and the efficiency (pages/s ÷ limit), with CPU per page (worker
processes included), for each ``--workers`` count given.
With ``--recrawl`` it also runs each a second time against the same
``--state`` (every page a 304) and reports that run's time against the first.
Only loopback is contacted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys

from bench import WORK, Nginx, prepare, run_crawl

PORT = 18680


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", default="8,32,128")
    parser.add_argument("--recrawl", action="store_true")
    parser.add_argument("--workers", default="1", help="comma-separated --workers counts")
    args = parser.parse_args()
    prepared = prepare("synthetic", args.pages)
    assert prepared is not None
    root, truth, entry = prepared
    pages = len(truth)
    with Nginx(root, PORT, latency=args.latency) as nginx:
        runs = [(int(c), int(w)) for c in args.concurrency.split(",")
                for w in args.workers.split(",")]
        for concurrency, workers in runs:
            work = WORK / f"latency-{concurrency}-{workers}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            command = [sys.executable, "-m", "crawler", "crawl", nginx.origin + entry,
                       "--out", str(work / "out"), "--concurrency", str(concurrency), "--quiet",
                       "--workers", str(workers)]
            if args.recrawl:
                command += ["--state", str(work / "state.db")]
            mark = nginx.log_mark()
            first = run_crawl(command, timeout=3600)
            served = len(nginx.log_since(mark))
            limit = concurrency / args.latency
            rate = served / first["wall"]
            row = {"concurrency": concurrency, "workers": workers, "latency_s": args.latency,
                   "pages": pages,
                   "requests": served, "wall_s": round(first["wall"], 2),
                   "pages_per_s": round(rate, 1), "limit_pages_per_s": round(limit, 1),
                   "efficiency": round(rate / limit, 3),
                   "cpu_ms_per_page": round(first["cpu"] * 1000 / served, 3),
                   "rss_mb": round(first["rss_mb"], 1), "code": first["code"]}
            if args.recrawl:
                second = run_crawl(command, timeout=3600)
                row |= {"recrawl_wall_s": round(second["wall"], 2),
                        "recrawl_vs_first": round(second["wall"] / first["wall"], 3)}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
