"""A site of a million pages that needs no disk, and the crawler's memory as it crawls it.

    python bench/million.py --pages 1000000 [--concurrency 32] [--latency 0] [--report csv]
    python bench/million.py --pages 10000000 --beside 91a1241 --results FILE

nginx's njs module computes every page from its number: ``/`` is page 0,
``/p/N.html`` page N, whose children are pages N*30+1 … N*30+30. A page is
about 20 KB with about 40 links (parent, children, neighbours, two top
pages, a fragment, an external link); every 97th page also links to a page
that does not exist (404) and every 101st to ``/r/N.html``, which redirects
(301) to ``/p/N.html``. Answers carry Last-Modified and an ETag and honour
If-None-Match with 304, so re-crawls work as on a real site.

It runs the real CLI once and samples, every second, the crawler's RSS (from
/proc) and the number of pages nginx has served (from its access log), then
prints pages/s, CPU per page, peak RSS, and writes the samples to
``WORK/million-N.csv`` and a plot of RSS against pages to ``WORK/million-N.svg``.
With ``--report FORMAT`` the crawl also writes an audit report (json, csv or
html), whose records, skipped URLs and referrers must stay off the heap too;
its files are then named ``million-N-report.*``. With ``--beside REV`` the
commit REV crawls a second copy of the site at the same time (both built into
venvs of their own), and each line carries the pages/s ratio: at 10M pages one
run takes an hour, and two runs an hour apart differ by more than the 5 % being
looked for. Only loopback is contacted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from results_file import emit

from bench import NJS_MODULE, WORK, baseline_crawler, ensure_nginx, start_nginx

PORT = 18695
CONF = """load_module {module};
worker_processes 1;
pid {state}/nginx.pid;
error_log {state}/error.log;
events {{ worker_connections 4096; }}
http {{
    log_format bench '$status';
    access_log {state}/access.log bench;
    client_body_temp_path {state}/tmp; proxy_temp_path {state}/tmp;
    fastcgi_temp_path {state}/tmp; uwsgi_temp_path {state}/tmp; scgi_temp_path {state}/tmp;
    keepalive_requests 1000000; keepalive_timeout 60;
    js_import site from {state}/site.js;
    server {{ listen 127.0.0.1:{port}; location / {{ js_content site.page; }} }}
}}
"""
SITE_JS = """var PAGES = {pages}, FAN = 30, DELAY = {delay_ms};
var FILLER = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod '
    + 'tempor incididunt ut labore et dolore magna aliqua. ';
function href(n) {{ return n === 0 ? '/' : '/p/' + n + '.html'; }}
function body(n) {{
    var links = [];
    if (n > 0) {{ links.push(href(Math.floor((n - 1) / FAN))); }}
    for (var c = n * FAN + 1; c <= n * FAN + FAN && c < PAGES; c++) {{ links.push(href(c)); }}
    if (n + 1 < PAGES) {{ links.push(href(n + 1)); }}
    if (n > 1) {{ links.push(href(n - 1)); }}
    links.push(href(1), href(2), href(n) + '#top', 'http://example.invalid/x/' + n);
    if (n % 97 === 5) {{ links.push(href(PAGES + n)); }}
    if (n % 101 === 7 && n > 0) {{ links.push('/r/' + n + '.html'); }}
    var out = ['<!doctype html><html><head><title>Page ' + n + '</title></head><body>'];
    out.push('<h1>Page ' + n + '</h1><ul>');
    for (var i = 0; i < links.length; i++) {{
        out.push('<li><a href="' + links[i] + '">link ' + i + '</a></li>');
    }}
    out.push('</ul>');
    var filler = '';
    while (filler.length < 18000) {{ filler += '<p>' + n + ' ' + FILLER + '</p>'; }}
    out.push(filler, '</body></html>');
    return out.join('');
}}
function answer(r) {{
    var uri = r.uri, n = -1, m;
    if (uri === '/' ) {{ n = 0; }}
    else if ((m = uri.match(/^\\/p\\/(\\d+)\\.html$/))) {{ n = Number(m[1]); }}
    else if ((m = uri.match(/^\\/r\\/(\\d+)\\.html$/))) {{
        r.headersOut['Location'] = href(Number(m[1]));
        r.return(301); return;
    }}
    if (uri === '/robots.txt') {{ r.return(404, ''); return; }}
    if (n < 0 || n >= PAGES) {{ r.headersOut['Content-Type'] = 'text/html';
        r.return(404, '<h1>not found</h1>'); return; }}
    var etag = '"' + n + '-v1"';
    r.headersOut['ETag'] = etag;
    r.headersOut['Last-Modified'] = 'Mon, 02 Nov 2026 10:00:00 GMT';
    if (r.headersIn['If-None-Match'] === etag) {{ r.return(304); return; }}
    r.headersOut['Content-Type'] = 'text/html';
    r.return(200, body(n));
}}
function page(r) {{
    if (DELAY > 0) {{ setTimeout(function () {{ answer(r); }}, DELAY); }} else {{ answer(r); }}
}}
export default {{page}};
"""


def served(log: Path, offset: int) -> tuple[int, int]:
    """Lines appended to nginx's access log since ``offset``: (count, new offset)."""
    try:
        with open(log, "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return 0, offset
    return data.count(b"\n"), offset + len(data)


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def plot(samples: list[tuple[float, int, float]], path: Path, title: str) -> None:
    """RSS against pages served, as a small self-contained SVG."""
    width, height, pad = 640, 360, 50
    top_pages = max((pages for _t, pages, _r in samples), default=1) or 1
    top_rss = max((rss for _t, _p, rss in samples), default=1) or 1
    points = " ".join(f"{pad + (width - 2 * pad) * pages / top_pages:.1f},"
                      f"{height - pad - (height - 2 * pad) * rss / top_rss:.1f}"
                      for _t, pages, rss in samples)
    path.write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">'
        f'<rect width="{width}" height="{height}" fill="white"/>'
        f'<text x="{pad}" y="20">{title}</text>'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="black"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>'
        f'<text x="{width - pad}" y="{height - pad + 30}" text-anchor="end">'
        f"pages served: {top_pages:,}</text>"
        f'<text x="{pad - 5}" y="{pad - 5}" text-anchor="start">RSS: {top_rss:.0f} MB</text>'
        f'<polyline fill="none" stroke="#0969da" stroke-width="2" points="{points}"/></svg>\n')


def start_site(port: int, args: argparse.Namespace) -> Path:
    """nginx computing the generated site on 127.0.0.1:port; returns its state directory."""
    ensure_nginx()
    if not NJS_MODULE.exists():
        subprocess.run(["apt-get", "install", "-y", "-qq", "libnginx-mod-http-js"], check=True)
    state = WORK / f"nginx-{port}"
    shutil.rmtree(state, ignore_errors=True)
    (state / "tmp").mkdir(parents=True)
    (state / "site.js").write_text(SITE_JS.format(pages=args.pages,
                                                  delay_ms=round(args.latency * 1000)))
    (state / "nginx.conf").write_text(CONF.format(module=NJS_MODULE, state=state, port=port))
    start_nginx(state / "nginx.conf", state)
    time.sleep(0.3)
    return state


def crawl_command(crawler: str, port: int, name: str, args: argparse.Namespace) -> list[str]:
    command = [*crawler.split(), "crawl", f"http://127.0.0.1:{port}/", "--out",
               str(WORK / f"{name}-out"), "--concurrency", str(args.concurrency), "--quiet"]
    if args.report:
        command += ["--report", str(WORK / f"{name}.{args.report}")]
    if args.links:
        command += ["--links", str(WORK / f"{name}.{args.links}")]
    return command


def run_one(crawler: str, port: int, name: str, args: argparse.Namespace) -> dict:
    """One crawl of its own nginx, sampled every second; the figures as a dict."""
    state = start_site(port, args)
    shutil.rmtree(WORK / f"{name}-out", ignore_errors=True)
    samples: list[tuple[float, int, float]] = []
    try:
        started = time.monotonic()
        process = subprocess.Popen(crawl_command(crawler, port, name, args),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        count, offset = 0, 0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            new, offset = served(state / "access.log", offset)
            count += new
            samples.append((time.monotonic() - started, count, rss_mb(process.pid)))
            time.sleep(1.0)
        wall = time.monotonic() - started
        new, offset = served(state / "access.log", offset)
        count += new
    finally:
        os.kill(int((state / "nginx.pid").read_text()), 15)
    stderr = process.stderr.read().decode() if process.stderr else ""
    cpu = usage.ru_utime + usage.ru_stime
    table = WORK / f"{name}-rss.csv" if args.report or args.links else WORK / f"{name}.csv"
    table.write_text("seconds,pages_served,rss_mb\n" + "".join(
        f"{t:.1f},{pages},{rss:.1f}\n" for t, pages, rss in samples))
    plot(samples, WORK / f"{name}.svg",
         f"sitemap-crawler: RSS against pages served ({args.pages:,}-page site"
         + (f", with a {args.report} report)" if args.report else ")"))
    return {"pages": args.pages, "report": args.report, "links": args.links,
            "concurrency": args.concurrency, "latency_s": args.latency,
            "requests": count, "wall_s": round(wall, 1),
            "pages_per_s": round(count / wall, 1),
            "cpu_ms_per_request": round(cpu * 1000 / max(count, 1), 3),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "code": os.waitstatus_to_exitcode(status), "stderr": stderr.strip()[-300:],
            "samples": samples}


def short_commit(rev: str) -> str:
    return subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse",
                           "--short", rev], check=True, capture_output=True,
                          text=True).stdout.strip()


def run_beside(args: argparse.Namespace) -> list[dict]:
    """This crawler and commit ``args.beside`` at once, each with its own nginx: both meet
    the same load for the whole run, so their ratio holds where two runs an hour apart
    would not (the machine drifts by more than 5 % between them)."""
    name = f"million-{args.pages}"
    ours, theirs = short_commit(args.commit), short_commit(args.beside)
    sides = {ours: (baseline_crawler(ours), PORT, f"{name}-{ours}"),
             theirs: (baseline_crawler(theirs), PORT + 1, f"{name}-{theirs}")}
    with ThreadPoolExecutor(len(sides)) as pool:
        futures = {side: pool.submit(run_one, crawler, port, tag, args)
                   for side, (crawler, port, tag) in sides.items()}
        results = [dict(futures[side].result(), commit=side) for side in sides]
    # Once one side has been served its last page, the other has the machine (nearly) to
    # itself: compare the pages each had been served by then. Not when the first one
    # exits: both may have been served everything by that time (writing the sitemaps
    # takes minutes at a million pages), and every ratio would then read 1.0.
    together = round(min(_served_all_by(result) for result in results), 1)
    for result in results:
        served_then = max((pages for t, pages, _rss in result.pop("samples") if t <= together),
                          default=0)
        result["together_s"] = together
        result["pages_per_s_together"] = round(served_then / together, 1)
    ours, theirs = (result["pages_per_s_together"] for result in results)
    for result in results:
        result["ratio_together"] = round(ours / theirs, 3)
    return results


def _served_all_by(result: dict) -> float:
    """When the crawl had been served its last page (its wall time if never sampled)."""
    samples = result["samples"]
    final = max((pages for _t, pages, _rss in samples), default=0)
    return next((t for t, pages, _rss in samples if pages >= final and final), result["wall_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--report", choices=("json", "csv", "html"),
                        help="also write an audit report in this format")
    parser.add_argument("--links", choices=("csv", "parquet"),
                        help="also write the link graph (--links) in this format")
    parser.add_argument("--crawler", default=f"{sys.executable} -m crawler",
                        help="how to run the CLI")
    parser.add_argument("--beside", metavar="REV",
                        help="crawl a second site with commit REV at the same time")
    parser.add_argument("--commit", default="HEAD",
                        help="with --beside: the commit measured against REV (built into "
                             "a venv of its own, as REV is, so editing the tree cannot "
                             "touch a running crawl)")
    parser.add_argument("--results", help="append the JSON lines to this file too")
    args = parser.parse_args()
    if args.beside:
        results = run_beside(args)
    else:
        name = (f"million-{args.pages}" + ("-report" if args.report else "")
                + (f"-links-{args.links}" if args.links else ""))
        results = [run_one(args.crawler, PORT, name, args)]
        del results[0]["samples"]
    emit(results, args.results)


if __name__ == "__main__":
    main()
