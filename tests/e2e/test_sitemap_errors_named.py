"""A site without a sitemap: ``sitemap-errors`` names the sitemap URLs tried.

It read ``- `None` (problem `not-found: ...`)`` in the Markdown report and
``<testcase name="">`` in JUnit: now the first URL tried is the item's name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from lxml import etree
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def test_no_sitemap_is_named_by_the_urls_tried(tmp_path: Path) -> None:
    site_root = tmp_path / "site"
    site_root.mkdir()
    (site_root / "index.html").write_text("<!doctype html><title>Home</title><p>hi</p>")
    md, junit, js = tmp_path / "a.md", tmp_path / "a.junit.xml", tmp_path / "a.json"
    with RunningServer(site_root) as site:
        run = run_cli("audit", site.url + "/", "--report", str(md), "--report", str(junit),
                      "--report", str(js))
    assert run.code == 0, run.stderr
    found = json.loads(js.read_text())["findings"]
    (item,) = found["no-sitemap"]["items"]
    assert item["url"] == site.url + "/robots.txt"
    assert site.url + "/sitemap.xml" in item["tried"]
    assert found["sitemap-errors"]["count"] == 0  # no sitemap is not a sitemap that fails
    text = md.read_text()
    assert "`None`" not in text
    assert f"`{site.url}/robots.txt`" in text and f"`{site.url}/sitemap.xml`" in text
    cases = [case for case in etree.parse(str(junit)).iter("testcase")
             if case.get("classname") == "no-sitemap"]
    assert cases and all(case.get("name") for case in cases)
    assert cases[0].get("name") == site.url + "/robots.txt"
