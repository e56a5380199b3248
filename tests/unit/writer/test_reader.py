"""Reading a published sitemap: every hostile or broken file is a named problem, never a raise."""

from __future__ import annotations

import gzip
from pathlib import Path

from sitemap_writer import MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, read_sitemap, write_sitemaps
from sitemap_writer.entry import SitemapEntry

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def _urlset(*urls: str, lastmod: str | None = None) -> bytes:
    body = "".join(f"<url><loc> {url} </loc>"
                   + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "") + "</url>"
                   for url in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{NS}">{body}</urlset>'.encode()


def test_reads_what_our_writer_writes(tmp_path: Path) -> None:
    from datetime import UTC, datetime
    entries = [SitemapEntry(f"https://e.test/{i}", datetime(2024, 1, 2, tzinfo=UTC))
               for i in range(3)]
    write_sitemaps(entries, out_dir=tmp_path, base_url="https://e.test/", compressed=True)
    index = read_sitemap((tmp_path / "sitemap_index.xml").read_bytes())
    assert index.kind == "sitemapindex" and not index.problems
    shard = read_sitemap((tmp_path / index.entries[0][0].rsplit("/", 1)[1]).read_bytes())
    assert shard.kind == "urlset" and not shard.problems
    assert [loc for loc, _ in shard.entries] == [f"https://e.test/{i}" for i in range(3)]
    assert shard.entries[0][1] is not None and shard.entries[0][1].startswith("2024-01-02")


def test_gzip_text_and_lastmod_as_written() -> None:
    parsed = read_sitemap(gzip.compress(_urlset("https://e.test/a", lastmod="yesterday")))
    assert parsed.kind == "urlset"
    assert parsed.entries == [("https://e.test/a", "yesterday")]
    text = read_sitemap(b"\xef\xbb\xbfhttps://e.test/a\r\n\r\nhttps://e.test/b\n")
    assert text.kind == "text" and [loc for loc, _ in text.entries] == [
        "https://e.test/a", "https://e.test/b"]


def test_broken_and_hostile_files_are_named_problems() -> None:
    assert read_sitemap(b"<urlset xmlns='" + NS.encode() + b"'><url><loc>x")\
        .problems[0].startswith("invalid-xml")
    assert read_sitemap(b"<!DOCTYPE html><html><body>Not found</body></html>").problems == [
        "not-a-sitemap: an HTML page, not a sitemap"]
    assert read_sitemap(b"<?xml version='1.0'?><opml><body/></opml>").problems[0].startswith(
        "not-a-sitemap: the root element is <opml>")
    empty_feed = read_sitemap(b"<?xml version='1.0'?><rss><channel/></rss>")
    assert (empty_feed.kind, empty_feed.entries) == ("rss", [])
    assert read_sitemap(b"Page not found").problems[0].startswith("not-a-sitemap")
    assert read_sitemap(b"\x1f\x8b\x08garbage").problems[0].startswith("invalid-gzip")
    assert read_sitemap(gzip.compress(_urlset("https://e.test/a"))[:-12]).problems[0]\
        .startswith("invalid-gzip")
    laughs = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><urlset><url><loc>&lol2;</loc></url>'
              b"</urlset>")
    parsed = read_sitemap(laughs)
    assert parsed.entries == [] and parsed.problems[0].startswith("invalid-xml: a DTD")
    wrong = read_sitemap(b"<urlset><url><loc>https://e.test/</loc></url></urlset>")
    assert wrong.entries == [("https://e.test/", None)]
    assert wrong.problems[0].startswith("wrong-namespace")
    empty = read_sitemap(f"<urlset xmlns='{NS}'><url><lastmod>2024</lastmod></url></urlset>"
                         .encode())
    assert empty.problems == ["missing-loc: 1 <url> element(s) without a <loc>"]


def test_the_protocols_limits() -> None:
    many = _urlset(*(f"https://e.test/{i}" for i in range(MAX_URLS_PER_SITEMAP + 1)))
    parsed = read_sitemap(many)
    assert len(parsed.entries) == MAX_URLS_PER_SITEMAP
    assert parsed.problems[0].startswith("too-many-urls")
    padded = _urlset("https://e.test/a").replace(b"<url>", b" " * MAX_SITEMAP_BYTES + b"<url>")
    assert read_sitemap(padded).problems[0].startswith("too-large")
    bomb = gzip.compress(padded, 9)
    assert len(bomb) < 100_000
    parsed = read_sitemap(bomb)
    assert parsed.entries == [] and parsed.problems[0].startswith("too-large")


def test_rss_and_atom_feeds_give_their_links_and_dates() -> None:
    rss = read_sitemap(b'<?xml version="1.0"?><rss version="2.0"><channel><link>https://e.com/'
                       b'</link><item><link> https://e.com/a </link><pubDate>Tue, 24 Nov 2026 '
                       b'08:00:00 +0100</pubDate></item><item><title>no link</title></item>'
                       b'<item><link>https://e.com/b</link><pubDate>not a date</pubDate></item>'
                       b'</channel></rss>')
    assert (rss.kind, rss.entries, rss.problems) == (
        "rss", [("https://e.com/a", "2026-11-24T07:00:00Z"), ("https://e.com/b", None)], [])
    atom = read_sitemap(b'<feed xmlns="http://www.w3.org/2005/Atom"><link href="https://e.com/"/>'
                        b'<entry><link rel="enclosure" href="https://e.com/x.mp3"/>'
                        b'<link href="https://e.com/c"/><updated>2026-11-23T10:00:00Z</updated>'
                        b'</entry></feed>')
    assert (atom.kind, atom.entries) == ("atom", [("https://e.com/c", "2026-11-23T10:00:00Z")])
    old = read_sitemap(b'<feed xmlns="http://purl.org/atom/ns#"><entry><link rel="alternate" '
                       b'href="https://e.com/d"/><modified>2005-01-01T00:00:00Z</modified>'
                       b'</entry></feed>')
    assert (old.kind, old.entries) == ("atom", [("https://e.com/d", "2005-01-01T00:00:00Z")])
    broken = read_sitemap(b"<rss><channel><item><link>https://e.com/a</link></item>")
    assert broken.kind is None and broken.entries == []
    assert broken.problems[0].startswith("invalid-xml")


def test_deprecated_image_and_video_tags_are_counted() -> None:
    found = read_sitemap(
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        b'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
        b'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"><url>'
        b"<loc>https://e.com/</loc><image:image><image:loc>https://e.com/i.jpg</image:loc>"
        b"<image:geo_location>Oslo</image:geo_location></image:image><video:video>"
        b"<video:player_loc autoplay='ap=1'>https://e.com/p</video:player_loc>"
        b"<video:price currency='EUR'>1</video:price><video:tvshow/><video:gallery_loc>"
        b"https://e.com/g</video:gallery_loc></video:video></url></urlset>")
    assert found.deprecated == {"image:geo_location": 1, "video:player_loc@autoplay": 1,
                                "video:price": 1, "video:tvshow": 1, "video:gallery_loc": 1}
    assert found.entries == [("https://e.com/", None)]
