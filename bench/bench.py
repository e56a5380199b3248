"""Benchmark sitemap-crawler against a local nginx — pages/s, CPU, memory, completeness.

    python bench/bench.py --pages 10000 --repeats 3            # synthetic site
    python bench/bench.py --corpus synthetic,pg --repeats 3    # both, one after the other
    python bench/bench.py --pages 10000 --incremental          # first vs second run, and
                                                               # the bare-client floor
    python bench/bench.py --variants default,http2 --baseline REV   # transports, and the
                                                               # code of commit REV, in one run
    python bench/bench.py --tls --variants default,http2       # nginx over HTTPS with HTTP/2

The PostgreSQL HTML docs come from the Debian package postgresql-doc-15; where
it cannot be installed, that corpus is skipped with a message.

It installs nginx (Debian package) if it is missing, serves the corpus on
127.0.0.1 with ETag/Last-Modified and keep-alive, runs the crawler's real CLI
and reads the figures from the kernel (wait4: CPU, peak RSS) and from nginx's
access log (pages served, bytes sent, and the protocol of every request).
Variants (``--variants``: the installed CLI as it is, ``http2`` with
``--http2``, and ``baseline``, the CLI of commit ``--baseline REV`` built into
a venv of its own) run one after the other in every repeat, in an order that
rotates, so their ratios come from the same minutes of the same machine.
Only loopback is ever contacted, and every crawl runs under a timeout. For
ratios against other crawlers measured in the same run, use the shared
harness (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
# Documentation sites, where navigation puts hundreds of links on every page:
# corpus -> (Debian package, document root, start path, pages under it that count)
DOC_CORPORA = {
    "pg": ("postgresql-doc-15", PG_DOCS, "/index.html", "*.html"),
    "py": ("python3.11-doc", Path("/usr/share/doc/python3.11/html"), "/index.html", "**/*.html"),
    "cpp": ("cppreference-doc-en-html", Path("/usr/share/cppreference/doc/html"),
            "/en/index.html", "en/**/*.html"),
}
_LINK = re.compile(rb"<a(?:rea)?\s[^>]*?href\s*=", re.IGNORECASE)
NGINX_CONF = """{modules}
worker_processes 1;
pid {state}/nginx.pid;
error_log {state}/error.log;
events {{ worker_connections 4096; }}
http {{
    types {{ text/html html; text/plain txt; text/css css; image/png png; image/svg+xml svg;
             application/javascript js; application/json json; }}
    default_type application/octet-stream;
    log_format bench '$status $bytes_sent $server_protocol "$request_uri"';
    access_log {state}/access.log bench buffer=256k flush=1s;
    client_body_temp_path {state}/tmp; proxy_temp_path {state}/tmp;
    fastcgi_temp_path {state}/tmp; uwsgi_temp_path {state}/tmp; scgi_temp_path {state}/tmp;
    sendfile on; tcp_nopush on; keepalive_requests 1000000; keepalive_timeout 60;
    etag on; autoindex off;
    server {{ listen 127.0.0.1:{port}{tls}; root {root}; index index.html;{certs}{latency} }}
}}
"""
# Latency mode: njs holds every answer for the given delay, then serves the file as
# usual (ETag, Last-Modified, 304s) through an internal location: a round trip to a
# distant server, on loopback.
LATENCY_CONF = """
        js_import delay from {state}/delay.js;
        location / {{ js_content delay.hold; }}
        location /_static/ {{ internal; alias {root}/; }}"""
LATENCY_JS = """function hold(r) {{
    setTimeout(function () {{ r.internalRedirect('/_static' + r.uri); }}, {ms});
}}
export default {{hold}};
"""
NJS_MODULE = Path("/usr/lib/nginx/modules/ngx_http_js_module.so")


def ensure_nginx() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if found:
        return found
    print("installing nginx (Debian package nginx-light)…", file=sys.stderr)
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "nginx-light"], check=True)
    return shutil.which("nginx", path="/usr/sbin:/sbin") or "nginx"


# glibc gives memory back to the system (brk) once the top of its heap holds 128 KB free.
# Where a server's heap ends then depends on the order of the requests it has had: after
# the soft-404 probes' 404s, nginx's njs grew and trimmed its heap twice for every later
# 20 KB page (strace: 2 brk a request, 15 a run without the probes), 40 to 50 µs of
# its CPU a page that the crawler beside it pays for on two cores. A fixed threshold
# keeps the server's cost the same whatever a crawler asks first.
NGINX_MALLOC = "glibc.malloc.trim_threshold=67108864"


def start_nginx(conf: Path, state: Path) -> None:
    """nginx with ``conf``, its heap kept (only nginx's: the crawlers run as they ship)."""
    subprocess.run([ensure_nginx(), "-e", str(state / "error.log"), "-c", str(conf),
                    "-p", str(state)], check=True,
                   env={**os.environ, "GLIBC_TUNABLES": NGINX_MALLOC})


class Nginx:
    """A private nginx on 127.0.0.1:port serving ``root``."""

    def __init__(self, root: Path, port: int, *, tls: bool = False,
                 latency: float = 0.0) -> None:
        self.root, self.port, self.tls, self.latency = root, port, tls, latency
        self.state = WORK / f"nginx-{port}"

    @property
    def origin(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def ca_file(self) -> Path:
        """A self-signed certificate for 127.0.0.1, which the crawler is told to trust."""
        cert = self.state / "cert.pem"
        if not cert.exists():
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                            "-days", "2", "-subj", "/CN=127.0.0.1",
                            "-addext", "subjectAltName=IP:127.0.0.1",
                            "-keyout", str(self.state / "key.pem"), "-out", str(cert)],
                           check=True, capture_output=True)
        return cert

    def __enter__(self) -> Nginx:
        (self.state / "tmp").mkdir(parents=True, exist_ok=True)
        conf = self.state / "nginx.conf"
        certs = (f" ssl_certificate {self.ca_file()}; ssl_certificate_key "
                 f"{self.state / 'key.pem'};" if self.tls else "")
        modules = latency = ""
        if self.latency:
            if not NJS_MODULE.exists():
                subprocess.run(["apt-get", "install", "-y", "-qq", "libnginx-mod-http-js"],
                               check=True)
            modules = f"load_module {NJS_MODULE};"
            (self.state / "delay.js").write_text(
                LATENCY_JS.format(ms=round(self.latency * 1000)))
            latency = LATENCY_CONF.format(state=self.state, root=self.root)
        conf.write_text(NGINX_CONF.format(state=self.state, port=self.port, root=self.root,
                                          tls=" ssl http2" if self.tls else "", certs=certs,
                                          modules=modules, latency=latency))
        start_nginx(conf, self.state)
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

    def log_since(self, mark: int) -> list[tuple[int, int, str, str]]:
        """(status, bytes sent, protocol, URI) of every request since ``mark``."""
        self._reopen()
        with open(self.state / "access.log", "rb") as handle:
            handle.seek(mark)
            rows = []
            for line in handle.read().decode("utf-8", "replace").splitlines():
                status, sent, protocol, uri = line.split(" ", 3)
                rows.append((int(status), int(sent), protocol, uri.strip('"')))
        return rows

    def _reopen(self) -> None:  # flush the buffered access log
        pid_file = self.state / "nginx.pid"
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGUSR1)
            time.sleep(1.2)


def run_crawl(command: list[str], timeout: float,
              env: dict[str, str] | None = None) -> dict[str, float]:
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=env)
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


_LINKS: dict[tuple[Path, str], int] = {}


def links_in(root: Path, uri: str) -> int:
    """How many <a>/<area> hrefs the served page holds (what the crawler had to
    extract, resolve, scope-check and de-duplicate): the divisor of CPU per link."""
    key = (root, uri)
    if key not in _LINKS:
        path = root / uri.lstrip("/")
        if path.is_dir():
            path = path / "index.html"
        try:
            _LINKS[key] = len(_LINK.findall(path.read_bytes()))
        except OSError:
            _LINKS[key] = 0
    return _LINKS[key]


def prepare(corpus: str, pages: int) -> tuple[Path, set[str], str] | None:
    if corpus in DOC_CORPORA:
        package, docs, start, pattern = DOC_CORPORA[corpus]
        if not docs.exists():
            subprocess.run(["apt-get", "install", "-y", "-qq", package], check=False)
        if not docs.exists():
            print(f"skipping {corpus}: the Debian package {package} is not available",
                  file=sys.stderr)
            return None
        truth = {"/" + p.relative_to(docs).as_posix() for p in docs.glob(pattern)}
        return docs, truth, start
    root = WORK / f"site-{pages}"
    if not (root / "groundtruth.txt").exists():
        subprocess.run([sys.executable, str(HERE / "gen_site.py"), "--pages", str(pages),
                        "--out", str(root)], check=True)
    truth = set((root / "groundtruth.txt").read_text().split())
    return root, truth, "/"


def baseline_crawler(rev: str) -> str:
    """The CLI of commit ``rev``, built once into a venv of its own (today's code, to
    measure a change against in the same run)."""
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", rev],
                            check=True, capture_output=True, text=True).stdout.strip()
    venv = WORK / f"baseline-{commit}"
    crawler = venv / "bin" / "sitemap-crawler"
    if not crawler.exists():
        source = WORK / f"baseline-{commit}-src"
        shutil.rmtree(source, ignore_errors=True)
        source.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", commit],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(source)],
                       check=True)
    return str(crawler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="synthetic",
                        help="comma-separated: synthetic, pg, py (Python 3.11 docs), "
                             "cpp (cppreference)")
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--port", type=int, default=18431)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--incremental", action="store_true",
                        help="measure a second run with --state against the first")
    parser.add_argument("--crawler", default=str(Path(sys.executable).parent / "sitemap-crawler"))
    parser.add_argument("--variants", default="default",
                        help="comma-separated: default, http2 (--http2), workers2 "
                             "(--workers 2), baseline")
    parser.add_argument("--baseline", default="HEAD",
                        help="the commit the 'baseline' variant is built from")
    parser.add_argument("--tls", action="store_true",
                        help="serve over HTTPS (nginx offers HTTP/2 by ALPN)")
    parser.add_argument("--json", type=Path, help="append one JSON line per run here")
    args = parser.parse_args()

    variants: dict[str, list[str]] = {}
    for name in args.variants.split(","):
        if name == "default":
            variants[name] = [args.crawler]
        elif name == "http2":
            variants[name] = [args.crawler, "--http2"]
        elif name == "workers2":
            variants[name] = [args.crawler, "--workers", "2"]
        elif name == "workers1":
            variants[name] = [args.crawler, "--workers", "1"]
        elif name == "baseline":
            variants[name] = [baseline_crawler(args.baseline)]
        else:
            parser.error(f"unknown variant {name!r}")
    rows: list[dict] = []
    for corpus in args.corpus.split(","):
        if corpus != "synthetic" and corpus not in DOC_CORPORA:
            parser.error(f"unknown corpus {corpus!r}")
        prepared = prepare(corpus, args.pages)
        if prepared is not None:
            rows += bench_corpus(args, variants, corpus, *prepared)
    summarize(rows)


def bench_corpus(args: argparse.Namespace, variants: dict[str, list[str]], corpus: str,
                 root: Path, truth: set[str], entry: str) -> list[dict]:
    """``--repeats`` crawls of one corpus by every variant (first and, with
    --incremental, second runs, then the bare-client floor)."""
    rows = []
    names = list(variants)
    with Nginx(root, args.port, tls=args.tls) as nginx:
        env = dict(os.environ, SSL_CERT_FILE=str(nginx.ca_file())) if args.tls else None
        subprocess.run(["cat", *map(str, root.rglob("*.html"))], stdout=subprocess.DEVNULL)
        for repeat in range(args.repeats):
            order = names[repeat % len(names):] + names[: repeat % len(names)]
            for variant in order:
                out = WORK / f"out-{variant}-{repeat}"
                state = WORK / f"state-{variant}-{repeat}.db"
                shutil.rmtree(out, ignore_errors=True)
                state.unlink(missing_ok=True)
                binary, *extra = variants[variant]
                command = [binary, "crawl", f"{nginx.origin}{entry}", "--out", str(out),
                           "--concurrency", str(args.concurrency), *extra]
                if args.incremental:
                    command += ["--state", str(state)]
                runs = ("first", "second") if args.incremental else ("first",)
                for run in runs:
                    rows.append(measure(args, nginx, corpus, truth, out, repeat, variant, run,
                                        command, env))
            if args.incremental:
                floor = [sys.executable, str(Path(__file__).with_name("floor_304.py")),
                         str(WORK / f"state-{order[-1]}-{repeat}.db"),
                         "--concurrency", str(args.concurrency)]
                rows.append(measure(args, nginx, corpus, truth, None, repeat, "floor", "floor",
                                    floor, env))
    return rows


def measure(args: argparse.Namespace, nginx: Nginx, corpus: str, truth: set[str],
            out: Path | None, repeat: int, variant: str, run: str, command: list[str],
            env: dict[str, str] | None) -> dict:
    """One run of ``command``: its figures, and what nginx saw of it."""
    mark = nginx.log_mark()
    figures = run_crawl(command, args.timeout, env)
    log = nginx.log_since(mark)
    pages = {uri.split("?")[0] for status, _, _, uri in log
             if status in (200, 304) and not uri.endswith(".txt")}
    listed = ({url.split(f":{args.port}", 1)[1] for url in listed_urls(out)}
              if out is not None else set())
    row = {"corpus": corpus if corpus in DOC_CORPORA else f"s{args.pages}", "variant": variant,
           "repeat": repeat, "run": run, **figures,
           "requests": len(log), "pages": len(pages),
           "protocols": sorted({protocol for _, _, protocol, _ in log}),
           "bytes_sent": sum(sent for _, sent, _, _ in log),
           "pages_per_s": len(pages) / figures["wall"],
           "links": (links := sum(links_in(nginx.root, uri) for uri in pages)),
           "us_per_link": 1e6 * figures["cpu"] / max(links, 1),
           "cpu_ms_per_page": 1000 * figures["cpu"] / max(len(pages), 1),
           "complete": float("nan") if out is None  # the floor lists nothing
           else len(truth & {p.split("?")[0] for p in listed}) / len(truth)}
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                      for k, v in row.items() if k != "stderr"}), flush=True)
    if args.json:
        with open(args.json, "a") as handle:
            handle.write(json.dumps(row) + "\n")
    return row


def summarize(rows: list[dict]) -> None:
    print("\n| corpus | variant | run | pages/s (median) | CPU ms/page | CPU µs/link "
          "| peak RSS MB | complete | bytes sent | protocol |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for corpus, variant, run in sorted({(r["corpus"], r["variant"], r["run"]) for r in rows}):
        chosen = [r for r in rows
                  if (r["corpus"], r["variant"], r["run"]) == (corpus, variant, run)]
        print(f"| {corpus} | {variant} | {run} "
              f"| {statistics.median(r['pages_per_s'] for r in chosen):.0f} "
              f"| {statistics.median(r['cpu_ms_per_page'] for r in chosen):.2f} "
              f"| {statistics.median(r['us_per_link'] for r in chosen):.1f} "
              f"| {max(r['rss_mb'] for r in chosen):.0f} "
              f"| {min(r['complete'] for r in chosen):.4f} "
              f"| {statistics.median(r['bytes_sent'] for r in chosen):.0f} "
              f"| {', '.join(sorted({p for r in chosen for p in r['protocols']}))} |")
    firsts = {(r["corpus"], r["variant"], r["repeat"]): r for r in rows if r["run"] == "first"}
    variants = sorted({r["variant"] for r in rows if r["run"] == "first"})
    for corpus in sorted({r["corpus"] for r in rows}):
        for a in variants:
            for b in variants:
                pairs = [(firsts[corpus, a, n], firsts[corpus, b, n])
                         for (c, v, n) in firsts if (c, v) == (corpus, a)
                         and (corpus, b, n) in firsts]
                if a < b and pairs:
                    ratio = statistics.median(x["pages_per_s"] / y["pages_per_s"]
                                              for x, y in pairs)
                    cpu = statistics.median(x["cpu_ms_per_page"] / y["cpu_ms_per_page"]
                                            for x, y in pairs)
                    print(f"\n{corpus}: {a} / {b}, same repeat: pages/s x{ratio:.2f}, "
                          f"CPU per page x{cpu:.2f}")
        for later in [r for r in rows if r["corpus"] == corpus and r["run"] == "second"]:
            first = firsts[corpus, later["variant"], later["repeat"]]
            later["time_ratio"] = later["wall"] / first["wall"]
            later["byte_ratio"] = later["bytes_sent"] / first["bytes_sent"]
        for variant in variants:
            seconds = [r for r in rows if r["corpus"] == corpus and r["run"] == "second"
                       and r["variant"] == variant]
            if seconds:
                print(f"\n{corpus} {variant}: second run / first run: wall time "
                      f"{statistics.median(r['time_ratio'] for r in seconds):.1%}, bytes "
                      f"{statistics.median(r['byte_ratio'] for r in seconds):.1%}")
        floors = [r for r in rows if r["corpus"] == corpus and r["run"] == "floor"]
        for variant in variants:
            seconds = {r["repeat"]: r for r in rows if r["corpus"] == corpus
                       and r["run"] == "second" and r["variant"] == variant}
            pairs = [(seconds[f["repeat"]], f) for f in floors if f["repeat"] in seconds]
            if pairs:
                print(f"{corpus} {variant}: second run / bare-client floor: wall time "
                      f"x{statistics.median(a['wall'] / b['wall'] for a, b in pairs):.2f}")


if __name__ == "__main__":
    main()
