"""--news and --videos over a socket: the News sitemap and video entries, validated
against schemas written from Google's pages, and read back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import NS, Schemas, read_sitemaps, run_cli
from lxml import etree
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)
NEWS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
        "news": "http://www.google.com/schemas/sitemap-news/0.9",
        "video": "http://www.google.com/schemas/sitemap-video/1.1"}


def test_news_lists_the_articles_of_the_last_two_days(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("media") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--news", "Harbour Gazette=en")
    assert run.code == 0, run.stderr
    assert "News sitemap: 2 article(s) of the last two days in sitemap-news.xml" in run.stderr
    document = etree.parse(str(out / "sitemap-news.xml")).getroot()
    Schemas("sitemap-news-set").assertValid(document)
    entries = {url.findtext("sm:loc", namespaces=NEWS).removeprefix(site.url): url
               for url in document.findall("sm:url", NEWS)}
    assert set(entries) == {"/fresh.html", "/yesterday.html"}  # old.html: 72 hours old
    fresh = entries["/fresh.html"]
    assert fresh.findtext("news:news/news:publication/news:name", namespaces=NEWS) == \
        "Harbour Gazette"
    assert fresh.findtext("news:news/news:publication/news:language", namespaces=NEWS) == "en"
    assert fresh.findtext("news:news/news:title", namespaces=NEWS) == "Ferry back on the water"
    published = datetime.fromisoformat(
        fresh.findtext("news:news/news:publication_date", namespaces=NEWS))
    assert timedelta(hours=2) < datetime.now(UTC) - published < timedelta(hours=4)
    assert entries["/yesterday.html"].findtext("news:news/news:title", namespaces=NEWS) == \
        "Storm closes the harbour & the bay"
    index = etree.parse(str(out / "sitemap_index.xml")).getroot()
    assert site.url + "/sitemap-news.xml" in [loc.text for loc in index.iter(
        "{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    assert len(read_sitemaps(out, site.url + "/").locs) == 7  # the news file is not a shard
    # a run without --news removes the file it no longer writes
    with RunningServer("media") as site:
        again = run_cli("crawl", site.url + "/", "--out", str(out))
    assert again.code == 0, again.stderr
    assert not (out / "sitemap-news.xml").exists()


def test_videos_come_from_video_objects_and_video_elements(tmp_path: Path) -> None:
    out, report = tmp_path / "out", tmp_path / "r.json"
    with RunningServer("media") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--videos",
                      "--report", str(report), "--no-gzip")
    assert run.code == 0, run.stderr
    assert "2 video(s) left out of the sitemap" in run.stderr
    read_sitemaps(out, site.url + "/", videos=True)  # validated with the video schema
    shard = etree.parse(str(out / "sitemap-00001.xml")).getroot()
    videos = {url.findtext("sm:loc", namespaces=NS).removeprefix(site.url):
              url.findall("video:video", NEWS) for url in shard.findall("sm:url", NEWS)}
    watch = videos["/watch.html"]
    assert len(watch) == 1  # the <video> playing the VideoObject's file is the same video
    assert [child.tag.split("}")[1] for child in watch[0]] == [
        "thumbnail_loc", "title", "description", "content_loc", "player_loc", "duration",
        "publication_date"]
    assert watch[0].findtext("video:content_loc", namespaces=NEWS) == \
        site.url + "/media/pier.mp4"
    assert watch[0].findtext("video:duration", namespaces=NEWS) == "93"
    clip = videos["/clip.html"]  # a lone <video>: the page's title and description
    assert [clip[0].findtext(f"video:{name}", namespaces=NEWS) for name in
            ("thumbnail_loc", "title", "description", "content_loc")] == [
        site.url + "/media/gulls.jpg", "Gulls at dawn", "A minute of gulls.",
        site.url + "/media/gulls.webm"]
    assert videos["/broken-video.html"] == []
    found = json.loads(report.read_text())["findings"]["incomplete-videos"]["items"]
    assert found == [{"url": site.url + "/broken-video.html", "problems": [
        f"video {site.url}/media/a.mp4: no thumbnail, no description",
        f"video {site.url}/media/b.mp4: no title, no description"]}]


@pytest.mark.parametrize("value", ["Gazette", "Gazette=english", "=en"])
def test_a_bad_news_option_is_one_line_and_exit_2(tmp_path: Path, value: str) -> None:
    with RunningServer("media") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--news", value)
        assert site.log == []
    assert run.code == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert "must be NAME=LANG" in run.stderr


def test_sections_keep_videos_in_their_shards_and_news_in_one_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("media") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--videos", "--no-gzip",
                      "--news", "Harbour Gazette=en", "--section", "watch=/watch.html",
                      "--section", "news=/*y*.html")
    assert run.code == 0, run.stderr
    written = read_sitemaps(out, site.url + "/", videos=True)
    assert len(written.locs) == 7
    assert sorted(path.name for path in out.glob("sitemap-*.xml*")) == [
        "sitemap-news-00001.xml", "sitemap-news.xml", "sitemap-other-00001.xml",
        "sitemap-watch-00001.xml"]
    # the News sitemap has a page of its own in the HTML view, named by sitemap.html
    news = etree.parse(str(out / "sitemap-news.xml")).getroot()
    articles = [loc.text for loc in news.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]
    page = (out / "sitemap-news.html").read_text()
    assert articles and all(f'<a href="{loc}">' in page for loc in articles)
    assert 'href="sitemap-news.html"' in (out / "sitemap.html").read_text()
    watch = etree.parse(str(out / "sitemap-watch-00001.xml")).getroot()
    assert len(watch.findall("sm:url/video:video", NEWS)) == 1
    news = etree.parse(str(out / "sitemap-news.xml")).getroot()
    Schemas("sitemap-news-set").assertValid(news)
    assert len(news.findall("sm:url", NEWS)) == 2  # one file, whichever sections hold them
    index = (out / "sitemap_index.xml").read_text()
    assert index.count("<sitemap>") == 4
