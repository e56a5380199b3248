"""What ``--sections auto`` chooses on the bench's corpora, and what it costs.

    python bench/sections_auto.py --corpus pg,synthetic --json bench/results/sections-auto.jsonl

Each corpus is crawled twice through the real CLI, served by nginx on loopback: once
plainly and once with ``--sections auto``. Printed: the sections chosen with their
URL counts (the manual's scheduled page cites them), whether the union of the
sectioned shards equals the plain sitemap, and the CPU of each crawl.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from results_file import emit

from bench import WORK, Nginx, ensure_nginx, prepare

_LOC = re.compile(rb"<loc>([^<]+)</loc>")


def crawl(cli: str, url: str, out: Path, *options: str) -> tuple[float, dict]:
    """CPU seconds of one crawl, and its JSON report."""
    shutil.rmtree(out, ignore_errors=True)
    report = out.parent / f"{out.name}.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([cli, "crawl", url, "--out", str(out), "--quiet", "--concurrency", "32",
                    "--report", str(report), *options], check=True, timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, json.loads(report.read_text())


def listed(out: Path) -> list[str]:
    """Every URL the shards list, in the index's order."""
    found: list[str] = []
    for loc in _LOC.findall((out / "sitemap_index.xml").read_bytes()):
        name = loc.decode().rsplit("/", 1)[1]
        data = (out / name).read_bytes()
        found += [url.decode() for url in _LOC.findall(
            gzip.decompress(data) if name.endswith(".gz") else data)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="pg,synthetic")
    parser.add_argument("--pages", type=int, default=10_000, help="synthetic site size")
    parser.add_argument("--crawler", default=str(Path(sys.executable).parent / "sitemap-crawler"))
    parser.add_argument("--port", type=int, default=18851)
    parser.add_argument("--json", type=Path, help="append one JSON line a corpus")
    args = parser.parse_args()
    ensure_nginx()
    for corpus in args.corpus.split(","):
        prepared = prepare(corpus, args.pages)
        if prepared is None:
            print(f"{corpus}: not available here", file=sys.stderr)
            continue
        root, _truth, start = prepared
        with Nginx(root, args.port) as nginx:
            url = nginx.origin + start
            plain_cpu, _plain = crawl(args.crawler, url, WORK / f"sections-{corpus}-plain")
            split_cpu, report = crawl(args.crawler, url, WORK / f"sections-{corpus}-auto",
                                      "--sections", "auto")
        plain = listed(WORK / f"sections-{corpus}-plain")
        split = listed(WORK / f"sections-{corpus}-auto")
        sections = report.get("sections") or {}
        row = {"corpus": corpus, "urls": len(plain), "sections": len(sections),
               "chosen": sections, "same_urls": sorted(plain) == sorted(split),
               "shards": len(_LOC.findall(
                   (WORK / f"sections-{corpus}-auto" / "sitemap_index.xml").read_bytes())),
               "cpu_plain_s": round(plain_cpu, 2), "cpu_auto_s": round(split_cpu, 2)}
        shown = ", ".join(f"{name} {count}" for name, count in list(sections.items())[:8])
        more = f" … ({len(sections)} in all)" if len(sections) > 8 else ""
        print(f"{corpus}: {len(plain)} URLs; sections: {shown or 'none (one sitemap)'}{more}; "
              f"same URLs: {row['same_urls']}; CPU {plain_cpu:.2f} s plain, "
              f"{split_cpu:.2f} s with --sections auto")
        emit([row], str(args.json) if args.json is not None else None)


if __name__ == "__main__":
    main()
