"""An audit of an unchanged site reads the same whichever of its pages answered first.

Pages are fetched concurrently, so the order they finish in changes from run to run.
What a report names must not: its "found on" pages, the anchor beside them and the
order of every finding's items. Two audits of one site over a socket, with the
server made slow on opposite halves of the pages, must give the same report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)

PAGES = 8


def _site(root: Path) -> Path:
    """A home page linking eight pages; each links a page that is gone, with its own
    anchor text; the first and last each link one more broken page, one redirect and
    one noindex page of their own."""
    root.mkdir()
    pages = "".join(f'<a href="/p{i}.html">page {i}</a>' for i in range(1, PAGES + 1))
    (root / "index.html").write_text(f"<title>home</title>{pages}")
    for i in range(1, PAGES + 1):
        own = ""
        if i in (1, PAGES):
            side = "b" if i == 1 else "a"  # the slow half's page names the earlier URL
            own = (f'<a href="/gone-{side}.html">x</a><a href="/moved-{side}">y</a>'
                   f'<a href="/hidden-{side}.html">z</a>')
        (root / f"p{i}.html").write_text(
            f'<title>p{i}</title><a href="/gone.html">from p{i}</a>{own}')
    (root / "target.html").write_text("<title>target</title>")
    for side in "ab":
        (root / f"hidden-{side}.html").write_text(
            '<title>hidden</title><meta name="robots" content="noindex">')
    return root


def _audit(root: Path, report: Path, slow: range) -> dict:
    routes = {f"/p{i}.html": {"delay": 0.4} for i in slow}
    routes.update({f"/moved-{side}": {"status": 301, "headers": {"Location": "/target.html"}}
                   for side in "ab"})
    with RunningServer(root, routes) as site:
        run = run_cli("audit", site.url + "/", "--report", str(report), "--concurrency", "16",
                      "--compare-sitemap", "off")
    assert run.code in (0, 1), run.stderr
    return json.loads(report.read_text().replace(site.url, "SITE"))


def test_two_audits_name_the_same_pages_in_the_same_order(tmp_path: Path) -> None:
    root = _site(tmp_path / "site")
    first = _audit(root, tmp_path / "first.json", range(1, PAGES // 2 + 1))
    second = _audit(root, tmp_path / "second.json", range(PAGES // 2 + 1, PAGES + 1))
    found = first["findings"]

    broken = found["broken-links"]["items"]
    assert [item["url"] for item in broken] == [
        "SITE/gone-a.html", "SITE/gone-b.html", "SITE/gone.html"]
    gone = broken[2]
    # eight pages link to it: the five named are the first five in URL order, and the
    # anchor is the link's on the first of them
    assert gone["linked_from"] == PAGES
    assert gone["found_on"] == [f"SITE/p{i}.html" for i in range(1, 6)]
    assert gone["anchor"] == "from p1"
    assert [item["url"] for item in found["redirected-links"]["items"]] == [
        "SITE/moved-a", "SITE/moved-b"]
    assert [item["url"] for item in found["noindex-linked"]["items"]] == [
        "SITE/hidden-a.html", "SITE/hidden-b.html"]
    rows = {row["url"]: row for row in first["urls"]}
    assert rows["SITE/gone.html"]["found_on"] == gone["found_on"]
    assert rows["SITE/gone.html"]["anchor"] == "from p1"

    assert second["findings"] == found
    assert [(row["url"], row.get("found_on"), row.get("anchor")) for row in second["urls"]] == [
        (row["url"], row.get("found_on"), row.get("anchor")) for row in first["urls"]]
