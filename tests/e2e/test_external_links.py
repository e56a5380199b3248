"""``--check-external``: the links that leave the crawl, checked against other local servers.

A second server on 127.0.0.1 (another port: another origin) answers 404, 410, a
HEAD it refuses, a redirect chain, a slow page, a 429 with Retry-After, and a
robots.txt that disallows us a path; a third, over TLS, has a certificate that
expires in 3 days (trustme). Their logs show what was asked, when, and how often.
"""

from __future__ import annotations

import json
import ssl
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import trustme
from conftest import CliRun, assert_spaced, run_cli
from siteserver import RunningServer, SiteServer

pytestmark = pytest.mark.timeout(120)

PATHS = ["/ok.html", "/gone.html", "/removed.html", "/no-head.html", "/r1", "/slow.html",
         "/busy.html", "/private/page.html", "/hop1"]  # /hop1: 7 redirects, 3 asked
# --external-rate and --external-max-rate: at least 0.2 s between request starts to one
# origin, the pace held where it starts (how it adapts: test_external_pace.py)
RATE = 5.0


def _site(tmp_path: Path, other: str, secure: str) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    links = "".join(f'<a href="{other}{path}">{path}</a>\n' for path in PATHS)
    (site / "index.html").write_text(
        f"<!doctype html><title>Home</title>{links}<a href=\"{secure}/ok.html\">tls</a>"
        '<a href="/second.html">second</a>')
    (site / "second.html").write_text(
        f'<!doctype html><title>Second</title><a href="{other}/gone.html">gone again</a>')
    return site


def _tls(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1", not_after=datetime.now(UTC) + timedelta(days=3)
                         ).configure_cert(context)
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    return context, bundle


def _audit(ours: SiteServer, report: Path, bundle: Path, *options: str) -> CliRun:
    return run_cli("audit", ours.url + "/", "--report", str(report), "--check-external",
                   "--external-rate", str(RATE), "--external-max-rate", str(RATE),
                   "--external-timeout", "1",
                   "--compare-sitemap", "off", *options,
                   env_extra={"SSL_CERT_FILE": str(bundle)})


def _hits(server: SiteServer) -> list[tuple[str, str, float]]:
    return [(hit.method, hit.path, hit.at) for hit in server.log]


@pytest.mark.slow(7)
def test_external_links_are_checked_once_politely(tmp_path: Path) -> None:
    context, bundle = _tls(tmp_path)
    report, state = tmp_path / "r.json", tmp_path / "state.db"
    with RunningServer("external") as other, RunningServer("external", tls=context) as secure:
        site = _site(tmp_path, other.url, secure.url)
        with RunningServer(site) as ours:
            run = _audit(ours, report, bundle, "--state", str(state))
            assert run.code == 0, run.stderr
            hits, secure_hits = _hits(other), _hits(secure)
            other.log.clear()
            secure.log.clear()
            again = _audit(ours, tmp_path / "again.json", bundle, "--state", str(state))
        assert again.code == 0, again.stderr
        assert other.log == [] and secure.log == []  # checked a moment ago: kept in the state
    o = other.url
    found = json.loads(report.read_text())["findings"]
    broken = {item["url"].removeprefix(o): item for item in
              found["broken-external-links"]["items"]}
    assert set(broken) == {"/gone.html", "/removed.html", "/slow.html", "/hop1"}
    assert broken["/hop1"]["error"] == "too-many-redirects"
    assert broken["/gone.html"]["status"] == 404 and broken["/removed.html"]["status"] == 410
    assert broken["/slow.html"]["error"] == "timeout"
    assert broken["/gone.html"]["linked_from"] == 2  # both pages, one request
    redirected = found["redirected-external-links"]["items"]
    assert [(item["url"], item["use_instead"], item["hops"]) for item in redirected] == [
        (o + "/r1", o + "/ok.html", 2)]
    expiring = found["expiring-certificates"]["items"]
    assert [item["origin"] for item in expiring] == [secure.url]
    assert 2.5 < expiring[0]["days_left"] <= 3
    # the other server's log: its robots.txt once, then each URL once (HEAD), a GET only
    # where HEAD was refused, the 429 asked again after its Retry-After, nothing disallowed
    asked = [(method, path) for method, path, _at in hits]
    assert asked[0] == ("GET", "/robots.txt")
    assert ("GET", "/private/page.html") not in asked and ("HEAD", "/private/page.html") not in (
        asked)
    counts = {path: sum(1 for _m, p in asked if p == path) for _m, path in asked}
    assert counts["/no-head.html"] == 2 and ("GET", "/no-head.html") in asked
    assert counts["/busy.html"] == 2
    busy = [at for _m, path, at in hits if path == "/busy.html"]
    assert busy[1] - busy[0] >= 0.95  # Retry-After: 1
    assert all(count == 1 for path, count in counts.items()
               if path not in ("/no-head.html", "/busy.html"))
    assert [path for path in counts if path.startswith("/hop")] == [
        f"/hop{n}" for n in range(1, 4)]  # three requests a link, its hops included
    starts = [at for _m, _p, at in hits]
    assert_spaced(starts, 1 / RATE)
    assert [(method, path) for method, path, _at in secure_hits] == [
        ("GET", "/robots.txt"), ("HEAD", "/ok.html")]


def test_a_crawl_checks_nothing_outside_unless_asked(tmp_path: Path) -> None:
    context, _bundle = _tls(tmp_path)
    with RunningServer("external") as other, RunningServer("external", tls=context) as secure:
        site = _site(tmp_path, other.url, secure.url)
        with RunningServer(site) as ours:
            run = run_cli("crawl", ours.url + "/", "--out", str(tmp_path / "out"))
        assert run.code == 0, run.stderr
        assert other.log == [] and secure.log == []


def test_links_into_anchors_are_checked_against_their_pages(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    report = tmp_path / "r.json"
    with RunningServer("external") as other:
        (site / "index.html").write_text(
            '<!doctype html><title>Home</title><h2 id="here">Here</h2>'
            '<a href="/a.html#there">fine</a> <a href="/a.html#nowhere">broken</a>'
            '<a href="#here">fine, on this page</a> <a href="#gone">broken, on this page</a>'
            '<a href="#top">the top</a> <a href="#/route">a client-side route</a>'
            '<a href="/a.html#caf%C3%A9">fine, percent-encoded</a>'
            f'<a href="{other.url}/ok.html#missing">broken, elsewhere</a>')
        (site / "a.html").write_text('<!doctype html><title>A</title><p id="there">x</p>'
                                     '<a name="café">y</a><a href="/#nowhere-else">back</a>')
        with RunningServer(site) as ours:
            run = run_cli("audit", ours.url + "/", "--report", str(report), "--check-external",
                          "--check-fragments", "--external-rate", "50", "--compare-sitemap",
                          "off")
    assert run.code == 0, run.stderr
    items = json.loads(report.read_text())["findings"]["broken-fragments"]["items"]
    u = ours.url
    assert sorted((item["url"], item["found_on"]) for item in items) == sorted([
        (u + "/#gone", [u + "/"]),
        (u + "/#nowhere-else", [u + "/a.html"]),
        (u + "/a.html#nowhere", [u + "/"]),
        (other.url + "/ok.html#missing", [u + "/"]),
    ])
    # the page elsewhere: its status asked once (HEAD), its body read once for its anchors
    assert [(hit.method, hit.path) for hit in other.log] == [
        ("GET", "/robots.txt"), ("HEAD", "/ok.html"), ("GET", "/ok.html")]


def test_anchors_are_checked_again_when_the_pages_answer_304(tmp_path: Path) -> None:
    """A cron audit with --state: the second run's pages answer 304 and are replayed
    from the state, their links into anchors and their anchors with them; a state
    an audit without --check-fragments wrote does not stand in for a page's anchors."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        '<!doctype html><title>Home</title><h2 id="here">Here</h2>'
        '<a href="/a.html#there">fine</a> <a href="/a.html#nowhere">broken</a>'
        '<a href="#here">fine, on this page</a> <a href="#gone">broken, on this page</a>')
    (site / "a.html").write_text('<!doctype html><title>A</title><p id="there">x</p>'
                                 '<a href="/#nowhere-else">back</a>')
    state = tmp_path / "state.db"
    found = []
    with RunningServer(site, conditional=True) as ours:
        for attempt, fragments in enumerate((False, True, True)):
            report = tmp_path / f"r{attempt}.json"
            run = run_cli("audit", ours.url + "/", "--report", str(report), "--state",
                          str(state), "--compare-sitemap", "off",
                          *(["--check-fragments"] if fragments else []))
            assert run.code == 0, run.stderr
            findings = json.loads(report.read_text())["findings"]
            found.append(sorted(item["url"] for item in findings["broken-fragments"]["items"])
                         if "broken-fragments" in findings else None)
            asked = [hit.headers.get("if-none-match") is not None for hit in ours.log
                     if hit.path in ("/", "/a.html")]
            ours.log.clear()
            if attempt == 1:  # the pages' anchors were never stored: both sent again
                assert asked == [False, False]
            if attempt == 2:
                assert asked == [True, True]  # both answered 304
    u = ours.url
    assert found[1] == found[2] == [u + "/#gone", u + "/#nowhere-else", u + "/a.html#nowhere"]


def test_an_anchor_through_an_in_scope_redirect_is_checked_on_the_page_it_ends_on(
        tmp_path: Path) -> None:
    """``moved.html#nosuch`` where moved.html is a 301 to a page without that id: the
    same case on another origin was reported, in scope it was not."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        '<!doctype html><title>Home</title><a href="/moved.html#nosuch">broken</a>'
        '<a href="/moved.html#here">fine</a><a href="/twice.html#gone">broken, two hops</a>')
    (site / "new.html").write_text('<!doctype html><title>New</title><p id="here">x</p>')
    routes = {"/moved.html": {"status": 301, "headers": {"Location": "/new.html"}},
              "/twice.html": {"status": 302, "headers": {"Location": "/moved.html"}}}
    report = tmp_path / "r.json"
    with RunningServer(site, routes=routes) as ours:
        run = run_cli("audit", ours.url + "/", "--report", str(report), "--check-fragments",
                      "--compare-sitemap", "off")
    assert run.code == 0, run.stderr
    items = json.loads(report.read_text())["findings"]["broken-fragments"]["items"]
    assert sorted(item["url"].removeprefix(ours.url) for item in items) == [
        "/moved.html#nosuch", "/twice.html#gone"]
