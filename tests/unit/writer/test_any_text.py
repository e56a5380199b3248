"""Every XML file the tool writes is well-formed, whatever text a page gave it.

A page decides the text of video titles and descriptions, news titles and the
findings a JUnit report names. XML 1.0 forbids some characters outright (C0
controls but tab and line breaks, lone surrogates, U+FFFE, U+FFFF), and a lone
surrogate cannot even be encoded as UTF-8. Hypothesis puts arbitrary Unicode into
every free-text field of every kind of entry; each file is then parsed back with
lxml and validated against its schema.
"""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

from conftest import Schemas
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from crawler.audit.names import FINDINGS
from crawler.cli.junit_report import write_junit
from sitemap_writer import SitemapEntry, Video, write_sitemaps
from sitemap_writer.news import NewsEntry
from sitemap_writer.serialize import xml_text

# anything at all, the troublesome characters made likely
HOSTILE = st.lists(st.one_of(
    st.characters(codec=None, categories=None),
    st.sampled_from(["\x00", "\x01", "\x1b", "\x0b", "\x7f", "\x85", "\x9f", "\ud800",
                     "\udfff", "\ufffe", "\uffff", "]]>", "&", "<", "\U0001f600", "\r"])),
    min_size=1, max_size=40).map("".join)
BASE = "https://example.com/"


def _printable(text: str) -> str:
    """What the entries' own checks need (a title that is not only white space)."""
    return text if text.strip() else text + "x"


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=HOSTILE, description=HOSTILE, news_title=HOSTILE, publication=HOSTILE)
def test_every_file_parses_and_validates(tmp_path_factory: object, title: str,
                                         description: str, news_title: str,
                                         publication: str) -> None:
    out = Path(tmp_path_factory.mktemp("out"))  # type: ignore[attr-defined]
    video = Video(thumbnail=BASE + "t.jpg", title=_printable(title)[:100],
                  description=_printable(description)[:2048], content=BASE + "v.mp4")
    entries = [SitemapEntry(BASE + "a", images=(BASE + "i.png",), videos=(video,),
                            alternates=(("en", BASE + "a"), ("de", BASE + "b"))),
               SitemapEntry(BASE + "b", alternates=(("en", BASE + "a"), ("de", BASE + "b")))]
    news = [NewsEntry(BASE + "a", _printable(publication), "en", datetime.now(UTC),
                      _printable(news_title))]
    write_sitemaps(entries, out_dir=out, base_url=BASE, alternates=True, images=True,
                   videos=True, news=news)
    shard = etree.fromstring(gzip.decompress((out / "sitemap-00001.xml.gz").read_bytes()))
    Schemas("sitemap-video-set").assertValid(shard)
    Schemas("siteindex").assertValid(etree.parse(str(out / "sitemap_index.xml")))
    Schemas("sitemap-news-set").assertValid(etree.parse(str(out / "sitemap-news.xml")))
    shown = shard.find(".//{http://www.google.com/schemas/sitemap-video/1.1}title").text
    # read back as written, but for XML's own line-end normalisation (CR to LF)
    expected = xml_text(_printable(title)[:100], escaped=False)
    assert shown == expected.replace("\r\n", "\n").replace("\r", "\n")

    report = out / "audit.junit.xml"
    found = {name: {"count": 0, "items": []} for name in FINDINGS}
    found["titles"] = {"count": 1, "items": [{"title": title, "problem": description}]}
    found["broken-links"] = {"count": 1, "items": [{"url": BASE + title, "status": 404}]}
    document = {"findings": found, "start_url": BASE + publication,
                "totals": {"elapsed_seconds": 1.0}}
    with report.open("w", encoding="utf-8", errors="strict") as stream:
        write_junit(stream, document, ["titles"])
    Schemas("junit").assertValid(etree.parse(str(report)))


def test_forbidden_characters_are_replaced_and_the_rest_kept() -> None:
    assert xml_text("a\x00b\x1bc\ud800d\ufffe\uffff", escaped=False) == (
        "a\ufffdb\ufffdc\ufffdd\ufffd\ufffd")
    assert xml_text("tab\tline\nret\r é \U0001f600 \x85") == (
        "tab\tline\nret\r é \U0001f600 \x85")
    assert xml_text("<a href='x'>&</a>") == "&lt;a href=&apos;x&apos;&gt;&amp;&lt;/a&gt;"
