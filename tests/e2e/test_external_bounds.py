"""``--check-external`` cannot run away (crawler.http.external), over sockets.

An origin that never answers is given up after a few silences, not asked once a
link; the whole phase ends at ``--external-deadline`` with the rest reported
``not-checked``; a redirect hop is a request of the origin it lands on: that
origin's robots.txt is read and obeyed, and its pacing kept.
"""

from __future__ import annotations

import json
import socket
import time
from itertools import pairwise
from pathlib import Path

import pytest
from conftest import assert_spaced, run_cli
from raw_server import RawServer
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


def _mute(drip: bool = False) -> RawServer:
    """An origin that accepts connections and never answers (``drip``: sends its
    answer's head a byte every half second, forever)."""
    def hold(conn: socket.socket) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" * 100
        for byte in range(len(head)):
            if server.stop.wait(0.5):
                return
            if drip:
                try:
                    conn.sendall(head[byte:byte + 1])
                except OSError:
                    return

    server = RawServer(hold)
    return server


@pytest.mark.slow(35)
def test_300_links_to_an_origin_that_never_answers_are_unchecked_never_broken(
        tmp_path: Path) -> None:
    """Default options: the origin is given up after three silences (robots.txt and
    two links, --external-timeout 10 s each), and every one of its links is
    ``origin-unreachable`` under unchecked: nothing is known of them."""
    with _mute() as mute:
        root = tmp_path / "site"
        root.mkdir()
        for page in range(10):
            anchors = "".join(f'<a href="{mute.url}/p{page}-{n}.html">x</a>\n' for n in range(30))
            (root / f"page{page}.html").write_text(
                f"<!doctype html><title>P{page}</title>{anchors}")
        (root / "index.html").write_text("<!doctype html><title>Home</title>" + "".join(
            f'<a href="/page{page}.html">p</a>' for page in range(10)))
        with RunningServer(root) as site:
            started = time.monotonic()
            found = _audit(site.url, tmp_path / "r.json")
            took = time.monotonic() - started
    assert found["broken-external-links"]["count"] == 0, found["broken-external-links"]
    unchecked = found["unchecked-external-links"]["items"]
    assert len(unchecked) == 300
    assert {item["reason"] for item in unchecked} == {"origin-unreachable"}
    assert mute.connections <= 20, mute.connections
    assert took < 60, took


def test_a_drip_ends_at_the_external_timeout_not_at_the_deadline(tmp_path: Path) -> None:
    """One header byte every half second never trips a read timeout: the request's
    total time is what --external-timeout bounds."""
    with _mute(drip=True) as drip:
        links = [f"{drip.url}/page{n}.html" for n in range(20)]
        with RunningServer(_site(tmp_path, links)) as site:
            started = time.monotonic()
            found = _audit(site.url, tmp_path / "r.json", "--external-timeout", "2",
                           "--external-deadline", "60")
            took = time.monotonic() - started
    unchecked = {item["url"]: item["reason"] for item in
                 found["unchecked-external-links"]["items"]}
    assert unchecked == dict.fromkeys(links, "origin-unreachable"), unchecked
    assert took < 20, took  # three requests of 2 s, then given up; not the 60 s deadline


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
    unchecked = {item["url"]: item["reason"]
                 for item in found["unchecked-external-links"]["items"]}
    assert unchecked == dict.fromkeys(links, "origin-unreachable"), unchecked
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
                found = _audit(site.url, tmp_path / "r.json", "--external-rate", str(rate),
                               "--external-max-rate", str(rate))
        landing_hits = [(hit.method, hit.path, hit.at) for hit in landing.log]
        first_hits = [hit.path for hit in first.log]
    paths = [path for _method, path, _at in landing_hits]
    assert paths[0] == "/robots.txt" and paths.count("/robots.txt") == 1
    assert not [path for path in paths if path.startswith("/private/")]
    assert not [path for path in first_hits if path.startswith("/secret/")]
    starts = [at for _method, _path, at in landing_hits]
    assert_spaced(starts, 1 / rate)
    broken = {item["url"] for item in found["broken-external-links"]["items"]}
    assert f"{first.url}/into-private" not in broken  # disallowed: neither broken nor fine
    assert f"{first.url}/into-secret" not in broken


def test_a_hop_waits_for_the_robots_txt_another_link_is_still_reading(
        tmp_path: Path) -> None:
    """A link straight to an origin starts reading its robots.txt, which takes a second;
    a redirect from elsewhere lands there meanwhile: it must wait for that answer, not
    take the origin as allowing everything because a read has begun (the suite on
    faster crawls met /private/ requested)."""
    landing_root = tmp_path / "landing"
    landing_root.mkdir()
    (landing_root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (landing_root / "ok.html").write_text("<!doctype html><title>ok</title>")
    with RunningServer(landing_root, routes={"/robots.txt": {"delay": 1.0}}) as landing:
        hop = {"/into-private": {"status": 302, "headers": {
            "Location": f"{landing.url}/private/page.html"}}}
        with RunningServer(tmp_path / "first", routes=hop) as first:
            links = [f"{landing.url}/ok.html", f"{first.url}/into-private"]
            with RunningServer(_site(tmp_path, links)) as site:
                found = _audit(site.url, tmp_path / "r.json")
        landing_paths = [hit.path for hit in landing.log]
    assert "/robots.txt" in landing_paths  # the read the hop waited for
    assert not [path for path in landing_paths if path.startswith("/private/")], (
        landing_paths)
    broken = {item["url"] for item in found["broken-external-links"]["items"]}
    assert f"{first.url}/into-private" not in broken  # disallowed: neither broken nor fine


@pytest.mark.slow(10)
def test_the_pace_rises_while_an_origin_answers_fast_and_stays_within_its_connections(
        tmp_path: Path) -> None:
    """40 links to one origin at the default pace: the first leave a second apart, then
    quicker as the answers stay fast (a fixed 1/s took 40 s; see external_pace.py)."""
    other_root = tmp_path / "other"
    other_root.mkdir()
    for n in range(40):
        (other_root / f"page{n}.html").write_text("<!doctype html><title>ok</title>")
    with RunningServer(other_root) as other:
        links = [f"{other.url}/page{n}.html" for n in range(40)]
        with RunningServer(_site(tmp_path, links)) as site:
            found = _audit(site.url, tmp_path / "r.json")
        starts = sorted(hit.at for hit in other.log)
    assert found["broken-external-links"]["count"] == 0
    assert len(starts) == 41  # robots.txt, then each link once
    gaps = [later - earlier for earlier, later in pairwise(starts)]
    assert_spaced(starts[:2], 1.0)  # polite at first: robots.txt, then a second's wait
    assert_spaced(starts[1:], 0.1, window=10)  # never above the ceiling of ten a second
    assert max(gaps[-10:]) < 0.5, [round(gap, 2) for gap in gaps]  # and well above 1/s


def test_when_no_external_origin_answers_the_links_are_not_checked_never_broken(
        tmp_path: Path) -> None:
    """Offline, or behind a firewall: every origin refuses. The phase stops once three
    origins failed and none answered, says so once, and reports every link
    not-checked."""
    import socket

    closed = []
    for _ in range(6):  # ports nothing listens on: bound, then released
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed.append(probe.getsockname()[1])
    links = [f"http://127.0.0.1:{port}/page{n}.html" for port in closed for n in range(5)]
    report = tmp_path / "r.json"
    with RunningServer(_site(tmp_path, links)) as site:
        started = time.monotonic()
        run = run_cli("audit", site.url + "/", "--report", str(report), "--check-external",
                      "--compare-sitemap", "off", timeout=100)
        took = time.monotonic() - started
    assert run.code == 0, run.stderr
    assert run.stderr.count("no external origin reachable: external links not checked") == 1
    found = json.loads(report.read_text())["findings"]
    assert found["broken-external-links"]["count"] == 0
    assert found["broken-external-links"]["not_checked"] == (
        "no external origin reachable: external links not checked")
    unchecked = found["unchecked-external-links"]["items"]
    assert sorted(item["url"] for item in unchecked) == sorted(links)
    assert {item["reason"] for item in unchecked} == {"not-checked"}
    assert took < 30, took
