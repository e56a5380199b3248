"""The parse child's work a page, on one core, with nothing else running.

    python bench/parse_child.py ROOT URL --python VENV/bin/python [--python OTHER/bin/python]
                                [--start index.html] [--repeats 3] [--results FILE]

ROOT is a site on disk (a corpus of the harness) and URL where it would be
served. Each run is a fresh process of the interpreter given (a venv with the
crawler installed), alternating them: it reads the site's pages in
breadth-first order from the start page, then hands each, as a 200 answer,
to what the parse child runs for a page (``PageFetcher.read``) and pickles
the answer as the child does, timing CPU per page.

The pages are found with a regular expression and ``urllib.parse``, not the
crawler's own reader, so that its caches (resolution, normalisation) start
empty as in a crawl: a first pass over the pages with the crawler's code
would leave them warm and favour the caches (measured: a cache that helped
16 % cold looked like 25 % warm). A crawl's child also waits for pages and
shares the machine, so its CPU a page in a crawl is higher; this measures
the child's own work, for comparing two versions of it.

``--look-ahead`` also times each interpreter with the next page parsed in a
thread while this one is read (lexbor's parse releases the GIL), the
crawler's own parser call handed the tree made ahead: what pipelining the
child's two halves would give. It reports wall time a page beside the CPU
of both threads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

_WORKER = r"""
import collections, json, os, pickle, re, sys, time, urllib.parse
from datetime import UTC, datetime
root, base, start = sys.argv[1], sys.argv[2], sys.argv[3]
href = re.compile(rb'href\s*=\s*["\']?([^"\'\s>]+)', re.I)
first = urllib.parse.urljoin(base, start)
seen, queue, pages = {first}, collections.deque([first]), []
while queue:
    url = queue.popleft()
    path = urllib.parse.urlsplit(url).path
    if path.endswith("/"):
        path += "index.html"
    name = os.path.join(root, urllib.parse.unquote(path).lstrip("/"))
    if not name.endswith(".html") or not os.path.isfile(name):
        continue
    with open(name, "rb") as handle:
        body = handle.read()
    pages.append((url, body))
    for found in href.findall(body):
        link = urllib.parse.urljoin(url, found.decode("utf-8", "replace")).partition("#")[0]
        if link.startswith(base) and link not in seen:
            seen.add(link)
            queue.append(link)
from crawler.config import CrawlConfig
from crawler.core.response import Response
from crawler.engine.page_fetcher import PageFetcher
from crawler.page.wire import outcome_out
reader = PageFetcher(CrawlConfig(start_url=first), fetcher=None)
now = datetime.now(UTC)
answers = [Response(url=url, status=200, content_type="text/html", body=body)
           for url, body in pages]
ahead = sys.argv[4] == "ahead"
if ahead:  # the next pages parsed in a thread, at most two trees ahead
    import queue, threading
    import crawler.page.extract as extract_module
    from selectolax.lexbor import LexborHTMLParser
    made, done, room = {}, queue.SimpleQueue(), threading.Semaphore(2)
    def made_or_parsed(html):
        tree = made.pop(id(html), None)
        return tree if tree is not None else LexborHTMLParser(html)
    extract_module.LexborHTMLParser = made_or_parsed
    def parse_ahead():
        for answer in answers:
            room.acquire()
            done.put((answer.body, LexborHTMLParser(answer.body)))
    threading.Thread(target=parse_ahead, daemon=True).start()
began, wall_began = time.process_time(), time.perf_counter()
links = 0
for answer in answers:
    if ahead:
        body, tree = done.get()
        room.release()
        made[id(body)] = tree
    outcome = reader.read(answer, 1, now)
    if ahead:
        made.clear()  # a page decoded first was parsed again from its text
    links += outcome.record.links_found
    pickle.dumps((1, outcome_out(outcome)), protocol=pickle.HIGHEST_PROTOCOL)
spent, wall = time.process_time() - began, time.perf_counter() - wall_began
print("PARSE-CHILD " + json.dumps({"pages": len(answers), "links": links,
                                   "us_per_page": round(spent / len(answers) * 1e6, 1),
                                   "wall_us_per_page": round(wall / len(answers) * 1e6, 1)}))
"""


def one_run(python: str, root: str, url: str, start: str, mode: str = "plain"
            ) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as here:
        # -P and a scratch directory: the venv's crawler, never a checkout's
        done = subprocess.run([python, "-P", "-c", _WORKER, root, url, start, mode],
                              capture_output=True, text=True, check=False, cwd=here)
    for line in done.stdout.splitlines():
        if line.startswith("PARSE-CHILD "):
            return json.loads(line.removeprefix("PARSE-CHILD "))
    raise SystemExit(f"{python}: no measurement\n{done.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("url")
    parser.add_argument("--start", default="index.html")
    parser.add_argument("--python", action="append", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--results")
    parser.add_argument("--look-ahead", action="store_true",
                        help="time each interpreter also with the next page parsed in a thread")
    args = parser.parse_args()
    modes = ("plain", "ahead") if args.look_ahead else ("plain",)
    sides = [(python, mode) for python in args.python for mode in modes]
    runs: dict[tuple[str, str], list[dict[str, float]]] = {side: [] for side in sides}
    for repeat in range(args.repeats):
        for python, mode in sides if repeat % 2 == 0 else sides[::-1]:
            result = one_run(python, args.root, args.url, args.start, mode)
            runs[python, mode].append(result)
            record = {"python": python, "url": args.url, "repeat": repeat, **result}
            if args.look_ahead:
                record["look_ahead"] = mode == "ahead"
            print(json.dumps(record), flush=True)
            if args.results:
                with open(args.results, "a") as out:
                    out.write(json.dumps(record) + "\n")
    for (python, mode), results in runs.items():
        cpu = [result["us_per_page"] for result in results]
        wall = statistics.median(result["wall_us_per_page"] for result in results)
        label = f"{python} (next page parsed ahead)" if mode == "ahead" else python
        print(f"{label}: median {statistics.median(cpu):.0f} us/page of CPU "
              f"({min(cpu):.0f}-{max(cpu):.0f}), {wall:.0f} us/page of wall time",
              file=sys.stderr)

if __name__ == "__main__":
    main()
