"""The HTML report of a documentation site is read in one sitting: 1,170 pages and 1,000
links to other sites (the PostgreSQL docs' audit) weighed 1.4 MB with the origin
written out in every cell and a sort key on every cell, and 845 KB with every URL a
row; the page now shows the first URLs and names the CSV holding all."""

from __future__ import annotations

import io

from crawler.audit.report_html import URL_ROWS_SHOWN, Beside, write_report_html


def _rows(origin: str) -> list[dict]:
    pages = [{"url": f"{origin}/docs/15/sql-command-{n:04d}.html", "status": 200,
              "reason": "listed", "depth": 3, "title": f"SQL command {n}. Part of the manual",
              "structured_data": [], "response_ms": 1.2, "bytes": 14_000 + n,
              "linked_from": 14, "listed": True,
              "found_on": [f"{origin}/docs/15/sql-commands-{k}.html" for k in range(5)]}
             for n in range(1170)]
    outside = [{"url": f"https://postgr.es/m/{n:08d}@message.example.org", "status": None,
                "reason": "external", "depth": 4, "listed": False} for n in range(1000)]
    return pages + outside


def test_a_documentation_sites_report_stays_under_300_kb() -> None:
    origin = "https://www.postgresql.example.org"
    rows = _rows(origin)
    document = {"start_url": origin + "/", "totals": {"seen": 1170, "fetched": 1170,
                "listed": 1170, "not_listed": 0, "errors": 0}, "findings": {
                name: {"count": 0, "items": []} for name in __import__(
                    "crawler.audit.names", fromlist=["FINDINGS"]).FINDINGS}}
    out = io.StringIO()
    write_report_html(out, document, lambda: iter(rows), Beside(urls_csv="audit.urls.csv"))
    page = out.getvalue()
    assert len(page.encode()) < 300_000, len(page.encode())
    # the origin's own URLs show their path, linked whole
    assert (f'<a href="{origin}/docs/15/sql-command-0007.html">/docs/15/sql-command-0007.html'
            '</a>') in page
    # the first URL_ROWS_SHOWN of the scope, no other site's: the CSV has them all
    assert page.count('<tr class="listed">') == URL_ROWS_SHOWN
    assert "postgr.es" not in page
    assert (f'Showing {URL_ROWS_SHOWN:,} of 1,170, those not listed first; every URL, with '
            'every column, is in <a href="audit.urls.csv">audit.urls.csv</a>') in page
