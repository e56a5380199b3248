"""Three scheduled runs with ``--state`` over a site that changes between them: the
summaries, ``--changes``, ``history`` and ``history.html`` (read in Chromium) say what
changed, and the honest-lastmod finding names the re-stamped page only.

Between the first and the second run: ``/e.html`` is added, ``/d.html`` removed,
``/b.html`` edited (and its Last-Modified moved, honestly), and ``/c.html``
re-stamped: its Last-Modified moved, its content did not, as a build does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)
OLD, NEW = "Mon, 02 Nov 2026 10:00:00 GMT", "Sat, 28 Nov 2026 10:00:00 GMT"


def _page(title: str, text: str) -> str:
    return f"<!doctype html><title>{title}</title><h1>{title}</h1><p>{text}</p>"


def _site(root: Path, pages: str) -> None:
    links = "".join(f'<a href="/{name}.html">{name}</a> ' for name in pages)
    (root / "index.html").write_text(_page("Home", "Pages: " + links))


def _changes(run_summary: str) -> str:
    return next(line for line in run_summary.splitlines() if line.startswith("since"))


@pytest.mark.slow(6)
def test_three_runs_say_what_was_added_removed_edited_and_restamped(tmp_path: Path) -> None:
    root, out, state = tmp_path / "site", tmp_path / "out", tmp_path / "state.db"
    root.mkdir()
    for name in "abcd":
        (root / f"{name}.html").write_text(_page(f"Page {name}", f"The text of {name}."))
    _site(root, "abcd")
    routes = {f"/{name}.html": {"headers": {"Last-Modified": OLD}} for name in "abcde"}
    report = tmp_path / "crawl.json"

    def crawl(n: int) -> str:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--state", str(state),
                      "--changes", str(tmp_path / f"changes{n}.json"), "--report", str(report))
        assert run.code == 0, run.stderr
        return run.stderr

    with RunningServer(root, routes) as site:
        u = site.url
        first = crawl(1)
        (root / "e.html").write_text(_page("Page e", "A new page."))
        (root / "d.html").unlink()
        _site(root, "abce")
        (root / "b.html").write_text(_page("Page b", "The text of b, edited."))
        site.routes["/b.html"]["headers"]["Last-Modified"] = NEW
        site.routes["/c.html"]["headers"]["Last-Modified"] = NEW  # only re-stamped
        second = crawl(2)
        restamped = json.loads(report.read_text())["findings"]["misleading-last-modified"]
        third = crawl(3)
        history = run_cli("history", str(state))
        page = tmp_path / "history.html"
        assert run_cli("history", str(state), "--report", str(page)).code == 0
    assert _changes(first) == "since the last run: a first sitemap, 5 added"
    assert _changes(second) == ("since the last run: 1 added, 1 removed, 2 changed content, "
                                "1 restamped (Last-Modified moved, content did not)")
    assert "  added: /e.html" in second and "  removed: /d.html" in second
    assert "  changed: /, /b.html" in second and "  restamped: /c.html" in second
    assert _changes(third) == "since the last run: 0 added, 0 removed, 0 changed content"
    assert f"publish: serve the sitemaps at {u}/sitemap_index.xml (robots.txt: Sitemap: " \
           f"{u}/sitemap_index.xml)" in second
    kept = json.loads((tmp_path / "changes2.json").read_text())
    assert {kind: [url.removeprefix(u) for url in kept[kind]] for kind in (
        "added", "removed", "changed", "restamped", "stale")} == {
        "added": ["/e.html"], "removed": ["/d.html"], "changed": ["/", "/b.html"],
        "restamped": ["/c.html"], "stale": []}
    # the finding names the re-stamped page only: b's header moved with its content
    assert [(item["url"].removeprefix(u), item["problem"]) for item in restamped["items"]] \
        == [("/c.html", "restamped")]
    rows = [line.split() for line in history.stdout.splitlines()[1:]]
    # columns 6 to 9: listed, +added, -removed, ~changed
    assert [row[0] for row in rows] == ["1", "2", "3"]
    assert [row[6:10] for row in rows] == [["5", "5", "0", "0"], ["5", "1", "1", "2"],
                                           ["5", "0", "0", "0"]]
    _look_at(page, u)


def _look_at(page_file: Path, origin: str) -> None:
    from browser import browser_page

    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(page_file.as_uri())
        assert page.locator("figure.chart svg polyline").count() == 6  # 1+1+3+1 lines
        second = page.locator("#run-2")
        text = second.inner_text()
        assert "added 1" in text and f"{origin}/e.html" in text
        assert "removed 1" in text and f"{origin}/d.html" in text
        assert "restamped 1" in text and f"{origin}/c.html" in text
        shots = REPO / ".pytest_cache" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "history.png"))


def _live_sitemap(root: Path, when: str) -> None:
    (root / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>{{{{BASE}}}}/{name}.html</loc><lastmod>{when}</lastmod></url>"
                  for name in "ab") + "</urlset>")


def test_an_audit_flags_live_lastmods_that_move_without_the_content(tmp_path: Path) -> None:
    """The live sitemap re-dates every entry on each build: across two audits with
    --state, the entries whose page did not change are named; the edited one is not."""
    root, state, report = tmp_path / "site", tmp_path / "state.db", tmp_path / "r.json"
    root.mkdir()
    for name in "ab":
        (root / f"{name}.html").write_text(_page(f"Page {name}", f"The text of {name}."))
    _site(root, "ab")
    with RunningServer(root) as site:
        def audit() -> dict:
            text = (root / "sitemap.xml").read_text()
            (root / "sitemap.xml").write_text(text.replace("{{BASE}}", site.url))
            run = run_cli("audit", site.url + "/", "--state", str(state), "--report",
                          str(report))
            assert run.code == 0, run.stderr
            return json.loads(report.read_text())["findings"]["sitemap-lastmod"]

        _live_sitemap(root, "2026-11-02")
        assert audit()["count"] == 0
        _live_sitemap(root, "2026-11-28")  # the build re-dates both entries
        (root / "b.html").write_text(_page("Page b", "The text of b, edited."))
        moved = audit()
    assert [(item["url"].removeprefix(site.url), item["problem"], item["lastmod_before"],
             item["lastmod"]) for item in moved["items"]] == [
        ("/a.html", "moved-without-change", "2026-11-02", "2026-11-28")]


def test_a_refused_run_is_kept_with_why_and_changes_can_be_csv(tmp_path: Path) -> None:
    """The shrink rule refuses a run whose sitemap lost most of its URLs: the history
    says so, and why; --changes FILE.csv holds a row a URL."""
    root, out, state = tmp_path / "site", tmp_path / "out", tmp_path / "state.db"
    root.mkdir()
    names = "abcdefgh"
    for name in names:
        (root / f"{name}.html").write_text(_page(f"Page {name}", f"The text of {name}."))
    _site(root, names)
    with RunningServer(root) as site:
        first = run_cli("crawl", site.url + "/", "--out", str(out), "--state", str(state),
                        "--changes", str(tmp_path / "first.csv"))
        _site(root, "a")
        shrunk = run_cli("crawl", site.url + "/", "--out", str(out), "--state", str(state))
        history = run_cli("history", str(state), "--report", str(tmp_path / "h.json"))
    assert first.code == 0 and shrunk.code != 0, shrunk.stderr
    rows = (tmp_path / "first.csv").read_text().splitlines()
    assert rows[0] == "change,url" and len(rows) == 1 + 9
    assert all(row.startswith("added,") for row in rows[1:])
    assert history.code == 0, history.stderr
    runs = json.loads((tmp_path / "h.json").read_text())
    assert [run["published"] for run in runs] == [True, False]
    assert "refusing to replace a sitemap of 9 URLs with one of 2" in runs[1]["refused"]
    assert runs[1]["exit_code"] == shrunk.code
