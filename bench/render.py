"""``--render``'s costs, measured: an SPA of 2,000+ pages rendered, and ``auto`` on a static site.

    python bench/render.py [--pages 2000] [--repeats 3] [--out bench/results/render-DATE.jsonl]

1. A generated single-page application (plain HTML and one JavaScript bundle: every
   page is the same empty shell, and the bundle builds its title and links from the
   URL) crawled with ``--render always`` at ``--workers 1`` and ``--workers 2``:
   rendered pages/s, CPU (the crawl and every process under it: the browsers too,
   split by part) and the peak of the summed PSS of the whole process tree, sampled
   every 0.5 s (the sampling's own CPU, ``bench_cpu``, is recorded beside it).
2. The PostgreSQL documentation (server-rendered) with ``--render auto`` against
   ``--render never``, alternated: ``auto`` must render no page and cost at most 5 %.

Both sites are served by the shared harness's nginx on loopback (``bench.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from timed_run import run_sampled

from bench import PG_DOCS, WORK, Nginx

HERE = Path(__file__).resolve().parent
BUNDLE = """// Builds each page from its URL: /p/N/ links to its children 2N+1, 2N+2 and to N-1.
document.addEventListener("DOMContentLoaded", () => {
  const total = %(pages)d;
  const n = Number(location.pathname.split("/")[2] || 0);
  document.title = "Page " + n;
  const root = document.getElementById("root");
  const heading = document.createElement("h1");
  heading.textContent = "Page " + n;
  root.appendChild(heading);
  for (const next of [2 * n + 1, 2 * n + 2, n - 1]) {
    if (next < 0 || next >= total) continue;
    const link = document.createElement("a");
    link.href = "/p/" + next + "/";
    link.textContent = "page " + next;
    root.appendChild(link);
  }
});
"""
SHELL = ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title>'
         '<script src="/app.js"></script></head><body><div id="root"></div></body></html>\n')


def spa(pages: int) -> Path:
    root = WORK / f"spa-{pages}"
    if (root / "app.js").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    for n in range(pages):
        folder = root / "p" / str(n)
        folder.mkdir(parents=True)
        (folder / "index.html").write_text(SHELL)
    (root / "index.html").write_text(SHELL.replace("<title>App", '<meta http-equiv="refresh" '
                                                   'content="0; url=/p/0/"><title>App'))
    (root / "app.js").write_text(BUNDLE % {"pages": pages})
    return root


SAMPLE_EVERY = 0.5  # seconds: each sample costs ~16 ms of CPU (PSS is read from the
# kernel's page tables), so sampling every 50 ms took a quarter of a core from the crawl


def _tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def _rss_mb(pids: list[int]) -> float:
    """The tree's memory: each process's proportional set size (shared pages split
    between the processes sharing them), so Chromium's many processes are not
    counted many times over for the libraries they share."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
        except OSError:
            pass
    return total / 1024


TICK = os.sysconf("SC_CLK_TCK")


def _kind(command: str) -> str:
    """Which part of the crawl a process is, for the CPU split (Chromium rewrites its
    helpers' command lines into one string, so these are substrings)."""
    if "--type=renderer" in command:
        return "browser renderers"
    if "--type=" in command:
        return "browser helpers (GPU, network, zygote)"
    if "--remote-debugging-pipe" in command:
        return "browser process"
    if "run-driver" in command:
        return "Playwright driver"
    return "crawler (Python)"


def _cpu_by_pid(pids: list[int], seen: dict[int, tuple[str, float]]) -> None:
    """Each process's CPU so far, kept after it ends (its last sample): wait4's rusage
    misses Chromium's helpers, which the crawl's own children do not reap."""
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            # an ended process (a zombie) has no command line: it keeps its part
            kind = _kind(command) if command else seen.get(pid, ("crawler (Python)",))[0]
        except OSError:
            continue
        seen[pid] = (kind, (int(fields[11]) + int(fields[12])) / TICK)


def crawl(url: str, out: Path, *options: str) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    own = os.times()
    process = subprocess.Popen([sys.executable, "-m", "crawler", "crawl", url, "--out",
                                str(out), "--quiet", *options], stderr=subprocess.PIPE)
    peak = [0.0]
    seen: dict[int, tuple[str, float]] = {}

    def sample(pid: int) -> None:
        tree = _tree(pid)
        peak[0] = max(peak[0], _rss_mb(tree))
        _cpu_by_pid(tree, seen)

    run = run_sampled(process, started, sample, SAMPLE_EVERY)
    wall, status, usage = run.wall, run.status, run.usage
    ended = os.times()
    split: dict[str, float] = {}
    for kind, cpu in seen.values():
        split[kind] = round(split.get(kind, 0.0) + cpu, 2)
    listed = 0
    for shard in out.glob("sitemap-*.xml.gz"):
        import gzip
        listed += gzip.decompress(shard.read_bytes()).count(b"<loc>")
    return {"wall": round(wall, 2), "cpu": round(sum(split.values()), 2),
            "cpu_rusage": round(usage.ru_utime + usage.ru_stime, 2), "cpu_split": split,
            "bench_cpu": round(ended.user - own.user + ended.system - own.system, 2),
            "peak_rss_mb": round(peak[0]), "listed": listed,
            "code": os.waitstatus_to_exitcode(status),
            "stderr": (process.stderr.read() or b"").decode()[-300:] if process.stderr else ""}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path,
                        default=HERE / "results" / f"render-{date.today()}.jsonl")
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument("--skip-spa", action="store_true")
    parser.add_argument("--pg-repeats", type=int, default=7)
    parser.add_argument("--workers", default="1,2", help="worker counts for the SPA runs")
    parser.add_argument("--spa-option", action="append", default=[],
                        help="an option added to the SPA crawls (repeatable), e.g. "
                        "--spa-option=--render-concurrency=4")
    args = parser.parse_args()
    rows = []
    browser = shutil.which("chromium") or ""
    with Nginx(spa(args.pages), 18431) as server:
        for _ in range(0 if args.skip_spa else args.repeats):
            for workers in args.workers.split(","):
                result = crawl(server.origin + "/p/0/", WORK / "render-out", "--render",
                               "always", "--workers", workers, "--browser", browser,
                               "--prefix", "/", *args.spa_option)
                result.update(site=f"spa-{args.pages}", mode="always", workers=workers,
                              options=args.spa_option,
                              pages_per_s=round(args.pages / result["wall"], 1),
                              cpu_ms_per_page=round(result["cpu"] * 1000 / args.pages, 1))
                print(json.dumps(result), flush=True)
                rows.append(result)
    if not args.skip_pg:
        with Nginx(PG_DOCS, 18432) as server:
            # once with a report, for how many pages auto rendered (a report costs time)
            crawl(server.origin + "/index.html", WORK / "render-out", "--render", "auto",
                  "--browser", browser, "--report", str(WORK / "render-pg.json"))
            report = json.loads((WORK / "render-pg.json").read_text())
            rendered = sum(1 for row in report["urls"] if row.get("rendered"))
            reasons = sorted({row.get("render_reason") for row in report["urls"]
                              if row.get("status")} - {None})
            print(json.dumps({"site": "pg", "auto_rendered": rendered, "reasons": reasons}))
            rows.append({"site": "pg", "auto_rendered": rendered, "reasons": reasons})
            for _ in range(args.pg_repeats):
                for mode in ("never", "auto"):
                    result = crawl(server.origin + "/index.html", WORK / "render-out",
                                   "--render", mode, "--browser", browser)
                    result.update(site="pg", mode=mode)
                    print(json.dumps(result), flush=True)
                    rows.append(result)
    with args.out.open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    for key in ("always",) if not args.skip_spa else ():
        for workers in args.workers.split(","):
            picked = [row for row in rows if row.get("mode") == key
                      and row.get("workers") == workers]
            print(f"spa always, {workers} worker(s): median "
                  f"{statistics.median(row['pages_per_s'] for row in picked)} pages/s, "
                  f"peak RSS {max(row['peak_rss_mb'] for row in picked)} MB")
    if not args.skip_pg:
        never = statistics.median(row["wall"] for row in rows if row.get("mode") == "never")
        auto = statistics.median(row["wall"] for row in rows
                                 if row.get("site") == "pg" and row.get("mode") == "auto")
        print(f"pg: auto / never = {auto / never:.3f}")


if __name__ == "__main__":
    main()
