"""Proxies from the environment, as wget, curl and pip use them, over real sockets."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import read_sitemaps, run_cli
from forward_proxy import running_proxy
from siteserver import RunningServer

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("transport")]


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    with running_proxy() as running:
        yield running


def test_http_proxy_from_the_environment_is_used(
        tmp_path: Path, proxy: tuple[str, list[str]]) -> None:
    proxy_url, seen = proxy
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--quiet",
                      proxy_env={"http_proxy": proxy_url})
        direct = list(site.paths())
    assert run.code == 0, run.stderr
    assert site.url + "/robots.txt" in seen and site.url + "/" in seen
    assert len(seen) == len(direct)  # every request went through the proxy
    assert site.url + "/" in read_sitemaps(tmp_path / "out", site.url + "/").locs


def test_no_proxy_sends_the_crawl_direct(tmp_path: Path, proxy: tuple[str, list[str]]) -> None:
    proxy_url, seen = proxy
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--quiet",
                      proxy_env={"http_proxy": proxy_url, "no_proxy": "127.0.0.1"})
    assert run.code == 0, run.stderr
    assert seen == []


def test_an_unreachable_proxy_is_named_in_the_error(tmp_path: Path) -> None:
    # Bound but not listening for the whole test: connections are refused, and no
    # other socket (the site's own server) can be given this port meanwhile.
    with socket.socket() as probe, RunningServer("basic") as site:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--retries", "0",
                      proxy_env={"http_proxy": dead})
        assert site.paths() == []
    assert run.code == 3
    assert "proxy-error" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_an_ipv6_link_is_checked_through_the_proxy_with_its_brackets(tmp_path: Path) -> None:
    """A proxy reads the request target as a URL: ``http://::1:8/x`` is no URL, so
    an IPv6 literal must keep its brackets there (``http://[::1]:8/x``). The proxy
    here takes ``::1`` to the other site's port on 127.0.0.1."""
    other_root = tmp_path / "other"
    other_root.mkdir()
    (other_root / "page.html").write_text("<!doctype html><title>there</title>")
    with RunningServer(other_root) as other:
        link = f"http://[::1]:{other.port}/page.html"
        site_root = tmp_path / "site"
        site_root.mkdir()
        (site_root / "index.html").write_text(
            f'<!doctype html><title>Home</title><a href="{link}">x</a>')
        with RunningServer(site_root) as site, \
                running_proxy(names={"::1": other.port}) as (proxy_url, seen):
            report = tmp_path / "a.json"
            run = run_cli("audit", site.url + "/", "--report", str(report), "--check-external",
                          "--external-rate", "50", proxy_env={"http_proxy": proxy_url})
    assert run.code in (0, 1), run.stderr
    assert link in seen, seen
    found = json.loads(report.read_text())["findings"]
    assert found["broken-external-links"]["count"] == 0, found["broken-external-links"]
    assert "/page.html" in [hit.path for hit in other.log]
