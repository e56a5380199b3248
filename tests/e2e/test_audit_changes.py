"""``audit --compare-with`` and ``--state``: what changed since the last audit, over a socket.

The ``audit`` fixture is copied, audited, changed (a page removed, one turned
noindex, a title changed, a new broken link, a fixed one) and audited again.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from siteserver import FIXTURES, RunningServer

pytestmark = pytest.mark.timeout(120)

CHANGE_KINDS = ("added-pages", "removed-pages", "changed")


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "audit", site)
    return site


def _change(site: Path) -> None:
    """Between the audits: same2.html removed (and its link), copy.html made noindex,
    a.html's title changed, a link to a missing page added, missing.html created."""
    (site / "same2.html").unlink()
    index = site / "index.html"
    index.write_text(index.read_text().replace('<a href="/same2.html">Same 2</a>',
                                               '<a href="/gone-now.html">Gone now</a>'))
    copy = site / "copy.html"
    copy.write_text(copy.read_text().replace("<head>",
                                             '<head><meta name="robots" content="noindex">'))
    page = site / "a.html"
    text = page.read_text()
    start, end = text.index("<title>"), text.index("</title>")
    page.write_text(text[:start] + "<title>Article A, renamed" + text[end:])
    (site / "noindex.html").unlink()  # deleted, and still linked: a 404 now
    (site / "missing.html").write_text("<!doctype html><html><head><title>Back again</title>"
                                       "</head><body><p>This page exists now.</p></body></html>")


def _changes(document: dict, origin: str) -> dict[str, list]:
    found = document["findings"]
    named: dict[str, list] = {}
    for name, finding in found.items():
        if name.startswith(("new-", "fixed-")) or name in CHANGE_KINDS:
            for item in finding["items"]:
                what = item.get("url") or item.get("keep") or item.get("title")
                if name == "changed":
                    what = (what, item["field"], item["before"], item["after"])
                named.setdefault(name, []).append(
                    what.removeprefix(origin) if isinstance(what, str) else
                    (what[0].removeprefix(origin), *what[1:]))
    return named


@pytest.mark.slow(6)
def test_a_second_audit_says_what_changed_in_every_format(tmp_path: Path) -> None:
    site = _site(tmp_path)
    first, second, third = (tmp_path / f"{n}.json" for n in ("first", "second", "third"))
    with RunningServer(site) as server:
        u = server.url
        one = run_cli("audit", u + "/", "--report", str(first), "--fail-on",
                      "new-broken-links")
        assert one.code == 0, one.stderr  # nothing to compare with: nothing new
        _change(site)
        reports = [tmp_path / f"second{ext}" for ext in (".csv", ".html", ".junit.xml",
                                                           ".md")]
        two = run_cli("audit", u + "/", "--report", str(second), *[
            arg for report in reports for arg in ("--report", str(report))],
            "--report", "-", "--compare-with", str(first), "--fail-on", "new-broken-links")
        three = run_cli("audit", u + "/", "--report", str(third), "--compare-with",
                        str(second), "--fail-on", "new-broken-links")
    assert two.code == 6, two.stderr
    assert "findings present: new-broken-links (2)" in two.stderr
    assert "since the last audit: added-pages 1, removed-pages 2" in two.stdout + two.stderr
    document = json.loads(second.read_text())
    assert document["compared_with"] == str(first)
    changes = _changes(document, u)
    # a page that fails now is removed, with its status; one that answers 404 is
    # never added; a page back from a 404 is added, not four changes
    removed = {item["url"].removeprefix(u): (item["status_before"], item["status"])
               for item in document["findings"]["removed-pages"]["items"]}
    assert removed == {"/noindex.html": (200, 404), "/same2.html": (200, None)}
    assert changes == {
        "added-pages": ["/missing.html"],
        "removed-pages": ["/noindex.html", "/same2.html"],
        "changed": [("/a.html", "title", "Article A", "Article A, renamed"),
                    ("/copy.html", "reason", "listed", "noindex"),
                    ("/copy.html", "listed", True, False),
                    ("/copy.html", "noindex", False, True)],
        "new-broken-links": ["/gone-now.html", "/noindex.html"],
        "new-noindex-linked": ["/copy.html"],
        "fixed-noindex-linked": ["/noindex.html"],
        "fixed-broken-links": ["/missing.html"],
        "fixed-canonical-problems": ["/canon-to-missing.html"],
        "fixed-duplicates": ["/copy.html"],  # a.html and copy.html differ now
        "fixed-titles": ["Article A", "Products"],  # titles no longer shared
        # the fixture's pages have no meta description and no h1: the new page neither,
        # and copy.html (noindex now) and same2.html (gone) are no longer listed
        "new-missing-descriptions": ["/missing.html"],
        "new-missing-h1": ["/missing.html"],
        "fixed-missing-descriptions": ["/copy.html", "/same2.html"],
        "fixed-missing-h1": ["/copy.html", "/same2.html"],
    }
    rows = {row["url"].removeprefix(u): row
            for row in csv.DictReader((tmp_path / "second.csv").open())}
    assert "new-broken-links" in rows["/gone-now.html"]["findings"]
    assert "changed" in rows["/copy.html"]["findings"]
    _look_at(tmp_path / "second.html")
    _read_junit(tmp_path / "second.junit.xml", u)
    summary = (tmp_path / "second.md").read_text()
    assert two.stdout == summary  # --report -: the same summary, printed
    assert summary.startswith(f"# Audit of {u}/")
    since = summary.split("## Since the last audit")[1].split("## Fix first")[0]
    assert "| new-broken-links | 2 |" in since and "| removed-pages | 2 |" in since
    section = summary.split('### New: broken links <a id="new-broken-links"></a>')[1].split(
        "###")[0]
    assert "**error** · `new-broken-links` · 2 · " in section
    assert f"`{u}/gone-now.html` (status 404) — linked from `{u}/`" in section
    assert three.code == 0, three.stderr
    again = json.loads(third.read_text())
    assert _changes(again, u) == {}
    assert all(again["findings"][name]["count"] == 0 for name in CHANGE_KINDS)
    assert "since the last audit: no change" in three.stdout + three.stderr


def _read_junit(report: Path, origin: str) -> None:
    """Valid against the JUnit schema the tests carry; --fail-on's finding fails."""
    from lxml import etree

    schema = etree.XMLSchema(etree.parse(str(REPO / "tests" / "schemas" / "junit.xsd")))
    document = etree.parse(str(report))
    schema.assertValid(document)
    root = document.getroot()
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    broken = suites["new-broken-links"]
    assert broken.get("failures") == "2" and root.get("failures") == "2"
    case = broken.find("testcase")
    assert case.get("name") == f"{origin}/gone-now.html"
    message = case.find("failure").get("message")
    assert message.startswith(f"new-broken-links: {origin}/gone-now.html (error: ")
    assert "How to fix: " in message  # the triage travels with the failure
    # a finding not named by --fail-on passes, its items shown
    assert suites["broken-links"].get("failures") == "0"
    assert suites["broken-links"].find("testcase/system-out") is not None
    # a finding with no item: one passing case
    assert [case.get("name") for case in suites["orphans"]] == ["none"]


def _look_at(report: Path) -> None:
    from browser import browser_page

    shots = REPO / ".pytest_cache" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with browser_page() as page:
        page.goto(report.as_uri())
        since = page.locator("#since")
        assert page.locator("#since > h2").inner_text().startswith("Since the last audit")
        # it opens the report, above "Fix first"
        assert page.locator("h1 + section").get_attribute("id") == "since"
        assert page.locator("#since + section").get_attribute("id") == "fix-first"
        assert since.locator('[data-change="new-broken-links"]').inner_text() == "2"
        assert since.locator('[data-change="removed-pages"]').inner_text() == "2"
        assert since.locator("#changed tbody tr").count() == 4
        page.screenshot(path=str(shots / "audit-since.png"), full_page=False)
        since.locator('a[href="#removed-pages"]').click()  # unfolds its table, once the
        removed = since.locator("#removed-pages tbody tr", has_text="/noindex.html")
        removed.wait_for(state="visible")  # hashchange has come
        assert "404" in removed.inner_text()


def test_the_state_keeps_the_last_audit_to_compare_with(tmp_path: Path) -> None:
    site = _site(tmp_path)
    state, report = tmp_path / "state.db", tmp_path / "r.json"
    with RunningServer(site) as server:
        first = run_cli("audit", server.url + "/", "--report", str(report), "--state",
                        str(state))
        assert first.code == 0, first.stderr
        assert json.loads(report.read_text())["compared_with"] is None
        _change(site)
        second = run_cli("audit", server.url + "/", "--report", str(report), "--state",
                         str(state), "--fail-on", "new-broken-links,removed-pages")
    assert second.code == 6, second.stderr
    document = json.loads(report.read_text())
    assert document["compared_with"] == "the last audit in --state"
    changes = _changes(document, server.url)
    assert changes["new-broken-links"] == ["/gone-now.html", "/noindex.html"]
    assert changes["removed-pages"] == ["/noindex.html", "/same2.html"]


@pytest.mark.parametrize("spoil", ["other-site", "old-version", "not-a-report", "missing"])
def test_a_report_that_cannot_be_compared_is_one_line_and_exit_2(
        tmp_path: Path, spoil: str) -> None:
    previous = tmp_path / "previous.json"
    with RunningServer("audit") as server:
        made = run_cli("audit", server.url + "/", "--report", str(previous))
        assert made.code == 0, made.stderr
        document = json.loads(previous.read_text())
        if spoil == "other-site":
            document["start_url"] = "http://127.0.0.1:9/"
            previous.write_text(json.dumps(document))
        elif spoil == "old-version":
            document["version"] = 6
            previous.write_text(json.dumps(document))
        elif spoil == "not-a-report":
            previous.write_text("[1, 2, 3]")
        else:
            previous.unlink()
        server.log.clear()
        run = run_cli("audit", server.url + "/", "--report", str(tmp_path / "r.json"),
                      "--compare-with", str(previous))
    assert run.code == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert {"other-site": "is an audit of http://127.0.0.1:9/",
            "old-version": "is a report of version 6",
            "not-a-report": "is not a JSON report of an audit",
            "missing": "cannot be read"}[spoil] in run.stderr
    assert server.log == []  # refused before the first request
