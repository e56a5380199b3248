"""What judging found links costs the crawling process: calls and seconds in
``Admission.consider``, with the CPU of the process and of its children.

    python bench/judging_cost.py URL --python before=A/bin/python \\
        --python after=B/bin/python [--command crawl|audit] [--repeats 3]
        [--results FILE] [-- OPTIONS]

Each interpreter (a venv with the crawler installed) runs ``sitemap-crawler
crawl URL`` (or ``audit``) with the options after ``--`` (``--state`` alone
gets a fresh file in a scratch directory), alternating them, with
``Admission.consider`` wrapped in a timer: the crawl otherwise runs as it
would. Whole crawls on a shared machine vary by more than the judging of
links costs; its own time does not. The timer adds ~0.1 µs a call.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile

from results_file import emit

_WRAPPER = r"""
import os, sys, time
from crawler.engine.admission import Admission
spent = [0.0, 0]
consider = Admission.consider
def timed(self, *args, **kwargs):
    began = time.perf_counter()
    try:
        return consider(self, *args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - began
        spent[1] += 1
Admission.consider = timed
from crawler.cli.launch import main
try:
    main()
finally:
    times = os.times()
    print(f"JUDGING {spent[1]} {spent[0]:.4f} {times.user + times.system:.3f} "
          f"{times.children_user + times.children_system:.3f}", file=sys.stderr)
"""


def one_run(python: str, command: str, url: str, options: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        given = [f"--state={out}/state.db" if option == "--state" else option
                 for option in options]
        written = ["--out", out] if command == "crawl" else ["--report", f"{out}/report.json"]
        # -P: the venv's crawler, never a checkout's in the current directory
        done = subprocess.run([python, "-P", "-c", _WRAPPER, command, url, *written,
                               "--quiet", *given], capture_output=True, text=True,
                              check=False, cwd=out)
    found = re.search(r"^JUDGING (\d+) (\S+) (\S+) (\S+)$", done.stderr, re.M)
    if found is None:
        raise SystemExit(f"{python}: no measurement ({done.returncode}): {done.stderr[-500:]}")
    calls, seconds, cpu, children = found.groups()
    return {"rc": done.returncode, "calls": int(calls), "judging_s": float(seconds),
            "cpu_s": float(cpu), "children_cpu_s": float(children)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--python", action="append", required=True, metavar="NAME=PYTHON")
    parser.add_argument("--command", default="crawl", choices=("crawl", "audit"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--results")
    argv = sys.argv[1:]
    ours, options = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv \
        else (argv, [])
    args = parser.parse_args(ours)
    sides = [side.partition("=")[::2] for side in args.python]
    for repeat in range(args.repeats):
        for name, python in sides if repeat % 2 == 0 else sides[::-1]:
            row = {"name": name, "command": args.command, "url": args.url,
                   "options": " ".join(options), "repeat": repeat,
                   **one_run(python, args.command, args.url, options)}
            emit([row], args.results)


if __name__ == "__main__":
    main()
