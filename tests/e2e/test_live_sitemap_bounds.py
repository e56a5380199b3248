"""What a site's live sitemaps claim does not grow an audit (hostile item 8): the
entries go to disk past a threshold, orphans fetched and listed stop at
--max-orphans, and wrong lastmods are listed up to 1,000."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(180)
HTML = {"Content-Type": "text/html"}
XML = {"Content-Type": "application/xml"}


def _sitemap(first: int, count: int) -> str:
    urls = "".join(f"<url><loc>http://127.0.0.1:{{{{PORT}}}}/claimed/{n}.html</loc>"
                   f"<lastmod>yesterday {n}</lastmod></url>" for n in range(first, first + count))
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>')


def _site(files: int, per_file: int) -> dict[str, dict[str, Any]]:
    names = "".join(f"<sitemap><loc>http://127.0.0.1:{{{{PORT}}}}/s{i}.xml</loc></sitemap>"
                    for i in range(files))
    routes: dict[str, dict[str, Any]] = {
        "/": {"headers": HTML, "body": '<a href="/a.html">a</a>'},
        "/a.html": {"headers": HTML, "body": "<p>a</p>"},
        "/robots.txt": {"headers": {"Content-Type": "text/plain"},
                        "body": "Sitemap: http://127.0.0.1:{{PORT}}/index.xml\n"},
        "/index.xml": {"headers": XML, "body": '<?xml version="1.0" encoding="UTF-8"?><sitemapindex'
                       f' xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{names}</sitemapindex>'},
        "/claimed/*": {"headers": HTML, "body": "<p>claimed</p>"},
    }
    for i in range(files):
        routes[f"/s{i}.xml"] = {"headers": XML, "body": _sitemap(i * per_file, per_file)}
    return routes


def _audit(site_url: str, report: Path, env: dict[str, str], *args: str) -> Any:
    return run_cli("audit", site_url + "/", "--report", str(report), *args, env_extra=env,
                   timeout=150)


def test_a_claimed_site_is_capped_and_the_same_on_disk_as_in_memory(tmp_path: Path) -> None:
    reports = []
    with RunningServer("hostile", _site(3, 2000)) as site:
        for keep in ("0", "100000"):
            report = tmp_path / f"r{keep}.json"
            run = _audit(site.url, report, {"SITEMAP_CRAWLER_LIVE_ENTRIES_IN_MEMORY": keep},
                         "--max-orphans", "25")
            assert run.code == 0, run.stderr
            reports.append(json.loads(report.read_text()))
        claimed = sum(path.startswith("/claimed/") for path in site.paths())
    assert claimed == 50  # 25 orphans in each of the two runs, never 6,000
    spilled, in_memory = reports
    for document in reports:
        document.pop("totals", None)  # carries timings
        for row in document["urls"]:
            row.pop("response_ms", None)
    assert spilled == in_memory
    live = spilled["live_sitemap"]
    assert live["urls"] == 6000 and live["orphans"] == 25 and live["orphans_unchecked"] == 5975
    assert len(spilled["findings"]["orphans"]["items"]) == 25
    lastmods = spilled["findings"]["sitemap-lastmod"]["items"]
    assert sum(item.get("problem") == "not-w3c-datetime" for item in lastmods) == 1000
    errors = [item["problem"] for item in spilled["findings"]["sitemap-errors"]["items"]]
    assert "5000 more wrong lastmods than the report names" in errors


# runs a command and prints its peak RSS in kB (this wrapper's own children only)
_PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")


@pytest.mark.slow(13)
def test_an_audit_of_150000_claimed_urls_stays_small(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    with RunningServer("hostile", _site(3, 50_000)) as site:
        done = subprocess.run(
            [sys.executable, "-c", _PEAK, sys.executable, "-m", "crawler", "audit",
             site.url + "/", "--report", str(report), "--max-orphans", "10", "-q",
             "--no-check-external"],
            cwd=REPO, capture_output=True, text=True, timeout=150,
            env={"PATH": "/usr/bin:/bin", "NO_PROXY": "*",
                 "SITEMAP_CRAWLER_LIVE_ENTRIES_IN_MEMORY": "1000"})
    assert done.returncode == 0, done.stderr
    peak_kb = int(done.stdout.split()[-1])
    document = json.loads(report.read_text())
    assert document["live_sitemap"]["urls"] == 150_000
    assert report.stat().st_size < 2_000_000
    assert peak_kb < 250_000, f"peak RSS {peak_kb / 1024:.0f} MB"
