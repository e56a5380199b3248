"""Benchmark sitemap-crawler against a local nginx — pages/s, CPU, memory, completeness.

    python bench/bench.py --pages 10000 --repeats 3            # synthetic site
    python bench/bench.py --corpus synthetic,pg --repeats 3    # both, one after the other
    python bench/bench.py --pages 10000 --incremental          # first vs second run, and
                                                               # the bare-aiohttp floor

The PostgreSQL HTML docs come from the Debian package postgresql-doc-15; where
it cannot be installed, that corpus is skipped with a message.

It installs nginx (Debian package) if it is missing, serves the corpus on
127.0.0.1 with ETag/Last-Modified and keep-alive, runs the crawler's real CLI
and reads the figures from the kernel (wait4: CPU, peak RSS) and from nginx's
access log (pages served, bytes sent). Only loopback is ever contacted, and
every crawl runs under a timeout. For ratios against other crawlers measured in
the same run, use the shared harness (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = Path("/tmp/sitemap-crawler-bench")
PG_DOCS = Path("/usr/share/doc/postgresql-doc-15/html")
NGINX_CONF = """
worker_processes 1;
pid {state}/nginx.pid;
error_log {state}/error.log;
events {{ worker_connections 4096; }}
http {{
    types {{ text/html html; text/plain txt; text/css css; image/png png; image/svg+xml svg; }}
    default_type application/octet-stream;
    log_format bench '$status $bytes_sent "$request_uri"';
    access_log {state}/access.log bench buffer=256k flush=1s;
    client_body_temp_path {state}/tmp; proxy_temp_path {state}/tmp;
    fastcgi_temp_path {state}/tmp; uwsgi_temp_path {state}/tmp; scgi_temp_path {state}/tmp;
    sendfile on; tcp_nopush on; keepalive_requests 1000000; keepalive_timeout 60;
    etag on; autoindex off;
    server {{ listen 127.0.0.1:{port}; root {root}; index index.html; }}
}}
"""


def ensure_nginx() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if found:
        return found
    print("installing nginx (Debian package nginx-light)…", file=sys.stderr)
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "nginx-light"], check=True)
    return shutil.which("nginx", path="/usr/sbin:/sbin") or "nginx"


class Nginx:
    """A private nginx on 127.0.0.1:port serving ``root``."""

    def __init__(self, root: Path, port: int) -> None:
        self.root, self.port = root, port
        self.state = WORK / f"nginx-{port}"

    def __enter__(self) -> Nginx:
        binary = ensure_nginx()
        (self.state / "tmp").mkdir(parents=True, exist_ok=True)
        conf = self.state / "nginx.conf"
        conf.write_text(NGINX_CONF.format(state=self.state, port=self.port, root=self.root))
        subprocess.run([binary, "-e", str(self.state / "error.log"), "-c", str(conf),
                        "-p", str(self.state)], check=True)
        time.sleep(0.3)
        return self

    def __exit__(self, *exc_info: object) -> None:
        pid_file = self.state / "nginx.pid"
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGQUIT)
            time.sleep(0.3)

    def log_mark(self) -> int:
        self._reopen()
        log = self.state / "access.log"
        return log.stat().st_size if log.exists() else 0

    def log_since(self, mark: int) -> list[tuple[int, int, str]]:
        self._reopen()
        with open(self.state / "access.log", "rb") as handle:
            handle.seek(mark)
            rows = []
            for line in handle.read().decode("utf-8", "replace").splitlines():
                status, sent, uri = line.split(" ", 2)
                rows.append((int(status), int(sent), uri.strip('"')))
        return rows

    def _reopen(self) -> None:  # flush the buffered access log
        pid_file = self.state / "nginx.pid"
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGUSR1)
            time.sleep(1.2)


def run_crawl(command: list[str], timeout: float) -> dict[str, float]:
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            process.kill()
        time.sleep(0.02)
    wall = time.monotonic() - started
    stderr = process.stderr.read().decode() if process.stderr else ""
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024, "code": os.waitstatus_to_exitcode(status),
            "stderr": stderr.strip()}


def listed_urls(out: Path) -> set[str]:
    import gzip
    import re
    urls: set[str] = set()
    for shard in out.glob("sitemap-*.xml*"):
        data = shard.read_bytes()
        data = gzip.decompress(data) if shard.name.endswith(".gz") else data
        urls.update(match.decode() for match in re.findall(rb"<loc>([^<]+)</loc>", data))
    return urls


def prepare(corpus: str, pages: int) -> tuple[Path, set[str], str] | None:
    if corpus == "pg":
        if not PG_DOCS.exists():
            subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql-doc-15"], check=False)
        if not PG_DOCS.exists():
            print("skipping pg: the Debian package postgresql-doc-15 is not available",
                  file=sys.stderr)
            return None
        truth = {"/" + p.relative_to(PG_DOCS).as_posix() for p in PG_DOCS.glob("*.html")}
        return PG_DOCS, truth, "/index.html"
    root = WORK / f"site-{pages}"
    if not (root / "groundtruth.txt").exists():
        subprocess.run([sys.executable, str(HERE / "gen_site.py"), "--pages", str(pages),
                        "--out", str(root)], check=True)
    truth = set((root / "groundtruth.txt").read_text().split())
    return root, truth, "/"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="synthetic",
                        help="comma-separated: synthetic, pg")
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--port", type=int, default=18431)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--incremental", action="store_true",
                        help="measure a second run with --state against the first")
    parser.add_argument("--crawler", default=str(Path(sys.executable).parent / "sitemap-crawler"))
    parser.add_argument("--json", type=Path, help="append one JSON line per run here")
    args = parser.parse_args()

    rows: list[dict] = []
    for corpus in args.corpus.split(","):
        if corpus not in ("synthetic", "pg"):
            parser.error(f"unknown corpus {corpus!r}")
        prepared = prepare(corpus, args.pages)
        if prepared is not None:
            rows += bench_corpus(args, corpus, *prepared)
    summarize(rows)


def bench_corpus(args: argparse.Namespace, corpus: str, root: Path, truth: set[str],
                 entry: str) -> list[dict]:
    """``--repeats`` crawls of one corpus (first and, with --incremental, second runs)."""
    rows = []
    with Nginx(root, args.port) as nginx:
        subprocess.run(["cat", *map(str, root.rglob("*.html"))], stdout=subprocess.DEVNULL)
        for repeat in range(args.repeats):
            out = WORK / f"out-{repeat}"
            state = WORK / f"state-{repeat}.db"
            shutil.rmtree(out, ignore_errors=True)
            state.unlink(missing_ok=True)
            command = [args.crawler, "crawl", f"http://127.0.0.1:{args.port}{entry}",
                       "--out", str(out), "--concurrency", str(args.concurrency)]
            if args.incremental:
                command += ["--state", str(state)]
            floor = [sys.executable, str(Path(__file__).with_name("floor_304.py")), str(state),
                     "--concurrency", str(args.concurrency)]
            runs = ("first", "second", "floor") if args.incremental else ("first",)
            for run in runs:
                mark = nginx.log_mark()
                figures = run_crawl(floor if run == "floor" else command, args.timeout)
                log = nginx.log_since(mark)
                pages = {uri.split("?")[0] for status, _, uri in log
                         if status in (200, 304) and not uri.endswith(".txt")}
                listed = {url.split(f":{args.port}", 1)[1] for url in listed_urls(out)}
                row = {"corpus": corpus if corpus == "pg" else f"s{args.pages}",
                       "repeat": repeat, "run": run, **figures,
                       "requests": len(log), "pages": len(pages),
                       "bytes_sent": sum(sent for _, sent, _ in log),
                       "pages_per_s": len(pages) / figures["wall"],
                       "cpu_ms_per_page": 1000 * figures["cpu"] / max(len(pages), 1),
                       "complete": float("nan") if run == "floor"  # it lists nothing
                       else len(truth & {p.split("?")[0] for p in listed}) / len(truth)}
                rows.append(row)
                print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                                  for k, v in row.items() if k != "stderr"}), flush=True)
                if args.json:
                    with open(args.json, "a") as handle:
                        handle.write(json.dumps(row) + "\n")
    return rows


def summarize(rows: list[dict]) -> None:
    print("\n| corpus | run | pages/s (median) | CPU ms/page | peak RSS MB | complete "
          "| bytes sent |")
    print("|---|---|---|---|---|---|---|")
    for corpus, run in sorted({(row["corpus"], row["run"]) for row in rows}):
        chosen = [row for row in rows if row["run"] == run and row["corpus"] == corpus]
        print(f"| {corpus} | {run} | {statistics.median(r['pages_per_s'] for r in chosen):.0f} "
              f"| {statistics.median(r['cpu_ms_per_page'] for r in chosen):.2f} "
              f"| {max(r['rss_mb'] for r in chosen):.0f} "
              f"| {min(r['complete'] for r in chosen):.4f} "
              f"| {statistics.median(r['bytes_sent'] for r in chosen):.0f} |")
    firsts = {(r["corpus"], r["repeat"]): r for r in rows if r["run"] == "first"}
    for run, label in (("second", "second run"), ("floor", "bare aiohttp 304 floor")):
        later = [r for r in rows if r["run"] == run]
        for corpus in sorted({r["corpus"] for r in later}):
            pairs = [(firsts[r["corpus"], r["repeat"]], r) for r in later
                     if r["corpus"] == corpus]
            time_ratio = statistics.median(b["wall"] / a["wall"] for a, b in pairs)
            byte_ratio = statistics.median(b["bytes_sent"] / a["bytes_sent"] for a, b in pairs)
            print(f"\n{corpus}: {label} / first run: wall time {time_ratio:.1%}, "
                  f"bytes {byte_ratio:.1%}")


if __name__ == "__main__":
    main()
