"""What starting ``--workers`` costs: a crawl of a small site with 1, 2 and 4 workers,
wall time and CPU, for one or more installed CLIs run alternately.

    python bench/worker_start.py --cli before=A/bin/sitemap-crawler \\
        --cli after=B/bin/sitemap-crawler [--repeats 5] [--results FILE]

The site (20 pages) is served by this script on loopback, so what grows with the
worker count is the workers' start, not the crawl. CPU is the whole machine's busy
time over the run (``/proc/stat``): a worker forked from multiprocessing's fork
server is that server's child, not the crawl's, and its CPU reaches no rusage the
crawl could read. Run it on an otherwise idle machine; medians of the repeats.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from results_file import emit

PAGES = 20


class _Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # one write for the headers, one for the body: without this the second waits for
    # the client's delayed ACK (40 ms a kept-alive request; wall times, not CPU)
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        links = "".join(f'<a href="/p{n}.html">{n}</a>' for n in range(PAGES))
        body = f"<!doctype html><title>{self.path}</title>{links}".encode()
        if self.path == "/robots.txt":
            body = b"User-agent: *\nAllow: /\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain" if self.path == "/robots.txt"
                         else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


def _busy_seconds() -> float:
    with open("/proc/stat") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _run(cli: str, url: str, workers: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        busy, started = _busy_seconds(), time.monotonic()
        subprocess.run([cli, "crawl", url, "--out", out, "--workers", str(workers),
                        "--concurrency", "8", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        return time.monotonic() - started, _busy_seconds() - busy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", action="append", required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--results")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    clis = [given.partition("=")[::2] if "=" in given else (given, given)
            for given in args.cli]  # (name, path)
    runs: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(args.repeats):
        for name, cli in clis:
            for workers in (1, 2, 4):
                runs.setdefault((name, workers), []).append(_run(cli, url, workers))
    server.shutdown()
    lines = []
    for (name, workers), measured in runs.items():
        lines.append({"cli": name, "workers": workers,
                      "wall_s": round(statistics.median(wall for wall, _ in measured), 3),
                      "cpu_s": round(statistics.median(cpu for _, cpu in measured), 3),
                      "repeats": len(measured)})
    emit(lines, args.results)


if __name__ == "__main__":
    main()
