"""The core promise, end to end: a real server, the real CLI, the files it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import read_sitemaps, report_rows, run_cli
from siteserver import RunningServer

LISTED = [
    "/", "/about.html", "/area-target.html", "/blog/", "/blog/post-1.html", "/blog/post-2.html",
    "/caf%C3%A9.html", "/canon-target.html", "/deep/1.html", "/deep/2.html", "/deep/3.html",
    "/from-xhtml.html", "/new-page.html", "/nofollow.html", "/only-from-noindex.html",
    "/other-bot-noindex.html", "/private/open.html", "/products/?id=1&cat=2", "/products/?id=2",
    "/refresh-target.html", "/xhtml.xhtml", "/~user/",
]
NEVER_REQUESTED = [
    "/private/secret.html", "/only-from-nofollow.html", "/only-via-rel-nofollow.html",
]


@pytest.fixture(scope="module")
def basic_crawl(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("out")
    report = out.parent / "report.json"
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      "--retries", "0")
        yield site, out, report, run


def test_exit_code_and_summary(basic_crawl) -> None:
    _site, _out, _report, run = basic_crawl
    assert run.code == 0, run.stderr
    assert run.stdout == ""  # stdout stays clean for cron
    assert ": 22 listed" in run.stderr


def test_lists_exactly_the_indexable_pages_sorted(basic_crawl) -> None:
    site, out, _report, _run = basic_crawl
    written = read_sitemaps(out, site.url + "/")
    assert written.locs == sorted(site.url + path for path in LISTED)


def test_lastmod_comes_from_last_modified_only(basic_crawl) -> None:
    site, out, _report, _run = basic_crawl
    lastmods = dict(read_sitemaps(out, site.url + "/").urls)
    assert lastmods[site.url + "/"] == "2015-10-21T07:28:00Z"
    assert lastmods[site.url + "/blog/post-2.html"] == "2025-03-01T12:30:45Z"
    assert lastmods[site.url + "/products/?id=1&cat=2"] is None  # unparseable header
    assert lastmods[site.url + "/deep/1.html"] is None  # no header: never "now"


def test_index_lastmod_is_newest_in_shard(basic_crawl) -> None:
    site, out, _report, _run = basic_crawl
    text = (out / "sitemap_index.xml").read_text()
    assert f"<loc>{site.url}/sitemap-00001.xml.gz</loc><lastmod>2025-06-03T10:00:00Z" in text


def test_values_are_entity_escaped(basic_crawl) -> None:
    _site, out, _report, _run = basic_crawl
    import gzip
    raw = gzip.decompress((out / "sitemap-00001.xml.gz").read_bytes()).decode()
    assert "/products/?id=1&amp;cat=2</loc>" in raw


def test_never_requests_what_it_must_not(basic_crawl) -> None:
    site, _out, _report, _run = basic_crawl
    paths = site.paths()
    for path in NEVER_REQUESTED:
        assert path not in paths
    assert all(hit.headers.get("host") == f"127.0.0.1:{site.port}" for hit in site.log)
    assert not any(path.startswith(("/elsewhere", "mailto", "javascript")) for path in paths)


def test_each_url_fetched_at_most_once(basic_crawl) -> None:
    site, _out, _report, _run = basic_crawl
    paths = site.paths()
    duplicates = {path for path in paths if paths.count(path) > 1}
    assert duplicates == set()
    assert paths[0] == "/robots.txt"


def test_redirect_loop_ends_and_sources_are_not_listed(basic_crawl) -> None:
    site, _out, report, _run = basic_crawl
    rows = report_rows(report)
    assert rows[site.url + "/old-page"]["reason"] == "redirect"
    assert rows[site.url + "/old-page"]["target"] == site.url + "/new-page.html"
    assert rows[site.url + "/loop-a"]["reason"] == "redirect"
    assert rows[site.url + "/loop-b"]["reason"] == "redirect-loop"
    assert rows["http://example.org/"]["reason"] == "external"


def test_report_says_why_each_url_is_not_listed(basic_crawl) -> None:
    site, _out, report, _run = basic_crawl
    document = json.loads(report.read_text())
    rows = report_rows(report)
    expect = {
        "/index.html": "canonical-elsewhere",
        "/noindex.html": "noindex",
        "/header-noindex.html": "noindex",
        "/canon-dup.html": "canonical-elsewhere",
        "/link-header-canon.html": "canonical-elsewhere",
        "/refresh.html": "meta-refresh",
        "/report.pdf": "not-html",
        "/missing.html": "status-not-200",
        "/broken.html": "status-not-200",
        "/private/secret.html": "robots-disallowed",
    }
    for path, reason in expect.items():
        assert rows[site.url + path]["reason"] == reason, path
        assert rows[site.url + path]["listed"] is False
    assert rows[f"http://localhost:{site.port}/about.html"]["reason"] == "external"
    assert rows[site.url + "/missing.html"]["status"] == 404
    assert rows[site.url + "/deep/3.html"]["depth"] == 3
    assert document["totals"]["listed"] == len(LISTED)


def test_robots_txt_is_kept_with_one_sitemap_line(basic_crawl) -> None:
    site, out, _report, _run = basic_crawl
    original = (Path(__file__).parents[2] / "fixtures/sites/basic/robots.txt").read_bytes()
    written = (out / "robots.txt").read_bytes()
    assert written.startswith(original)
    assert written.count(b"Sitemap:") == 1
    assert written.endswith(f"Sitemap: {site.url}/sitemap_index.xml\n".encode())


def test_files_are_world_readable_and_no_staging_left(basic_crawl) -> None:
    _site, out, _report, _run = basic_crawl
    for path in out.iterdir():
        assert not path.name.startswith("."), path
        assert path.stat().st_mode & 0o444 == 0o444


def test_independent_parser_reads_it_back_over_http(basic_crawl, tmp_path: Path) -> None:
    """ultimate-sitemap-parser, starting from the written robots.txt, finds exactly our URLs."""
    from usp.tree import sitemap_tree_for_homepage

    site, out, _report, _run = basic_crawl
    site.overlay = out
    try:
        tree = sitemap_tree_for_homepage(site.url + "/", use_known_paths=False)
        found = sorted({page.url for page in tree.all_pages()})
    finally:
        site.overlay = None
    assert found == sorted(site.url + path for path in LISTED)


def test_python_dash_m_and_console_script_agree() -> None:
    import subprocess
    import sys

    script = Path(sys.executable).parent / "sitemap-crawler"
    assert script.exists(), "the console script is installed beside the interpreter"
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert version.returncode == 0
    assert run_cli("--version").stdout == version.stdout
