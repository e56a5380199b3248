"""A public site cannot aim the crawler at the machine it runs on (crawler.http.address_rule).

The "public" site lives on 127.0.0.1 but is reached by a name, ``www.public.test``,
through a forward proxy that maps that name (and ``cdn.public.test``) to its
port: to the crawler it is a site whose host does not resolve to a private
address. A "secret" server on another loopback port stands for the metadata
service or an admin panel; its log must stay empty whatever the site's pages,
redirects, robots.txt and scripts ask for. Nothing here leaves 127.0.0.0/8: the
proxy refuses any other host itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from forward_proxy import running_proxy
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)

SECRET = "TOPSECRET-4242"
KEY = "boundary-key-0123456789"


def _secret_site(tmp_path: Path) -> Path:
    root = tmp_path / "secret"
    root.mkdir()
    (root / "secret.txt").write_text(SECRET)
    (root / "sitemap.xml").write_text(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>http://www.public.test/</loc></url></urlset>")
    return root


def _public_site(tmp_path: Path, secret_port: int) -> Path:
    root = tmp_path / "public"
    root.mkdir()
    s = secret_port
    spellings = [f"http://127.0.0.1:{s}/secret.txt", f"http://[::1]:{s}/secret.txt",
                 f"http://localhost:{s}/secret.txt", f"http://2130706433:{s}/secret.txt",
                 f"http://0x7f.1:{s}/secret.txt", "http://169.254.169.254/latest/meta-data/",
                 f"http://[::ffff:127.0.0.1]:{s}/secret.txt",
                 "http://cdn.public.test/bounce", "http://cdn.public.test/fine.html"]
    links = "".join(f'<a href="{url}">x</a>\n' for url in spellings)
    (root / "index.html").write_text(f"<!doctype html><title>Home</title>{links}")
    # robots.txt names a sitemap on the secret port, and an index on the site itself
    # whose child is there too
    (root / "robots.txt").write_text(
        f"User-agent: *\nAllow: /\nSitemap: http://127.0.0.1:{s}/sitemap.xml\n"
        "Sitemap: http://www.public.test/sitemap_index.xml\n")
    (root / "sitemap_index.xml").write_text(
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>http://127.0.0.1:{s}/child.xml</loc></sitemap></sitemapindex>")
    (root / f"{KEY}.txt").write_text(KEY)
    return root


def _cdn(tmp_path: Path) -> Path:
    root = tmp_path / "cdn"
    root.mkdir()
    (root / "fine.html").write_text("<!doctype html><title>fine</title>")
    return root


def test_links_redirects_and_sitemaps_never_reach_a_private_address(tmp_path: Path) -> None:
    report = tmp_path / "audit.json"
    with RunningServer(_secret_site(tmp_path)) as secret:
        bounce = {"/bounce": {"status": 302,
                              "headers": {"Location": f"http://127.0.0.1:{secret.port}/secret.txt"}}}
        with RunningServer(_public_site(tmp_path, secret.port)) as site, \
                RunningServer(_cdn(tmp_path), routes=bounce) as cdn, \
                running_proxy(names={"www.public.test": site.port,
                                     "cdn.public.test": cdn.port}) as (proxy, _seen):
            run = run_cli("audit", "http://www.public.test/", "--report", str(report),
                          "--check-external", "--external-rate", "50",
                          "--compare-sitemap", "auto",
                          proxy_env={"http_proxy": proxy}, timeout=100)
            asked_cdn = [hit.path for hit in cdn.log]
        assert secret.log == [], [hit.path for hit in secret.log]
    assert run.code in (0, 1), run.stderr
    found = json.loads(report.read_text())["findings"]
    unchecked = {item["url"]: item["reason"] for item in
                 found["unchecked-external-links"]["items"]}
    s = secret.port
    for url in (f"http://127.0.0.1:{s}/secret.txt", f"http://[::1]:{s}/secret.txt",
                f"http://localhost:{s}/secret.txt", "http://169.254.169.254/latest/meta-data/",
                "http://cdn.public.test/bounce"):
        assert unchecked.get(url) == "private-address", (url, unchecked)
    broken = {item["url"] for item in found["broken-external-links"]["items"]}
    assert not broken & set(unchecked)  # not asked: neither broken nor fine
    assert "http://cdn.public.test/fine.html" not in broken
    assert "/fine.html" in asked_cdn and "/bounce" in asked_cdn  # the public ones still go
    assert SECRET not in report.read_text()


def test_allow_private_network_opens_the_rule(tmp_path: Path) -> None:
    report = tmp_path / "audit.json"
    with RunningServer(_secret_site(tmp_path)) as secret:
        with RunningServer(_public_site(tmp_path, secret.port)) as site, \
                RunningServer(_cdn(tmp_path)) as cdn, \
                running_proxy(names={"www.public.test": site.port,
                                     "cdn.public.test": cdn.port}) as (proxy, _seen):
            run = run_cli("audit", "http://www.public.test/", "--report", str(report),
                          "--check-external", "--external-rate", "50",
                          "--allow-private-network", "--external-timeout", "2",
                          proxy_env={"http_proxy": proxy}, timeout=100)
        assert run.code in (0, 1), run.stderr
        assert "/secret.txt" in [hit.path for hit in secret.log]
    found = json.loads(report.read_text())["findings"]
    assert not [item for item in found["unchecked-external-links"]["items"]
                if item["reason"] == "private-address"]


def test_a_loopback_site_still_checks_its_links_to_other_loopback_ports(
        tmp_path: Path) -> None:
    """The rule opens the start URL's own class: a staging site on 127.0.0.1 links to
    another local service, and that link is checked (not refused)."""
    report = tmp_path / "audit.json"
    with RunningServer(_secret_site(tmp_path)) as other:
        root = tmp_path / "staging"
        root.mkdir()
        (root / "index.html").write_text(
            f'<!doctype html><title>Home</title><a href="{other.url}/secret.txt">x</a>'
            f'<a href="{other.url}/gone.html">y</a>')
        with RunningServer(root) as site:
            run = run_cli("audit", site.url + "/", "--report", str(report),
                          "--check-external", "--external-rate", "50", timeout=100)
        assert run.code in (0, 1), run.stderr
        assert "/secret.txt" in [hit.path for hit in other.log]
    found = json.loads(report.read_text())["findings"]
    assert [item["url"] for item in found["broken-external-links"]["items"]] == [
        other.url + "/gone.html"]
    assert found["unchecked-external-links"]["items"] == []


def test_indexnow_reaches_no_private_endpoint_from_a_public_site(tmp_path: Path) -> None:
    """An IndexNow endpoint on a loopback port, from a public site's run: refused at
    once (exit 7, one line saying why), never asked, and not retried."""
    with RunningServer(_secret_site(tmp_path)) as secret:
        with RunningServer(_public_site(tmp_path, secret.port)) as site, \
                running_proxy(names={"www.public.test": site.port}) as (proxy, _seen):
            run = run_cli("crawl", "http://www.public.test/", "--out", str(tmp_path / "out"),
                          "--state", str(tmp_path / "state.db"), "--indexnow", KEY,
                          "--indexnow-all", "--indexnow-endpoint",
                          f"http://127.0.0.1:{secret.port}/indexnow",
                          proxy_env={"http_proxy": proxy}, timeout=60)
        assert secret.log == [], [hit.path for hit in secret.log]
    assert run.code == 7, run.stderr
    assert "private-address" in run.stderr and KEY not in run.stderr
    assert (tmp_path / "out" / "sitemap_index.xml").exists()  # published all the same
