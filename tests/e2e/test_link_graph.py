"""--links: the link graph, one row per link, as CSV and as Parquet, over a socket."""

from __future__ import annotations

import csv
import sqlite3
import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)
TOKEN = "s3cr3t-value"


def crawl_links(tmp_path: Path, name: str, *extra: str) -> tuple[list[dict], str]:
    graph = tmp_path / name
    with RunningServer("seeds") as site:
        run = run_cli("crawl", site.url + "/links.html", "--out", str(tmp_path / "out"),
                      "--links", str(graph), "--header", f"X-Token: {TOKEN}", *extra)
    assert run.code == 0, run.stderr
    assert TOKEN not in run.stdout + run.stderr
    if name.endswith(".parquet"):
        return pq.read_table(graph).to_pylist(), site.url
    return list(csv.DictReader(graph.open(newline=""))), site.url


def test_every_link_is_a_row_with_its_rel_scope_and_target_status(tmp_path: Path) -> None:
    rows, u = crawl_links(tmp_path, "links.csv")
    assert TOKEN not in (tmp_path / "links.csv").read_text()
    mine = [(row["target"].removeprefix(u), row["anchor"], row["rel"], row["in_scope"],
             row["status"]) for row in rows if row["source"] == u + "/links.html"]
    assert mine == [
        ("/", "Home page", "", "yes", "200"),
        ("/b.html", "a comment's link", "ugc", "yes", "200"),
        ("/c.html", "an advert", "sponsored nofollow", "yes", ""),  # nofollow: not fetched
        ("/gone.html", "a page that is gone", "", "yes", "404"),
        ("https://elsewhere.example/page", "'=elsewhere", "", "no", ""),  # a formula, defused
        ("/e.html", "an area", "", "yes", "200"),
    ]  # the link carrying the token is left out, as the crawl leaves it
    sources = {row["source"].removeprefix(u) for row in rows}
    assert sources == {"/links.html", "/", "/a.html", "/b.html", "/d.html", "/e.html"}
    assert list(rows[0]) == ["source", "target", "anchor", "rel", "in_scope", "status", "error"]


def test_parquet_holds_the_same_rows_typed(tmp_path: Path) -> None:
    table, u = crawl_links(tmp_path, "links.parquet", "--workers", "2")
    flat, _ = crawl_links(tmp_path, "links.csv")
    assert len(table) == len(flat)
    gone = next(row for row in table if row["target"] == u + "/gone.html")
    assert (gone["status"], gone["in_scope"], gone["error"]) == (404, True, None)
    assert {row["rel"] for row in table} == {"", "ugc", "sponsored nofollow"}


@pytest.mark.parametrize(("name", "says"), [
    ("links.txt", "the file must end in .csv or .parquet"),
    ("missing/links.csv", "no directory"),
])
def test_a_bad_links_file_is_one_line_and_exit_2_before_any_request(
        tmp_path: Path, name: str, says: str) -> None:
    with RunningServer("seeds") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      "--links", str(tmp_path / name))
        assert site.log == []
    assert run.code == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and says in run.stderr


def test_a_recrawl_answered_304_writes_the_same_graph(tmp_path: Path) -> None:
    """With --state the second crawl's pages answer 304 and are replayed from the state:
    their links keep their rel values, nofollow ones included. A state written
    without --links has no graph to replay, so those pages are fetched whole."""
    state = tmp_path / "state.db"
    graphs, asked = [], []
    with RunningServer("seeds", conditional=True) as site:
        for graph in (None, "one.csv", "two.csv"):
            run = run_cli("crawl", site.url + "/links.html", "--out", str(tmp_path / "out"),
                          "--state", str(state), "--header", f"X-Token: {TOKEN}",
                          *(["--links", str(tmp_path / graph)] if graph else []))
            assert run.code == 0, run.stderr
            if graph:
                graphs.append(sorted(tuple(row.values()) for row in
                                     csv.DictReader((tmp_path / graph).open(newline=""))))
            asked.append([hit.path for hit in site.log if "if-none-match" in hit.headers])
            site.log.clear()
    assert asked[1] == []  # the pages' graph was never stored: fetched whole
    assert "/links.html" in asked[2] and "/b.html" in asked[2]  # answered 304
    assert graphs[0] == graphs[1]
    rels = {(row[1].removeprefix(site.url), row[3]) for row in graphs[1]}
    assert ("/c.html", "sponsored nofollow") in rels and ("/b.html", "ugc") in rels
    with sqlite3.connect(state) as db:  # the rows as stored (zlib-packed JSON)
        stored = [zlib.decompress(blob).decode() for (blob,) in
                  db.execute("SELECT edges FROM pages WHERE edges IS NOT NULL")]
    assert any("sponsored nofollow" in rows for rows in stored)
    assert not any(TOKEN in rows for rows in stored)  # the credential's link is left out
