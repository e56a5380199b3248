"""Scheduled regeneration: conditional re-crawls, honest lastmod, resume — over a socket."""

from __future__ import annotations

import fcntl
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import FIXTURES_DIR, interrupt_when, read_sitemaps, report_rows, run_cli
from siteserver import RunningServer

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("transport")]


@pytest.fixture
def site_copy(tmp_path: Path) -> Path:
    """A private copy of the 31-page fixture site that a test may edit."""
    root = tmp_path / "site"
    shutil.copytree(FIXTURES_DIR / "many", root)
    return root


def crawl(url: str, out: Path, state: Path, *extra: str):
    return run_cli("crawl", url + "/", "--out", str(out), "--state", str(state),
                   "--max-urls-per-sitemap", "10", *extra)


def snapshot(out: Path) -> dict[str, tuple[bytes, float]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime) for p in sorted(out.iterdir())}


def test_second_run_is_conditional_identical_and_untouched(site_copy: Path, tmp_path: Path):
    out, state = tmp_path / "out", tmp_path / "state.db"
    with RunningServer(site_copy, conditional=True) as site:
        first = crawl(site.url, out, state)
        assert first.code == 0, first.stderr
        for path in out.iterdir():  # age the files, so a rewrite would show
            os.utime(path, (1_000_000, 1_000_000))
        before = snapshot(out)
        site.log.clear()
        second = crawl(site.url, out, state)
        assert second.code == 0, second.stderr
        pages = [hit for hit in site.log if hit.path != "/robots.txt"]
    assert len(pages) == 31
    assert all(hit.headers.get("if-none-match") for hit in pages)
    assert "31 not modified" in second.stderr and "0 of 4 sitemap shard(s) changed" in second.stderr
    assert snapshot(out) == before  # same bytes, same mtimes


def test_a_changed_page_moves_only_its_lastmod_shard_and_index(site_copy: Path, tmp_path: Path):
    out, state = tmp_path / "out", tmp_path / "state.db"
    with RunningServer(site_copy, conditional=True) as site:
        assert crawl(site.url, out, state).code == 0
        first = read_sitemaps(out, site.url + "/")
        assert all(lastmod is None for _, lastmod in first.urls)  # first run cannot know
        before = snapshot(out)
        page = site_copy / "p15.html"
        page.write_text(page.read_text().replace("<body>", "<body><p>news!</p>"))
        started = datetime.now(UTC).replace(microsecond=0)
        run = crawl(site.url, out, state)
        finished = datetime.now(UTC)
        assert run.code == 0, run.stderr
        after = read_sitemaps(out, site.url + "/")
    lastmods = dict(after.urls)
    changed = datetime.fromisoformat(lastmods.pop(site.url + "/p15.html").replace("Z", "+00:00"))
    assert started <= changed <= finished
    assert set(lastmods.values()) == {None}
    now = snapshot(out)
    # sitemap.html says when it was written: it changes each run; a file's page changes
    # with its file only
    differing = sorted(name for name in now if now[name][0] != before[name][0]
                       and name != "sitemap.html")
    shard_of_p15 = next(name for name in now if name.startswith("sitemap-") and
                        name.endswith(".gz") and
                        b"/p15.html<" in __import__("gzip").decompress(now[name][0]))
    page_of_p15 = shard_of_p15.split(".")[0] + ".html"
    assert differing == sorted([shard_of_p15, page_of_p15, "sitemap_index.xml"])
    assert all(now[name][1] == before[name][1] for name in now
               if name not in differing and name != "sitemap.html")
    assert "1 of 4 sitemap shard(s) changed" in run.stderr


def test_noise_does_not_fake_a_change(site_copy: Path, tmp_path: Path):
    out, state = tmp_path / "out", tmp_path / "state.db"
    page = site_copy / "p03.html"
    original = page.read_text()

    def with_noise(clock: str, token: str) -> str:
        return original.replace("<body>", f'<body><script>var t="{clock}"</script>'
                                f'<input type="hidden" name="csrf" value="{token}">'
                                f'<!-- {clock} --><span class="clock">{clock}</span>')

    page.write_text(with_noise("12:00", "a1"))
    with RunningServer(site_copy, conditional=True) as site:
        assert crawl(site.url, out, state, "--ignore-selector", ".clock").code == 0
        page.write_text(with_noise("12:01", "b2"))
        assert crawl(site.url, out, state, "--ignore-selector", ".clock").code == 0
        assert dict(read_sitemaps(out, site.url + "/").urls)[site.url + "/p03.html"] is None
        page.write_text(with_noise("12:02", "c3"))  # the clock changes, and is not ignored
        assert crawl(site.url, out, state).code == 0
        assert dict(read_sitemaps(out, site.url + "/").urls)[site.url + "/p03.html"] is not None


def test_last_modified_wins_and_lastmod_modes(tmp_path: Path):
    routes = {"/p01.html": {"headers": {"Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"}}}
    with RunningServer("many", routes) as site:
        for mode, expected in (("auto", "2024-01-01T00:00:00Z"), ("header", "2024-01-01T00:00:00Z"),
                               ("none", None)):
            out = tmp_path / mode
            run = run_cli("crawl", site.url + "/", "--out", str(out), "--lastmod", mode,
                          "--state", str(tmp_path / f"{mode}.db"))
            assert run.code == 0, run.stderr
            assert dict(read_sitemaps(out, site.url + "/").urls)[site.url + "/p01.html"] == expected


def test_state_of_another_scope_is_refused(tmp_path: Path):
    state = tmp_path / "state.db"
    with RunningServer("docs") as site:
        assert run_cli("crawl", site.url + "/docs/", "--out", str(tmp_path / "a"),
                       "--state", str(state), "--ignore-robots").code == 0
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "b"), "--state", str(state))
        assert run.code == 2 and "belongs to a crawl of" in run.stderr
        assert run.stderr.count("\n") == 1


def test_resume_needs_state_and_a_non_state_file_is_refused(tmp_path: Path):
    run = run_cli("crawl", "http://127.0.0.1:1/", "--out", str(tmp_path), "--resume")
    assert run.code == 2 and "--state" in run.stderr
    bogus = tmp_path / "bogus.db"
    bogus.write_text("this is not sqlite" * 100)
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "o"), "--state", str(bogus))
        assert run.code == 2 and "not a sitemap-crawler state file" in run.stderr
        assert run.stderr.count("\n") == 1 and "delete it" in run.stderr


# Resuming is the state's business, not the transport's: one transport keeps the
# suite inside its ten minutes (the kill-and-resume tests run on the default too).
@pytest.mark.slow(7)
@pytest.mark.parametrize("transport", ["default"], indirect=True)
def test_interrupted_run_resumes_to_the_same_result(tmp_path: Path):
    with RunningServer("many") as site:
        reference = tmp_path / "reference"
        assert run_cli("crawl", site.url + "/", "--out", str(reference), "--concurrency", "1",
                       "--max-urls-per-sitemap", "10").code == 0
        site.log.clear()
        out, state = tmp_path / "out", tmp_path / "state.db"
        args = ["crawl", site.url + "/", "--out", str(out), "--state", str(state),
                "--concurrency", "1", "--max-urls-per-sitemap", "10"]
        # slow only while it runs to be interrupted: mid-crawl, at a page of its own
        site.routes["/p*"] = {"delay": 0.15}
        interrupt_when(args, lambda: sum(1 for p in site.paths() if p.startswith("/p")) >= 8)
        del site.routes["/p*"]
        assert not out.exists() or list(out.iterdir()) == []
        before_resume = len([p for p in site.paths() if p.startswith("/p")])
        resumed = run_cli(*args, "--resume")
        assert resumed.code == 0, resumed.stderr
        fetched = [p for p in site.paths() if p.startswith("/p")]
    # nothing done before the interruption is fetched again (but the one in flight)
    assert len(fetched) <= 30 + 1
    assert len(set(fetched[before_resume:]) & set(fetched[:before_resume - 1])) == 0
    # sitemap.html says when it was written, the one file two runs cannot share
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != "sitemap.html"} == {
        p.name: p.read_bytes() for p in reference.iterdir() if p.name != "sitemap.html"}


def test_a_resumed_crawl_still_ends_a_redirect_loop_as_a_loop(tmp_path: Path):
    """The queue keeps each URL's redirect chain across an interruption, so the
    resumed report says redirect-loop exactly as an uninterrupted crawl does."""
    routes = {"/": {"body": '<a href="/a">a</a>', "headers": {"Content-Type": "text/html"}},
              "/a": {"status": 302, "headers": {"Location": "/b"}},
              # the first request for /b hangs (interrupted there); the next one loops
              "/b": {"behaviour": "sequence", "steps": [
                  {"behaviour": "drip", "delay": 0.5},
                  {"status": 302, "headers": {"Location": "/a"}}]}}
    report, state = tmp_path / "report.json", tmp_path / "state.db"
    with RunningServer("many", routes) as site:
        args = ["crawl", site.url + "/", "--out", str(tmp_path / "out"), "--state", str(state),
                "--report", str(report), "--retries", "0"]
        interrupt_when(args, lambda: "/b" in site.paths(), settle=0.3, timeout=20)
        resumed = run_cli(*args, "--resume")
        assert site.count("/a") == 1  # done before the interruption: not fetched again
    assert resumed.code == 0, resumed.stderr
    rows = report_rows(report, site.url)
    assert rows["/a"]["reason"] == "redirect"
    assert rows["/b"]["reason"] == "redirect-loop"


def test_a_state_file_in_use_is_refused_at_once(tmp_path: Path):
    state = tmp_path / "state.db"
    with open(state, "wb") as held, RunningServer("many") as site:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a running crawl holds it
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "o"), "--state",
                      str(state))
        assert site.paths() == []
    assert run.code == 2 and run.stderr.count("\n") == 1
    assert "in use by another running crawl" in run.stderr
