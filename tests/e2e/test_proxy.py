"""Proxies from the environment, as wget, curl and pip use them, over real sockets."""

from __future__ import annotations

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
