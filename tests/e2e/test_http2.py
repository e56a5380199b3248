"""``--http2`` end to end: a real HTTP/2 server over TLS, the real CLI, the files it writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from asgiserver import AsgiServer, site_app
from conftest import read_sitemaps, run_cli
from siteserver import load_site

pytestmark = pytest.mark.timeout(90)


@pytest.mark.slow(6)
def test_http2_crawl_uses_one_connection_and_writes_the_same_sitemaps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = load_site("basic")
    site.scheme = "https"
    with AsgiServer(site_app(site), tls=True) as server:
        site.port = server.port
        assert server.ca_file is not None
        monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))
        over_h2 = run_cli("crawl", server.origin + "/", "--out", str(tmp_path / "h2"),
                          "--http2", "--concurrency", "8", "--quiet")
        h2_log = list(server.log)
        server.log.clear()
        over_h1 = run_cli("crawl", server.origin + "/", "--out", str(tmp_path / "h1"),
                          "--concurrency", "8", "--quiet")
        h1_log = list(server.log)
    assert over_h2.code == 0, over_h2.stderr
    assert over_h1.code == 0, over_h1.stderr
    # From the server's side: every request of the --http2 crawl came as HTTP/2, on
    # one connection; the default transport spoke HTTP/1.1 to the same server.
    assert len(h2_log) > 20
    assert {seen.http_version for seen in h2_log} == {"2"}
    assert len({seen.client_port for seen in h2_log}) == 1
    assert {seen.http_version for seen in h1_log} == {"1.1"}
    assert sorted(seen.target for seen in h2_log) == sorted(seen.target for seen in h1_log)
    # The same sitemap, byte for byte.
    base = server.origin + "/"
    assert read_sitemaps(tmp_path / "h2", base) == read_sitemaps(tmp_path / "h1", base)
    assert len(read_sitemaps(tmp_path / "h2", base).locs) == 22
    for name in ("sitemap_index.xml", "sitemap-00001.xml.gz", "robots.txt"):
        assert (tmp_path / "h2" / name).read_bytes() == (tmp_path / "h1" / name).read_bytes()


def test_http2_over_plain_http_stays_http11(tmp_path: Path) -> None:
    site = load_site("basic")
    with AsgiServer(site_app(site)) as server:
        site.port = server.port
        run = run_cli("crawl", server.origin + "/", "--out", str(tmp_path / "out"), "--http2",
                      "--quiet")
    assert run.code == 0, run.stderr
    assert {seen.http_version for seen in server.log} == {"1.1"}
    assert len(read_sitemaps(tmp_path / "out", server.origin + "/").locs) == 22
