"""What a crawl costs after its last page: timestamps of each publishing step.

    python bench/after_crawl.py URL --python VENV/bin/python [--python OTHER/bin/python]
                                [--repeats 2] [--results results/after-crawl.jsonl]

Runs ``sitemap-crawler crawl URL`` under each interpreter given (each a venv
with the crawler installed), alternating them, and records when the crawl's
last page was done, how long the survey of the entries (or, since it went,
the reading of the namespaces) and the sitemaps' write took, and when the
process ended, with its CPU (user and system). The steps are timed by
wrapping the CLI's own functions in the child process, so the crawl itself
runs unchanged. On a site past 50,000 pages the records are
on disk and these steps read them back: that is what this measures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

_WRAPPER = r"""
import json, os, sys, time
started = time.monotonic()
import crawler.cli.crawl_command as command
import crawler.cli.publish as publish
marks = {}
def timed(name, function):
    def wrapper(*args, **kwargs):
        began = time.monotonic()
        try:
            return function(*args, **kwargs)
        finally:
            marks[name] = round(time.monotonic() - began, 3)
            marks[name + "_ended"] = round(time.monotonic() - started, 3)
    return wrapper
command.crawl_site = timed("crawl", command.crawl_site)
# the namespaces' reading of the few records that carry extensions (once a survey of
# every record before the write)
publish.namespaces = timed("namespaces", publish.namespaces)
publish.write_sitemaps = timed("write", publish.write_sitemaps)
from crawler.cli.launch import main
try:
    main()
finally:
    times = os.times()
    marks.update(exit=round(time.monotonic() - started, 3), user=times.user,
                 system=times.system, children_user=times.children_user,
                 children_system=times.children_system)
    print("AFTER-CRAWL " + json.dumps(marks), file=sys.stderr)
"""


def one_run(python: str, url: str, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        # -P: not the current directory first on the path, where a checkout's
        # crawler/ would be imported instead of the one installed in the venv
        done = subprocess.run(
            [python, "-P", "-c", _WRAPPER, "crawl", url, "--out", out, "--concurrency",
             str(concurrency), "--quiet"], capture_output=True, text=True, check=False,
            cwd=out)
    for line in done.stderr.splitlines():
        if line.startswith("AFTER-CRAWL "):
            return {"rc": done.returncode, **json.loads(line.partition(" ")[2])}
    raise SystemExit(f"{python}: no timings ({done.returncode}): {done.stderr[-500:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url")
    parser.add_argument("--python", action="append", required=True,
                        help="a venv's interpreter with the crawler installed (repeatable)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--results", help="append one JSON line per run here")
    args = parser.parse_args()
    for repeat in range(args.repeats):
        for python in args.python:
            marks = one_run(python, args.url, args.concurrency)
            after = marks["exit"] - marks["crawl_ended"]
            record = {"python": python, "repeat": repeat, "after_crawl_s": round(after, 3),
                      **marks, "t": time.strftime("%Y-%m-%dT%H:%M:%S")}
            print(json.dumps(record), file=sys.stdout, flush=True)
            if args.results:
                with open(args.results, "a") as results:
                    results.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
