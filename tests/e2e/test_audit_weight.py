"""The PostgreSQL docs' audit report, read in one sitting: under 300 KB and about 15
screens at 1280 by 900 (it was 851 KB and 161 screens, nearly all of it a table of
2,170 URLs), every finding reachable from "Fix first", every cut list saying how
many more there are and which file beside the page holds them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import REPO, pg_docs, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(240)
SCREEN = 900


@pytest.mark.slow(10)
def test_the_postgresql_docs_report_is_short_and_names_where_the_rest_is(
        tmp_path: Path) -> None:
    html, data = tmp_path / "audit.html", tmp_path / "audit.json"
    with RunningServer(pg_docs()) as site:
        run = run_cli("audit", site.url + "/", "--report", str(html), "--report", str(data),
                      "--no-check-external", default_duplicates=True, timeout=200)
    assert run.code == 0, run.stderr
    assert html.stat().st_size < 300_000, html.stat().st_size
    document = json.loads(data.read_text())
    totals = document["totals"]
    assert totals["fetched"] >= 1100 and totals["external"]["urls"] > 1000
    rows = list(csv.DictReader((tmp_path / "audit.urls.csv").open(newline="")))
    assert len(rows) == len(document["urls"])  # every URL row beside the page
    present = [name for name, finding in document["findings"].items() if finding["count"]]
    from browser import browser_page

    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": SCREEN})
        page.goto(html.as_uri())
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height <= 15 * SCREEN, f"{height / SCREEN:.1f} screens"
        links = set(page.locator("#fix-first a[href^='#']").evaluate_all(
            "links => links.map(link => link.getAttribute('href').slice(1))"))
        assert set(present) <= links, set(present) - links
        for name in present:  # each link leads to the finding's own section
            assert page.locator(f"section#{name}").count() == 1, name
        shown = page.locator("#url-table tbody tr").count()
        assert shown == 100
        more = page.locator("#urls p.more").inner_text()
        assert f"Showing 100 of {totals['seen']:,}" in more and "audit.urls.csv" in more
        # the external links are three counts, not rows of the page
        assert page.locator('[data-count="external URLs"]').inner_text() == \
            f"{totals['external']['urls']:,}"
        shots = REPO / ".pytest_cache" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "audit-postgresql.png"), full_page=True)
