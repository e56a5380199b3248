"""--section and --sections auto: one set of shards per section, over a real server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import pg_docs, read_sitemaps, run_cli
from siteserver import RunningServer

SECTIONS = ("--section", "blog=/blog/*", "--section", "products=/products/*",
            "--section", "docs=/docs/*")
LASTMOD = "Mon, 02 Nov 2026 10:00:00 GMT"


def _shards(out: Path) -> dict[str, float]:
    """Each shard's file and its mtime (ns), the index's and the News sitemap's aside."""
    return {path.name: path.stat().st_mtime_ns for path in out.iterdir()
            if re.fullmatch(r"sitemap-.*\d{5}\.xml\.gz", path.name)}


def _index_lastmods(out: Path, base: str) -> dict[str, str]:
    text = (out / "sitemap_index.xml").read_text()
    return {loc[len(base):]: when for loc, when in re.findall(
        r"<loc>([^<]+)</loc><lastmod>([^<]+)</lastmod>", text)}


def test_three_sections_each_sharded_alone_the_union_is_the_whole(tmp_path: Path) -> None:
    whole, split = tmp_path / "whole", tmp_path / "split"
    with RunningServer("sections") as site:
        base = site.url + "/"
        assert run_cli("crawl", base, "--out", str(whole)).code == 0
        run = run_cli("crawl", base, "--out", str(split), "--report",
                      str(tmp_path / "r.json"), "--report", str(tmp_path / "r.html"),
                      *SECTIONS, "--max-urls-per-sitemap", "3")
        assert run.code == 0, run.stderr
        written = read_sitemaps(split, base)  # every shard valid against the schemas
        one = read_sitemaps(whole, base)
        from usp.tree import sitemap_tree_for_homepage

        site.overlay = split
        try:
            tree = sitemap_tree_for_homepage(base, use_known_paths=False)
            independent = sorted({page.url for page in tree.all_pages()})
        finally:
            site.overlay = None
    assert sorted(written.locs) == one.locs == independent
    names = [loc[len(base):] for loc in written.index_locs]
    # one shard set per section, in the order given, "other" last; 3 URLs a shard
    assert names == ["sitemap-blog-00001.xml.gz", "sitemap-blog-00002.xml.gz",
                     "sitemap-products-00001.xml.gz", "sitemap-products-00002.xml.gz",
                     "sitemap-docs-00001.xml.gz", "sitemap-other-00001.xml.gz"]
    assert written.shard_counts == [3, 1, 3, 2, 3, 2]
    by_shard = iter(written.locs)
    for name, count in zip(names, written.shard_counts, strict=True):
        section = name.split("-")[1]
        for _ in range(count):
            path = next(by_shard)[len(base):]
            assert path.startswith(f"{section}/") or (section == "other" and "/" not in path)
    assert "sections: blog 4, products 5, docs 3, other 2" in run.stderr
    assert json.loads((tmp_path / "r.json").read_text())["sections"] == {
        "blog": 4, "products": 5, "docs": 3, "other": 2}
    page = (tmp_path / "r.html").read_text()
    assert [re.sub(r"<[^>]+>", " ", row).split()[:2] for row in re.findall(
        r"<tr><td>.*?</tr>", page.split('id="sections"')[1].split("</table>")[0])] == [
        ["blog", "4"], ["products", "5"], ["docs", "3"], ["other", "2"]]
    assert not list(split.glob("sitemap-0*"))  # the unsectioned shards are not written


def test_a_change_in_one_section_rewrites_only_its_shards(tmp_path: Path) -> None:
    out, state = tmp_path / "out", tmp_path / "state.db"
    args = ("--out", str(out), "--state", str(state), *SECTIONS)
    with RunningServer("sections") as site:
        base = site.url + "/"
        assert run_cli("crawl", base, *args).code == 0
        before, lastmods = _shards(out), _index_lastmods(out, base)
        changed = "Tue, 24 Nov 2026 08:30:00 GMT"
        site.routes["/products/teapot.html"] = {"headers": {"Last-Modified": changed}}
        again = run_cli("crawl", base, *args)
        assert again.code == 0, again.stderr
    after, lastmods_after = _shards(out), _index_lastmods(out, base)
    assert set(after) == set(before)
    rewritten = {name for name in after if after[name] != before[name]}
    assert rewritten == {"sitemap-products-00001.xml.gz"}
    assert lastmods_after["sitemap-products-00001.xml.gz"] == "2026-11-24T08:30:00Z"
    assert {name: when for name, when in lastmods_after.items() if "products" not in name} \
        == {name: when for name, when in lastmods.items() if "products" not in name}
    assert "1 of 4 sitemap shard(s) changed" in again.stderr


def test_a_section_that_lost_most_of_its_urls_is_refused_by_name(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("sections") as site:
        base = site.url + "/"
        assert run_cli("crawl", base, "--out", str(out), *SECTIONS).code == 0
        before = {path.name: path.read_bytes() for path in out.iterdir()}
        for gone in ("first", "second", "third"):
            site.routes[f"/blog/{gone}.html"] = {"status": 404}
        run = run_cli("crawl", base, "--out", str(out), *SECTIONS)
        assert run.code == 5, run.stderr
        assert "section(s) blog 1 (was 4)" in run.stderr
        assert {path.name: path.read_bytes() for path in out.iterdir()} == before
        renamed = run_cli("crawl", base, "--out", str(out), "--section", "posts=/blog/*")
        assert renamed.code == 5
        assert "products 0 (was 5)" in renamed.stderr and "docs 0 (was 3)" in renamed.stderr
        allowed = run_cli("crawl", base, "--out", str(out), *SECTIONS, "--allow-shrink")
        assert allowed.code == 0, allowed.stderr


@pytest.mark.parametrize(("value", "why"), [
    ("blog", "must be NAME=PATTERN"),
    ("Blog=/blog/*", "section name 'Blog' must be"),
    ("blog=blog/*", "can never match"),
    ("blog=re:(", "not a valid regular expression"),
])
def test_a_section_option_that_cannot_work_is_refused_before_any_request(
        tmp_path: Path, value: str, why: str) -> None:
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path), "--section", value)
    assert run.code == 2 and why in run.stderr and run.stderr.count("\n") == 1, run.stderr


def test_sections_auto_and_section_are_one_choice(tmp_path: Path) -> None:
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path), "--sections", "auto",
                  "--section", "a=/a/*")
    assert run.code == 2 and "choose the sections one way" in run.stderr


def test_sections_auto_splits_by_first_segment(tmp_path: Path) -> None:
    """A site shaped as the bench's s10k (folders of a hundred pages each): one section
    per folder, the home page in other."""
    site_dir = tmp_path / "site"
    bench = Path(__file__).resolve().parents[2] / "bench" / "gen_site.py"
    made = subprocess.run([sys.executable, str(bench), "--pages", "400", "--seed", "1",
                           "--out", str(site_dir)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    out = tmp_path / "out"
    with RunningServer(site_dir) as site:
        base = site.url + "/"
        run = run_cli("crawl", base, "--out", str(out), "--sections", "auto",
                      "--report", str(tmp_path / "r.json"))
        assert run.code == 0, run.stderr
        written = read_sitemaps(out, base)
    sections = json.loads((tmp_path / "r.json").read_text())["sections"]
    folders = sorted(path.name for path in site_dir.iterdir() if path.is_dir())
    assert len(folders) == 4
    assert sorted(sections) == sorted([*folders, "other"]) and list(sections)[-1] == "other"
    sizes = [(-count, name) for name, count in sections.items() if name != "other"]
    assert sizes == sorted(sizes)  # biggest first, then by name
    assert sections["other"] == 1  # the home page
    assert sum(sections.values()) == len(written.locs)
    for loc in written.locs:
        path = loc[len(base):]
        assert path == "" or path.split("/")[0] in folders
    files = [loc[len(base):] for loc in written.index_locs]
    assert files == [f"sitemap-{name}-00001.xml.gz" for name in sections]


def test_sections_auto_on_the_sections_fixture_finds_what_section_was_told(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("sections") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--sections", "auto")
    assert run.code == 0, run.stderr
    assert "sections: products 5, blog 4, docs 3, other 2" in run.stderr


def test_sections_auto_on_a_flat_site_writes_one_sitemap_and_says_why(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--sections", "auto")
    assert run.code == 0, run.stderr
    assert (out / "sitemap-00001.xml.gz").is_file()
    assert "--sections auto: one sitemap; no two first path segments hold 1 %" in run.stderr


@pytest.mark.slow(8)
def test_sections_auto_on_the_postgresql_docs_is_one_sitemap(tmp_path: Path) -> None:
    """The sections a person would choose (docs/pages/scheduled.md): none on the
    PostgreSQL docs, whose 1,169 pages all sit at the top of one folder."""
    with RunningServer(pg_docs()) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "pg"), "--sections",
                      "auto", default_duplicates=True, timeout=240)
    assert run.code == 0, run.stderr
    assert "--sections auto: one sitemap; no two first path segments hold 1 %" in run.stderr
    assert ": 1,169 listed" in run.stderr
    assert sorted(path.name for path in (tmp_path / "pg").glob("sitemap-*")) == [
        "sitemap-00001.xml.gz"]


@pytest.mark.marathon
@pytest.mark.timeout(600)
def test_sections_auto_on_s10k(tmp_path: Path) -> None:
    """s10k, the bench's synthetic site (100 folders of about 100 pages): one section a
    folder, the home page apart. 200 MB served by the test server: a long run
    (``-m marathon``); bench/sections_auto.py measures the same over nginx, and
    test_sections_auto_splits_by_first_segment shows it on 400 pages in the suite."""
    site_dir = tmp_path / "s10k"
    bench = Path(__file__).resolve().parents[2] / "bench" / "gen_site.py"
    subprocess.run([sys.executable, str(bench), "--pages", "10000", "--seed", "1", "--out",
                    str(site_dir)], check=True, capture_output=True)
    with RunningServer(site_dir) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--sections",
                      "auto", "--report", str(tmp_path / "r.json"), "--concurrency", "16",
                      default_duplicates=True, timeout=540)
    assert run.code == 0, run.stderr
    sections = json.loads((tmp_path / "r.json").read_text())["sections"]
    folders = sorted(path.name for path in site_dir.iterdir() if path.is_dir())
    assert len(folders) == 100
    assert sorted(sections) == sorted([*folders, "other"])  # s0000's 99 pages included
    assert sections["other"] == 1 and sum(sections.values()) == 10_000


def test_sections_from_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "site.toml"
    with RunningServer("sections") as site:
        config.write_text(f'start-url = "{site.url}/"\nout = "out"\n'
                          'section = ["docs=/docs/*", "blog=/blog/*"]\n')
        run = run_cli("crawl", "--config", str(config))
    assert run.code == 0, run.stderr
    assert "sections: docs 3, blog 4, other 7" in run.stderr
    assert sorted(path.name for path in (tmp_path / "out").glob("sitemap-*.xml*")) == [
        "sitemap-blog-00001.xml.gz", "sitemap-docs-00001.xml.gz", "sitemap-other-00001.xml.gz"]
