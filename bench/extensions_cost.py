"""What the sitemap extensions cost: hreflang alternates and ``--images`` on one site.

    python bench/extensions_cost.py [--pages 10000] [--repeats 3]

Generates the synthetic site with hreflang pairs and seven images a page
(``gen_site.py --hreflang --images``), serves it with the harness's nginx, and
crawls it in one run, interleaved, three ways: ``--no-hreflang`` (the
baseline: the same pages, no extension written), the default (hreflang
verified and written) and ``--images`` (both). It reports the median wall
time, CPU time of the crawler process, and the sitemap's size uncompressed
and gzipped, each as a ratio to the baseline.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from gen_site import build

from bench import WORK, Nginx

PORT = 18650
VARIANTS = {"baseline (--no-hreflang)": ["--no-hreflang"], "hreflang (default)": [],
            "hreflang + --images": ["--images"]}


def crawl(origin: str, out: Path, options: list[str]) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "crawler", "crawl", origin + "/", "--out", str(out),
                    "--concurrency", "32", "--quiet", *options], check=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    raw = b"".join(gzip.decompress(p.read_bytes()) for p in sorted(out.glob("sitemap-*.xml.gz")))
    packed = sum(p.stat().st_size for p in out.glob("sitemap-*.xml.gz"))
    return {"wall_s": wall, "cpu_s": (after.ru_utime + after.ru_stime)
            - (before.ru_utime + before.ru_stime), "xml_bytes": len(raw), "gz_bytes": packed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    site = WORK / f"site-{args.pages}-hreflang-images"
    if not (site / "groundtruth.txt").exists():
        build(args.pages, 1, site, hreflang=True, with_images=True)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
    with Nginx(site, PORT) as nginx:
        for repeat in range(args.repeats):
            for name, options in VARIANTS.items():
                out = WORK / f"out-extensions-{repeat}-{len(results[name])}-{hash(name) & 0xffff}"
                results[name].append(crawl(nginx.origin, out, options))
    base = {key: statistics.median(run[key] for run in results["baseline (--no-hreflang)"])
            for key in ("wall_s", "cpu_s", "xml_bytes", "gz_bytes")}
    for name, runs in results.items():
        median = {key: statistics.median(run[key] for run in runs) for key in base}
        print(json.dumps({"variant": name, **{k: round(v, 2) for k, v in median.items()},
                          **{f"{k}_ratio": round(median[k] / base[k], 2) for k in base}}))


if __name__ == "__main__":
    main()
