"""An audit with --state: a re-run on 304s and a resumed run report who links where, and
with which words, exactly as a fresh audit does — over a socket.

The ``many`` site is a chain: each page links to the next two, each link with
its own text, so every page has two referrers and an anchor from the first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import interrupt_when, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _links(report: Path) -> dict[str, tuple[int, list[str], str | None]]:
    rows = json.loads(report.read_text())["urls"]
    return {row["url"]: (row["linked_from"], sorted(row["found_on"]), row["anchor"])
            for row in rows if row["status"] is not None}


def test_a_re_run_answered_with_304s_keeps_referrers_and_anchors(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    with RunningServer("many", conditional=True) as site:
        start = site.url + "/"
        assert run_cli("audit", start, "--report", str(tmp_path / "fresh.json")).code == 0
        for name in ("first", "second"):
            run = run_cli("audit", start, "--report", str(tmp_path / f"{name}.json"),
                          "--state", str(state))
            assert run.code == 0, run.stderr
        conditional = [hit for hit in site.log if "if-none-match" in hit.headers]
    assert len(conditional) >= 30  # the second audit's pages came back as 304s
    fresh = _links(tmp_path / "fresh.json")
    assert fresh[start + "p07.html"] == (2, [start + "p05.html", start + "p06.html"], "7")
    assert _links(tmp_path / "second.json") == fresh


@pytest.mark.slow(7)
def test_a_resumed_audit_keeps_what_it_learnt_before_the_interruption(tmp_path: Path) -> None:
    with RunningServer("many") as site:
        start = site.url + "/"
        reference = tmp_path / "reference.json"
        assert run_cli("audit", start, "--report", str(reference), "--concurrency", "1").code == 0
        report, state = tmp_path / "report.json", tmp_path / "state.db"
        args = ["audit", start, "--report", str(report), "--state", str(state),
                "--concurrency", "1", "--no-check-external"]
        site.log.clear()
        # slow only while it runs to be interrupted: mid-crawl, at a page of its own
        site.routes["/p*"] = {"delay": 0.15}
        interrupt_when(args, lambda: sum(1 for p in site.paths() if p.startswith("/p")) >= 8)
        del site.routes["/p*"]
        # what it knew is reported, the unfinished phase named; the state stays resumable
        assert json.loads(report.read_text())["interrupted"].startswith("pages: ")
        resumed = run_cli(*args, "--resume")
        assert resumed.code == 0, resumed.stderr
        fetched = [p for p in site.paths() if p.startswith("/p")]
    assert len(fetched) <= 30 + 1  # what was done before is not fetched again
    assert _links(report) == _links(reference)


@pytest.mark.slow(7)
def test_a_resumed_crawl_writes_the_whole_link_graph(tmp_path: Path) -> None:
    """--links with --resume: the pages read before the interruption keep their rows."""
    with RunningServer("many") as site:
        start = site.url + "/"
        reference, graph = tmp_path / "reference.csv", tmp_path / "links.csv"
        assert run_cli("crawl", start, "--out", str(tmp_path / "ref"), "--links",
                       str(reference), "--concurrency", "1").code == 0
        args = ["crawl", start, "--out", str(tmp_path / "out"), "--links", str(graph),
                "--state", str(tmp_path / "state.db"), "--concurrency", "1"]
        site.log.clear()
        # slow only while it runs to be interrupted: mid-crawl, at a page of its own
        site.routes["/p*"] = {"delay": 0.15}
        interrupt_when(args, lambda: sum(1 for p in site.paths() if p.startswith("/p")) >= 8)
        del site.routes["/p*"]
        resumed = run_cli(*args, "--resume")
        assert resumed.code == 0, resumed.stderr
    rows = sorted(graph.read_text().splitlines())
    assert len(rows) > 30
    assert rows == sorted(reference.read_text().splitlines())
