"""What an audit tells a site owner to fix first, over a socket, read the way a person reads it.

The ``pglike`` fixture is a small documentation site made to have a finding of
every kind an ordinary site has: a 120-chapter manual from one template without
an h1 or a description (over the 100 rows a finding's table shows), broken and
redirected links in and out of the site, a noindex page linked, a canonical to
a missing page, shared titles, broken structured data, and ``/`` and
``/index.html`` serving the same bytes. Its "external" links go to
``localhost`` on the same server: another host, so another origin, on loopback.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(180)
SEVERITY_ORDER = {"error": 0, "warning": 1, "notice": 2}


def _audit(tmp_path: Path, *options: str) -> tuple[str, object, dict]:
    html, data = tmp_path / "audit.html", tmp_path / "audit.json"
    with RunningServer("pglike") as site:
        run = run_cli("audit", site.url + "/", "--report", str(html), "--report", str(data),
                      "--check-external", *options, default_duplicates=True)
    return site.url, run, json.loads(data.read_text()) if data.exists() else {}


@pytest.mark.slow(10)
def test_fix_first_opens_the_report_worst_first_with_why_and_how(tmp_path: Path) -> None:
    _u, run, document = _audit(tmp_path)
    assert run.code == 0, run.stderr
    found = document["findings"]
    for name, finding in found.items():  # the triage travels in the JSON too
        assert finding["severity"] in SEVERITY_ORDER, name
        assert finding["why"] and finding["how"] and finding["title"], name
    assert found["broken-links"]["severity"] == "error"
    assert found["missing-h1"]["severity"] == "notice"
    # the manual's 120 chapters share one template and one directory
    groups = found["missing-h1"]["groups"]
    assert groups["pages"] == 120 and groups["templates"] == 1
    assert groups["prefix"] == {"path": "/docs/", "pages": 120}
    html = tmp_path / "audit.html"
    assert html.stat().st_size < 1_000_000
    text = html.read_text()
    assert "<p>None.</p>" not in text
    # a finding past 50 rows shows 50 and links to the CSV holding every item
    assert "Showing 50 of 120" in text and 'href="audit.findings.csv"' in text
    # every URL row is in the CSV beside the page, named by it
    assert 'href="audit.urls.csv"' in text
    rows = list(csv.DictReader((tmp_path / "audit.urls.csv").open(newline="")))
    assert len(rows) == document["totals"]["seen"] + sum(
        reason["in_report"] for reason in document["totals"]["outside_scope"].values())
    items = list(csv.DictReader((tmp_path / "audit.findings.csv").open(newline="")))
    assert sum(row["finding"] == "missing-h1" for row in items) == 120
    assert {row["severity"] for row in items if row["finding"] == "broken-links"} == {"error"}
    _look_at(html, found)


def _look_at(report: Path, found: dict) -> None:
    from browser import browser_page

    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(report.as_uri())
        assert page.locator("h1 + section").get_attribute("id") == "fix-first"
        entries = page.locator("ol.fix-first > li")
        severities = [entry.locator(".badge").first.inner_text().lower()
                      for entry in entries.all()]
        assert severities == sorted(severities, key=SEVERITY_ORDER.__getitem__)
        assert {"error", "warning", "notice"} <= set(severities)
        for entry in entries.all():  # each says why it matters and how to fix it
            assert entry.locator("p.why").inner_text().strip()
            assert entry.locator("p.how").inner_text().startswith("How to fix:")
        # the first screen holds errors, warnings and notices: the list fits the view
        last = entries.last.bounding_box()
        assert last is not None and last["y"] < 900 * 2, last
        first_notice = page.locator("ol.fix-first > li.sev-notice").first.bounding_box()
        assert first_notice is not None and first_notice["y"] < 900, first_notice
        assert page.locator('[data-finding="missing-h1"]').inner_text() == "120"
        # the template named by the paths it serves, with an example
        assert ("1 template (/docs/*.html, e.g. /docs/page-001.html), 120 pages"
                in page.locator("#fix-first").inner_text())
        clean = page.locator("p.clean").inner_text()
        assert clean.startswith("Checked and clean:") and "orphan pages" not in clean
        # no sitemap: what needs one was not checked, never "clean"
        assert "Not checked (no sitemap)" in page.locator("#fix-first").inner_text()
        assert "Not checked (--render never)" in page.locator("#fix-first").inner_text()
        assert page.get_by_text("None.", exact=True).count() == 0
        assert page.locator("#missing-h1 tbody tr").count() == 50
        # folded, and opened by the link from Fix first
        assert not page.locator("#missing-h1 table").is_visible()
        page.click('ol.fix-first a[href="#missing-h1"]')  # unfolds it on hashchange, which
        page.locator("#missing-h1 table").wait_for(state="visible")  # comes after the click
        page.goto(report.as_uri())
        shots = REPO / ".pytest_cache" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "audit-fix-first.png"))


def test_no_check_external_says_not_checked_where_it_said_zero(tmp_path: Path) -> None:
    _u, run, document = _audit(tmp_path, "--no-check-external")
    assert run.code == 0, run.stderr
    broken = document["findings"]["broken-external-links"]
    assert broken["count"] == 0 and broken["not_checked"] == "--no-check-external"
    text = (tmp_path / "audit.html").read_text()
    assert re.search(r"Not checked</b> \(--no-check-external\): broken external links", text)


def test_audit_without_a_report_prints_fix_first_and_writes_nothing(tmp_path: Path) -> None:
    with RunningServer("pglike") as site:
        done = subprocess.run(
            [sys.executable, "-m", "crawler", "audit", site.url + "/", "--no-check-external"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
            env={**os.environ, "NO_PROXY": "*"})
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []  # no file
    out = done.stdout
    assert out.startswith("Fix first (2 errors, 6 warnings, 4 notices)"), out[:200]
    assert "\x1b[" not in out  # no colour into a pipe
    errors = out.index("ERROR   Broken links 2")
    assert errors < out.index("WARNING ") < out.index("NOTICE  ")
    assert "why: Visitors and search engines" in out and "fix: Correct or remove" in out
    assert f"- {site.url}/docs/removed.html  (on {site.url}/docs/page-004.html)" in out
    assert ("where: 1 template (/docs/*.html, e.g. /docs/page-001.html), 120 pages; 120 "
            "under /docs/") in out
    assert "Not checked (--no-check-external): broken external links" in out
