"""Every XML file is well-formed whatever a page says (over a socket).

The ``hostile-text`` fixture's pages carry what XML 1.0 cannot: a lone surrogate
in a JSON-LD video's name (which UTF-8 cannot even encode), C0 controls in a
headline and a video's name and description, ``&#1;`` in a ``<title>``, and
JSON-LD nested 5,000 deep. The crawl must write every file, each parsed back with
lxml and valid against its schema, and list every page.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Schemas, read_sitemaps, run_cli
from lxml import etree
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)
PAGES = {"/", "/surrogate.html", "/controls.html", "/title-control.html", "/deep.html"}


def test_hostile_text_makes_well_formed_sitemaps(tmp_path: Path) -> None:
    out, report = tmp_path / "out", tmp_path / "r.json"
    with RunningServer("hostile-text") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--videos", "--news",
                      "Gazette=en", "--report", str(report), "--no-gzip")
    assert run.code == 0, run.stderr
    locs = {loc.removeprefix(site.url) for loc in
            read_sitemaps(out, site.url + "/", videos=True).locs}
    assert locs == PAGES
    news = etree.parse(str(out / "sitemap-news.xml"))  # parses: well-formed
    Schemas("sitemap-news-set").assertValid(news)
    titles = [title.text for title in news.iter("{*}title")]
    assert "A title with \ufffd in it" in titles
    assert "Bell\ufffd and escape\ufffd" in titles
    shard = etree.parse(str(out / "sitemap-00001.xml"))
    names = {title.text for title in shard.iter("{http://www.google.com/schemas/sitemap-video/1.1}title")}
    assert {"S\ufffd", "Clip\ufffd \ufffd[31mred"} <= names


def test_json_ld_past_the_depth_limit_is_a_structured_data_error(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    with RunningServer("hostile-text") as site:
        run = run_cli("audit", site.url + "/", "--report", str(report), "--videos",
                      "--compare-sitemap", "off")
    assert run.code == 0, run.stderr
    document = json.loads(report.read_text())
    rows = {row["url"].removeprefix(site.url): row for row in document["urls"]}
    assert rows["/deep.html"]["status"] == 200 and not rows["/deep.html"].get("error")
    broken = {item["url"] for item in document["findings"]["broken-links"]["items"]}
    assert site.url + "/deep.html" not in broken
    errors = [item for item in document["findings"]["structured-data-errors"]["items"]
              if item["url"] == site.url + "/deep.html"]
    assert errors and "nested" in json.dumps(errors), errors
