"""CPU a page by process (the crawler, its parse child, the nginx serving it) over one
crawl of the generated site of ``million.py``, for each commit named, one after another.

    python bench/by_process.py 91a1241 HEAD 91a1241 HEAD --pages 100000

A pages/s ratio says that one crawl is slower, not whose CPU it lost: on two cores the
server's share comes out of the crawler's. This split found that nginx, not the
crawler, made most of a 0.825 ratio (docs/pages/performance.md, "Memory"). With
``--strace``, nginx's worker's system calls are counted too (``strace -c``, in
``WORK/strace-REV.txt``), which is how its heap trimming showed. Only loopback is
contacted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import million
from results_file import emit

from bench import WORK, baseline_crawler

PORT = 18697


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU of ``pid`` so far, from /proc (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def nginx_processes(port: int) -> list[int]:
    found = subprocess.run(["pgrep", "-f", f"nginx-{port}"], capture_output=True,
                           text=True).stdout.split()
    masters = [int(pid) for pid in found]
    return masters + [child for master in masters for child in children(master)]


def crawl_once(rev: str, args: argparse.Namespace) -> dict:
    """One crawl by ``rev``, sampling each process's CPU until the crawler exits."""
    state = million.start_site(PORT, args)
    server = nginx_processes(PORT)
    tracer = None
    if args.strace:
        workers = server[1:]
        tracer = subprocess.Popen(["strace", "-c", "-f", "-o", str(WORK / f"strace-{rev}.txt"),
                                   *[f"-p{pid}" for pid in workers]],
                                  stderr=subprocess.DEVNULL)
        time.sleep(0.5)
    try:
        server_before = sum(cpu_seconds(pid) or 0.0 for pid in server)
        started = time.monotonic()
        crawl = subprocess.Popen(million.crawl_command(baseline_crawler(rev), PORT,
                                                       f"by-process-{rev}", args),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        last: dict[int, float] = {}
        server_after = server_before
        while crawl.poll() is None:
            for pid in (crawl.pid, *children(crawl.pid)):
                seconds = cpu_seconds(pid)
                if seconds is not None:
                    last[pid] = seconds
            server_after = sum(cpu_seconds(pid) or 0.0 for pid in server)
            time.sleep(0.2)
        wall = time.monotonic() - started
    finally:
        if tracer is not None:
            tracer.send_signal(2)
            tracer.wait()
        os.kill(int((state / "nginx.pid").read_text()), 15)
        time.sleep(0.3)
    pages, _ = million.served(state / "access.log", 0)
    main = last.pop(crawl.pid, 0.0)
    return {"commit": million.short_commit(rev), "pages": pages, "wall_s": round(wall, 1),
            "pages_per_s": round(pages / wall), "us_a_page_crawler": _per_page(main, pages),
            "us_a_page_child": _per_page(sum(last.values()), pages),
            "us_a_page_nginx": _per_page(server_after - server_before, pages)}


def _per_page(seconds: float, pages: int) -> float:
    return round(seconds * 1e6 / max(pages, 1), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("revs", nargs="+", help="commits, crawled in this order")
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--strace", action="store_true",
                        help="count nginx's system calls (strace -c)")
    parser.add_argument("--results", help="append the JSON lines to this file too")
    args = parser.parse_args()
    args.latency, args.report, args.links = 0.0, None, None
    for rev in args.revs:
        emit([crawl_once(rev, args)], args.results)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
