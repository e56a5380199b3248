"""What ``--check-external`` adds to an audit of the PostgreSQL docs, measured on loopback.

    python bench/external_cost.py [--repeats 3] [--external-rate R] [--latency-ms 50]
                                  [--network-cut]

The docs link to 1,677 distinct URLs on 83 other origins. This machine has no
internet, so each origin is stood in for by a port of one local nginx answering
200 at once (robots.txt: 404), and a copy of the docs has its external links
pointed there (``https://postgr.es/m/…`` becomes ``http://127.0.0.1:PORT/m/…``,
the path kept). Then, alternated in each repeat: ``audit --no-check-external``
and ``audit --check-external --external-rate R``. The time an audit spends on
other origins is set by the busiest origin's URLs at R requests a second
(1,457 on postgr.es); what this measures is that, and the CPU and memory our
side adds. Results: ``results/external-cost-DATE.jsonl``.

``--latency-ms`` stands the origins in with ``latency_stand_ins.py`` instead,
answering each request that late (a server across a network), and runs the
audit with its default pace (or ``--external-rate`` when given);
``--network-cut`` starts no stand-in at all: every origin refuses, as on a
machine with no network, and the audit must say so and end quickly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from bench import PG_DOCS, WORK, Nginx, run_crawl, start_nginx

HERE = Path(__file__).resolve().parent
SITE_PORT, FIRST_ORIGIN_PORT = 18800, 18801
_EXTERNAL = re.compile(rb'href="(https?)://([^/"#?]+)')
STAND_IN = """worker_processes 1;
pid {state}/nginx.pid;
error_log {state}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {state}/tmp; proxy_temp_path {state}/tmp;
    fastcgi_temp_path {state}/tmp; uwsgi_temp_path {state}/tmp; scgi_temp_path {state}/tmp;
{servers}
}}
"""
SERVER = ("    server {{ listen 127.0.0.1:{port}; location = /robots.txt {{ return 404; }} "
          "location / {{ default_type text/html; return 200 'ok'; }} }}")


def rewritten_docs() -> tuple[Path, dict[bytes, int]]:
    """A copy of the docs whose external links point at stand-in ports, one an origin."""
    root = WORK / "pg-external"
    ports: dict[bytes, int] = {}

    def port(match: re.Match[bytes]) -> bytes:
        host = match.group(1) + b"://" + match.group(2)
        chosen = ports.setdefault(host, FIRST_ORIGIN_PORT + len(ports))
        return b'href="http://127.0.0.1:%d' % chosen

    shutil.rmtree(root, ignore_errors=True)
    for source in PG_DOCS.rglob("*"):
        target = root / source.relative_to(PG_DOCS)
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif source.suffix == ".html":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_EXTERNAL.sub(port, source.read_bytes()))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return root, ports


class StandIns:
    def __init__(self, count: int) -> None:
        self.count = count
        self.state = WORK / "stand-ins"

    def __enter__(self) -> StandIns:
        (self.state / "tmp").mkdir(parents=True, exist_ok=True)
        servers = "\n".join(SERVER.format(port=FIRST_ORIGIN_PORT + n) for n in range(self.count))
        conf = self.state / "nginx.conf"
        conf.write_text(STAND_IN.format(state=self.state, servers=servers))
        start_nginx(conf, self.state)
        time.sleep(0.3)
        return self

    def __exit__(self, *exc_info: object) -> None:
        subprocess.run(["kill", "-QUIT", (self.state / "nginx.pid").read_text().strip()],
                       check=False)


class LatencyStandIns:
    """The origins as ``latency_stand_ins.py``: each answer ``latency_ms`` late."""

    def __init__(self, count: int, latency_ms: float) -> None:
        self.count, self.latency_ms = count, latency_ms

    def __enter__(self) -> LatencyStandIns:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "latency_stand_ins.py"), str(FIRST_ORIGIN_PORT),
             str(self.count), str(self.latency_ms)], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.process.kill()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--external-rate", type=float, default=None,
                        help="default: 20 with nginx stand-ins, the audit's own with "
                        "--latency-ms")
    parser.add_argument("--latency-ms", type=float, default=None)
    parser.add_argument("--network-cut", action="store_true")
    parser.add_argument("--out", type=Path,
                        default=HERE / "results" / f"external-cost-{date.today()}.jsonl")
    args = parser.parse_args()
    root, ports = rewritten_docs()
    work = WORK / "external-cost"
    work.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-m", "crawler", "audit"]
    rows = []
    rate = ([] if args.external_rate is None and (args.latency_ms is not None
                                                   or args.network_cut) else
            ["--external-rate", str(args.external_rate or 20.0)])
    stand_ins: Any = (contextlib.nullcontext() if args.network_cut else
                      LatencyStandIns(len(ports), args.latency_ms)
                      if args.latency_ms is not None else StandIns(len(ports)))
    with stand_ins, Nginx(root, SITE_PORT) as site:
        start = site.origin + "/index.html"
        commands = {
            "audit": [*cli, start, "--report", str(work / "a.json"), "--quiet",
                      "--no-check-external", "--compare-sitemap", "off"],
            "audit+external": [*cli, start, "--report", str(work / "b.json"), "--quiet",
                               "--check-external", *rate, "--compare-sitemap", "off"],
        }
        for repeat in range(args.repeats):
            order = list(commands) if repeat % 2 == 0 else list(reversed(commands))
            for name in order:
                result = run_crawl(commands[name], timeout=3600)
                result["variant"] = name
                if name == "audit+external":
                    found = json.loads((work / "b.json").read_text())["findings"]
                    result["broken_external"] = found["broken-external-links"]["count"]
                    result["not_checked"] = sum(
                        item["reason"] == "not-checked"
                        for item in found["unchecked-external-links"]["items"])
                    result["latency_ms"] = args.latency_ms
                    result["network_cut"] = args.network_cut
                rows.append(result)
                print(json.dumps(result), flush=True)
    with args.out.open("w") as handle:
        for row in rows:
            row.pop("stderr", None)
            handle.write(json.dumps(row) + "\n")
    for name in ("audit", "audit+external"):
        picked = [row for row in rows if row["variant"] == name]
        print(f"{name}: median {statistics.median(r['wall'] for r in picked):.1f} s, CPU "
              f"{statistics.median(r['cpu'] for r in picked):.1f} s, peak RSS "
              f"{max(r['rss_mb'] for r in picked):.0f} MB")
    kind = ("none: network cut" if args.network_cut else f"{args.latency_ms:g} ms latency"
            if args.latency_ms is not None else "nginx")
    print(f"{len(ports)} origins stood in for ({kind}); {' '.join(rate) or 'default pace'}")


if __name__ == "__main__":
    main()
