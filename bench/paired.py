"""Paired A/B of two commits: short crawls back to back, the ratio of each pair.

    python bench/paired.py --baseline 4a1ddb2 --pairs 12 --max-pages 3000

On a shared 2-core VM the CPU a whole crawl costs drifts by 20-30 % from
minute to minute (neighbours, frequency), more than most changes worth
measuring. Long runs in rotating order (``bench.py``) average that drift out
only over many repeats; here each pair is two crawls of a few seconds run
back to back (in alternating order), so both meet the same minute, and the
pair's ratio is what is kept. Each side runs a first crawl with ``--state``
and a second one answered with 304s; the output is the median of the ratios
with their quartiles, for CPU (user + system, from the kernel) and wall time.

``--baseline REV`` is built into a venv of its own, as ``bench.py`` does;
the other side is ``--crawler-rev REV`` built the same way, or ``--crawler``
(default: the installed CLI next to this interpreter; an editable install is
slower to import than a built one). Only loopback is contacted.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import WORK, Nginx, baseline_crawler, ensure_nginx, prepare


def timed_crawl(cli: str, url: str, out: Path, state: Path, max_pages: int,
                concurrency: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one crawl through the real CLI."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run([cli, "crawl", url, "--out", str(out), "--quiet", "--concurrency",
                    str(concurrency), "--max-pages", str(max_pages), "--state", str(state)],
                   check=True, timeout=600, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall)


def summary(label: str, ratios: list[float]) -> dict:
    low, _median, high = statistics.quantiles(ratios, n=4)
    return {label: round(statistics.median(ratios), 3),
            f"{label}_quartiles": [round(low, 3), round(high, 3)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="commit to compare against")
    parser.add_argument("--crawler", default=str(Path(sys.executable).parent / "sitemap-crawler"))
    parser.add_argument("--crawler-rev", help="the other side: this commit, built into a venv")
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--pages", type=int, default=10_000, help="synthetic site size")
    parser.add_argument("--max-pages", type=int, default=3_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--port", type=int, default=18441)
    parser.add_argument("--json", type=Path, help="append the summary as one JSON line")
    args = parser.parse_args()
    if args.pairs < 2:
        parser.error("--pairs must be at least 2")

    ensure_nginx()
    prepared = prepare("synthetic", args.pages)
    assert prepared is not None
    root, _truth, start = prepared
    crawler = baseline_crawler(args.crawler_rev) if args.crawler_rev else args.crawler
    sides = {"baseline": baseline_crawler(args.baseline), "crawler": crawler}
    times: dict[tuple[str, str], list[tuple[float, float]]] = {
        (side, run): [] for side in sides for run in ("first", "second")}
    with Nginx(root, args.port) as nginx:
        url = nginx.origin + start
        for pair in range(args.pairs):
            order = list(sides) if pair % 2 == 0 else list(reversed(sides))
            for side in order:
                out, state = WORK / f"paired-{side}-out", WORK / f"paired-{side}.db"
                shutil.rmtree(out, ignore_errors=True)
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{state}{suffix}").unlink(missing_ok=True)
                for run in ("first", "second"):
                    times[(side, run)].append(timed_crawl(sides[side], url, out, state,
                                                          args.max_pages, args.concurrency))
    side = Path(crawler).parents[1].name.removeprefix("baseline-") if args.crawler_rev else None
    result: dict = {"baseline": args.baseline, "crawler": side or "--crawler", "pairs": args.pairs,
                    "max_pages": args.max_pages, "concurrency": args.concurrency}
    for run in ("first", "second"):
        pairs = list(zip(times[("baseline", run)], times[("crawler", run)], strict=True))
        result[run] = {
            **summary("cpu_ratio", [ours[0] / theirs[0] for theirs, ours in pairs]),
            **summary("wall_ratio", [ours[1] / theirs[1] for theirs, ours in pairs]),
            "baseline_cpu_s": round(statistics.median(t[0] for t, _ in pairs), 2),
            "crawler_cpu_s": round(statistics.median(o[0] for _, o in pairs), 2),
        }
        print(f"{run}: crawler / {args.baseline}, CPU x{result[run]['cpu_ratio']} "
              f"(quartiles {result[run]['cpu_ratio_quartiles']}), wall "
              f"x{result[run]['wall_ratio']} (quartiles {result[run]['wall_ratio_quartiles']})")
    if args.json is not None:
        with args.json.open("a") as handle:
            handle.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
