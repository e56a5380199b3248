"""``--check-external`` cannot run away (crawler.http.external), over sockets.

An origin that never answers is given up after a few silences, not asked once a
link; the whole phase ends at ``--external-deadline`` with the rest reported
``not-checked``; a redirect hop is a request of the origin it lands on: that
origin's robots.txt is read and obeyed, and its pacing kept.
"""

from __future__ import annotations

import json
import time
from itertools import pairwise
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _site(tmp_path: Path, links: list[str]) -> Path:
    root = tmp_path / "site"
    root.mkdir(exist_ok=True)
    anchors = "".join(f'<a href="{url}">x</a>\n' for url in links)
    (root / "index.html").write_text(f"<!doctype html><title>Home</title>{anchors}")
    return root


def _audit(site_url: str, report: Path, *options: str) -> dict:
    run = run_cli("audit", site_url + "/", "--report", str(report), "--check-external",
                  "--compare-sitemap", "off", *options, timeout=100)
    assert run.code in (0, 1), run.stderr
    return json.loads(report.read_text())["findings"]


def test_an_origin_that_never_answers_is_given_up(tmp_path: Path) -> None:
    silent_root = tmp_path / "silent"
    silent_root.mkdir()
    with RunningServer(silent_root, routes={"*": {"delay": 3}}) as silent:
        links = [f"{silent.url}/page{n}.html" for n in range(12)]
        with RunningServer(_site(tmp_path, links)) as site:
            started = time.monotonic()
            found = _audit(site.url, tmp_path / "r.json", "--external-timeout", "0.5",
                           "--external-rate", "50", "--retries", "0")
            took = time.monotonic() - started
        asked = [hit.path for hit in silent.log]
    broken = {item["url"]: item["error"] for item in found["broken-external-links"]["items"]}
    assert set(broken) == set(links)
    assert list(broken.values()).count("origin-unreachable") >= 9, broken
    assert len(asked) <= 3, asked  # robots.txt and two links, then given up
    assert took < 30, took  # 12 links x 0.5 s each would be 6 s, x 3 s of delay 36 s


def test_the_phase_ends_at_its_deadline_and_says_what_it_left(tmp_path: Path) -> None:
    other_root = tmp_path / "other"
    other_root.mkdir()
    with RunningServer(other_root) as other:
        links = [f"{other.url}/page{n}.html" for n in range(30)]
        with RunningServer(_site(tmp_path, links)) as site:
            started = time.monotonic()
            found = _audit(site.url, tmp_path / "r.json", "--external-rate", "5",
                           "--external-deadline", "1.5")
            took = time.monotonic() - started
    unchecked = [item for item in found["unchecked-external-links"]["items"]
                 if item["reason"] == "not-checked"]
    broken = found["broken-external-links"]["items"]  # every page there is a 404
    assert len(unchecked) + len(broken) == 30  # each link accounted for, none dropped
    assert 15 <= len(unchecked) <= 28, len(unchecked)  # 5 a second for 1.5 s
    assert took < 30, took


def test_a_redirect_hop_obeys_the_robots_and_pacing_of_the_origin_it_lands_on(
        tmp_path: Path) -> None:
    rate = 5.0
    landing_root = tmp_path / "landing"
    landing_root.mkdir()
    (landing_root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (landing_root / "ok.html").write_text("<!doctype html><title>ok</title>")
    with RunningServer(landing_root) as landing:
        first_root = tmp_path / "first"
        first_root.mkdir()
        (first_root / "robots.txt").write_text("User-agent: *\nDisallow: /secret/\n")
        hops = {"/into-private": {"status": 302, "headers": {
                    "Location": f"{landing.url}/private/page.html"}},
                "/into-secret": {"status": 302, "headers": {"Location": "/secret/page.html"}}}
        hops |= {f"/to-ok{n}": {"status": 301,
                                "headers": {"Location": f"{landing.url}/ok.html?{n}"}}
                 for n in range(4)}
        with RunningServer(first_root, routes=hops) as first:
            links = [f"{first.url}{path}" for path in hops]
            links += [f"{landing.url}/ok.html?direct{n}" for n in range(3)]
            with RunningServer(_site(tmp_path, links)) as site:
                found = _audit(site.url, tmp_path / "r.json", "--external-rate", str(rate))
        landing_hits = [(hit.method, hit.path, hit.at) for hit in landing.log]
        first_hits = [hit.path for hit in first.log]
    paths = [path for _method, path, _at in landing_hits]
    assert paths[0] == "/robots.txt" and paths.count("/robots.txt") == 1
    assert not [path for path in paths if path.startswith("/private/")]
    assert not [path for path in first_hits if path.startswith("/secret/")]
    starts = [at for _method, _path, at in landing_hits]
    assert all(later - earlier >= 1 / rate - 0.02 for earlier, later in pairwise(starts)), [
        round(later - earlier, 3) for earlier, later in pairwise(starts)]
    broken = {item["url"] for item in found["broken-external-links"]["items"]}
    assert f"{first.url}/into-private" not in broken  # disallowed: neither broken nor fine
    assert f"{first.url}/into-secret" not in broken
