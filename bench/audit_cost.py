"""What an audit costs against a plain crawl of the same site, in one run.

    python bench/audit_cost.py --corpus s10k,pg --repeats 3
    python bench/audit_cost.py --corpus s100k --repeats 1

Serves each corpus with the harness's nginx and runs, interleaved in every
repeat so the ratios come from the same minutes of the same machine:

- ``crawl``: ``crawl START --out DIR`` (the baseline);
- ``audit``: ``audit START --report a.json --report a.html`` with everything
  an audit does by default: who links where (referrers and anchors), content
  fingerprints for duplicates, the live-sitemap comparison, and two reports.

It reports the median wall time, CPU time and peak RSS of the CLI process
(wait4), and each as a ratio to ``crawl``. Corpora: ``s10k`` and ``s100k``
(the synthetic site of gen_site.py) and ``pg`` (the PostgreSQL 15 HTML docs,
Debian's postgresql-doc-15). Only loopback is contacted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from bench import WORK, Nginx, prepare, run_crawl

PORT = 18670
SYNTHETIC = {"s10k": 10_000, "s100k": 100_000}


def variants(start: str, work: Path) -> dict[str, list[str]]:
    cli = [sys.executable, "-m", "crawler"]
    return {
        "crawl": [*cli, "crawl", start, "--out", str(work / "out"), "--concurrency", "32",
                  "--quiet"],
        "audit": [*cli, "audit", start, "--report", str(work / "audit.json"),
                  "--report", str(work / "audit.html"), "--concurrency", "32", "--quiet",
                  "--no-check-external"],  # pages only: bench/external_cost.py has the rest
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default="s10k,pg")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for corpus in args.corpus.split(","):
        prepared = prepare("pg" if corpus == "pg" else "synthetic", SYNTHETIC.get(corpus, 0))
        if prepared is None:
            continue
        root, _truth, entry = prepared
        work = WORK / f"audit-cost-{corpus}"
        work.mkdir(parents=True, exist_ok=True)
        runs: dict[str, list[dict[str, float]]] = {}
        with Nginx(root, PORT) as nginx:
            commands = variants(nginx.origin + entry, work)
            for repeat in range(args.repeats):
                order = list(commands) if repeat % 2 == 0 else list(reversed(commands))
                for name in order:
                    result = run_crawl(commands[name], timeout=3600)
                    if result["code"] != 0:
                        raise SystemExit(f"{corpus} {name}: exit {result['code']}: "
                                         f"{result['stderr'][-500:]}")
                    runs.setdefault(name, []).append(result)
        base = {key: statistics.median(run[key] for run in runs["crawl"])
                for key in ("wall", "cpu", "rss_mb")}
        for name, results in runs.items():
            median = {key: statistics.median(run[key] for run in results) for key in base}
            print(json.dumps({"corpus": corpus, "variant": name, "repeats": len(results),
                              **{k: round(v, 2) for k, v in median.items()},
                              **{f"{k}_ratio": round(median[k] / base[k], 2) for k in base}}),
                  flush=True)


if __name__ == "__main__":
    main()
