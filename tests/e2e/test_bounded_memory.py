"""A crawl in bounded memory writes the same sitemaps as one that holds everything.

With the thresholds at 0 the crawl keeps every record in its temporary file,
every queued job past the first in its spill file and every URL it has seen
as a hash, from the first page on (the path a site of a million pages takes);
each site is crawled both ways over a socket and the outputs compared byte
for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(180)


def _files(out: Path) -> dict[str, bytes]:
    # sitemap.html says when it was written, the one file two runs cannot share
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())
            if path.is_file() and path.name != "sitemap.html"}


LIMITS = ("SITEMAP_CRAWLER_RECORDS_IN_MEMORY", "SITEMAP_CRAWLER_JOBS_IN_MEMORY",
          "SITEMAP_CRAWLER_URLS_KEPT_EXACTLY", "SITEMAP_CRAWLER_SKIPPED_IN_MEMORY",
          "SITEMAP_CRAWLER_REFERRERS_IN_MEMORY", "SITEMAP_CRAWLER_IDS_HANDED_KEPT")


def _run(site: RunningServer, command: str, tmp: Path, keep: str, *options: str) -> int:
    tmp.mkdir(exist_ok=True)
    run = run_cli(command, site.url + "/", *options,
                  env_extra={**dict.fromkeys(LIMITS, keep), "TMPDIR": str(tmp)})
    assert run.code in (0, 6), run.stderr  # 6: audit --fail-on found what it names
    # the temporary files were unlinked as soon as they were made
    assert list(tmp.iterdir()) == []
    return run.code


def _crawl(site: RunningServer, out: Path, tmp: Path, keep: str, *options: str) -> None:
    assert _run(site, "crawl", tmp, keep, "--out", str(out), *options) == 0


@pytest.mark.parametrize(("name", "options"), [
    ("i18n", ("--images",)),
    ("shop", ("--max-urls-per-sitemap", "3", "--strip-param", "utm_*")),
    ("many", ("--max-urls-per-sitemap", "7", "--no-gzip")),
    ("docs", ()),
])
def test_spilled_records_write_the_same_sitemaps(tmp_path: Path, name: str,
                                                 options: tuple[str, ...]) -> None:
    with RunningServer(name) as site:
        _crawl(site, tmp_path / "memory", tmp_path / "t1", "1000000", *options)
        _crawl(site, tmp_path / "disk", tmp_path / "t2", "0", *options)
        memory, disk = _files(tmp_path / "memory"), _files(tmp_path / "disk")
        assert disk == memory
        written = read_sitemaps(tmp_path / "disk", site.url + "/", extensions=True)
        assert written.urls


def test_spilled_records_with_state_and_a_304_recrawl(tmp_path: Path) -> None:
    with RunningServer("i18n", conditional=True) as site:
        for keep in ("1000000", "0"):
            state = tmp_path / f"state-{keep}.db"
            for run in ("first", "second"):
                _crawl(site, tmp_path / f"{keep}-{run}", tmp_path / f"t-{keep}-{run}", keep,
                       "--state", str(state))
        assert _files(tmp_path / "0-second") == _files(tmp_path / "1000000-second")
        assert _files(tmp_path / "0-first") == _files(tmp_path / "1000000-first")



def test_a_spilled_crawl_is_judged_on_the_count_its_write_found(tmp_path: Path) -> None:
    """Spilled records are counted by the write itself, not by a pass of their own:
    a crawl that lost more than half its URLs, or has none left, is still refused
    before anything is published, with the previous output whole."""
    out = tmp_path / "out"
    with RunningServer("many") as site:
        _crawl(site, out, tmp_path / "t1", "0")
        before = _files(out)
        site.routes["/p*"] = {"status": 500, "body": "outage"}
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--retries", "0",
                      env_extra={**dict.fromkeys(LIMITS, "0"), "TMPDIR": str(tmp_path)})
        assert run.code == 5, run.stderr
        assert "refusing to replace a sitemap of" in run.stderr and "--allow-shrink" in run.stderr
        assert _files(out) == before
        site.routes["/"] = {"status": 200, "body": "<meta name=robots content=noindex>",
                            "headers": {"Content-Type": "text/html"}}
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--retries", "0",
                      env_extra={**dict.fromkeys(LIMITS, "0"), "TMPDIR": str(tmp_path)})
        assert run.code == 3, run.stderr
        assert "previous output kept" in run.stderr and "noindex" in run.stderr
        assert _files(out) == before
        assert sorted(path.name for path in tmp_path.iterdir()) == ["out", "t1"]

def _report(path: Path) -> dict:
    """A JSON report without what a second run cannot repeat: its timings."""
    document = json.loads(path.read_text())
    del document["totals"]["elapsed_seconds"]
    for row in document["urls"]:
        row.pop("response_ms", None)  # fetched pages only
    return document


def _table(path: Path) -> list[list[str]]:
    """A CSV report without its response_ms column."""
    lines = [line.split(",") for line in path.read_text().splitlines()]
    column = lines[0].index("response_ms")
    return [line[:column] + line[column + 1:] for line in lines]


@pytest.mark.parametrize(("name", "options"), [
    ("audit", ()),
    ("live-sitemap", ("--compare-sitemap", "auto")),
    ("shop", ("--strip-param", "utm_*", "--max-pages", "6")),
])
def test_spilled_audit_writes_the_same_report(tmp_path: Path, name: str,
                                             options: tuple[str, ...]) -> None:
    """Records, skipped URLs and who links where, all on disk from the first page:
    every finding, row, count and "found on" page is what a crawl in memory reports."""
    codes = {}
    # one fetch at a time: pages finish in one order, so findings list them in one order
    options = (*options, "--concurrency", "1")
    with RunningServer(name) as site:
        for keep in ("1000000", "0"):
            reports = ("--report", str(tmp_path / f"{keep}.json"),
                       "--report", str(tmp_path / f"{keep}.csv"))
            codes[keep] = _run(site, "audit", tmp_path / f"t{keep}", keep, *reports,
                               "--fail-on", "broken-links", *options)
    memory, disk = _report(tmp_path / "1000000.json"), _report(tmp_path / "0.json")
    assert disk == memory
    assert _table(tmp_path / "0.csv") == _table(tmp_path / "1000000.csv")
    assert codes["0"] == codes["1000000"]
    assert memory["urls"] and any(row["linked_from"] for row in memory["urls"])


def test_spilled_drop_duplicates_and_report(tmp_path: Path) -> None:
    """--drop-duplicates edits records after the crawl: on disk the edit must stick."""
    with RunningServer("audit") as site:
        for keep in ("1000000", "0"):
            _crawl(site, tmp_path / f"out-{keep}", tmp_path / f"t{keep}", keep,
                   "--drop-duplicates", "--concurrency", "1",
                   "--report", str(tmp_path / f"{keep}.json"))
        written = read_sitemaps(tmp_path / "out-0", site.url + "/")
    assert _files(tmp_path / "out-0") == _files(tmp_path / "out-1000000")
    assert site.url + "/copy.html" not in written.locs
    disk = _report(tmp_path / "0.json")
    assert disk == _report(tmp_path / "1000000.json")
    rows = {row["url"]: row for row in disk["urls"]}
    assert rows[site.url + "/copy.html"]["reason"] == "duplicate-of"
