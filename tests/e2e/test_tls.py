"""HTTPS over a real socket: certificates are verified, and failures say so."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import trustme
from conftest import run_cli
from siteserver import RunningServer

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("transport")]


def test_an_untrusted_certificate_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    authority = trustme.CA()  # a CA nobody trusts: the crawler must not either
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server_context)
    with RunningServer("basic", tls=server_context) as site:
        assert site.url.startswith("https://")
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"))
        assert site.paths() == []  # no request got through the handshake
    assert run.code == 3
    assert run.stderr.strip().splitlines() == [
        f"sitemap-crawler: error: {site.url} is unreachable: tls-error (fetching /robots.txt)"]
    assert not (tmp_path / "out" / "sitemap_index.xml").exists()


def test_a_site_under_a_ca_named_by_ssl_cert_file_is_crawled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    authority = trustme.CA()  # an internal CA, as companies run them
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server_context)
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    with RunningServer("basic", tls=server_context) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--quiet")
    assert run.code == 0, run.stderr
    index = (tmp_path / "out" / "sitemap_index.xml").read_text()
    assert f"<loc>{site.url}/sitemap-00001.xml.gz</loc>" in index
