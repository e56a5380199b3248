"""The live-sitemap reader over a socket: RSS 2.0, Atom and text sitemaps read, and
the image and video tags Google no longer reads named as deprecated-sitemap-tags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def test_feeds_and_text_sitemaps_are_read_and_deprecated_tags_named(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    with RunningServer("feeds") as site:
        run = run_cli("audit", site.url + "/", "--report", str(report),
                      "--compare-sitemap", "auto")
    assert run.code == 0, run.stderr
    document = json.loads(report.read_text())
    u = site.url
    files = {item["url"].removeprefix(u): item for item in document["live_sitemap"]["sitemaps"]}
    assert {name: files[name]["kind"] for name in files} == {
        "/feed.rss": "rss", "/atom.xml": "atom", "/urls.txt": "text", "/media.xml": "urlset"}
    assert (files["/feed.rss"]["entries"], files["/atom.xml"]["entries"]) == (2, 1)
    found = document["findings"]
    orphans = sorted(item["url"].removeprefix(u) for item in found["orphans"]["items"])
    assert orphans == ["/atom-only.html", "/rss-only.html", "/text-only.html"]
    assert found["deprecated-sitemap-tags"]["items"] == [{
        "sitemap": u + "/media.xml",
        "tags": {"image:caption": 2, "image:license": 1, "image:title": 1,
                 "video:category": 1, "video:player_loc@allow_embed": 1}}]
    assert found["sitemap-errors"]["count"] == 0
