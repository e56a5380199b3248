"""Start-up time of the installed CLI: ``--version``, ``--help`` and, for a crawl,
the time from exec to the first request the server sees (issue #27's goals:
0.1 s, 0.1 s and 0.15 s). The median of ``--repeats`` runs of each, one JSON line.

    python bench/startup.py --repeats 15 [--cli PATH] [--results FILE]

The crawl is of a one-page site on a loopback server of this script's own, which
stamps the first request's arrival with the same monotonic clock that stamped the
exec; what follows the first request (the crawl itself, writing) is not counted
here but in ``bench.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PAGE = b"<!doctype html><title>one</title><p>one page"


class _FirstRequest(BaseHTTPRequestHandler):
    """Serves one page; notes when the first request of a run arrived."""

    arrived: float | None = None

    def do_GET(self) -> None:
        if _FirstRequest.arrived is None:
            _FirstRequest.arrived = time.monotonic()
        body = PAGE if self.path == "/" else b"not here"
        self.send_response(200 if self.path == "/" else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


def _timed(command: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - started


def _first_request(cli: str, url: str) -> tuple[float, float]:
    out = Path(tempfile.mkdtemp())
    try:
        _FirstRequest.arrived = None
        started = time.monotonic()
        subprocess.run([cli, "crawl", url, "--out", str(out), "--quiet"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ended = time.monotonic()
        assert _FirstRequest.arrived is not None
        return _FirstRequest.arrived - started, ended - started
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=shutil.which("sitemap-crawler") or "sitemap-crawler")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FirstRequest)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    runs: dict[str, list[float]] = {"version": [], "help": [], "first_request": [],
                                    "one_page_crawl": []}
    _timed([args.cli, "--version"])  # warm the file cache
    for _ in range(args.repeats):
        runs["version"].append(_timed([args.cli, "--version"]))
        runs["help"].append(_timed([args.cli, "--help"]))
        first, whole = _first_request(args.cli, url)
        runs["first_request"].append(first)
        runs["one_page_crawl"].append(whole)
    server.shutdown()
    line = {"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "repeats": args.repeats,
            "python": sys.version.split()[0],
            **{f"{name}_s": round(statistics.median(values), 4)
               for name, values in runs.items()},
            **{f"{name}_min_s": round(min(values), 4) for name, values in runs.items()}}
    print(json.dumps(line))
    if args.results:
        with args.results.open("a") as out:
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
