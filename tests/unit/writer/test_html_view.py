"""The HTML view the writer writes beside the sitemaps (sitemap_writer.html_view)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sitemap_writer import SitemapEntry, Video, write_sitemaps


def test_each_url_with_its_lastmod_images_alternates_and_videos(tmp_path: Path) -> None:
    video = Video("https://x.test/t.jpg", "Kettle \ud800 film", "How it is made",
                  content="https://x.test/k.mp4")
    entries = [
        SitemapEntry("https://x.test/a", datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
                     images=("https://x.test/a.jpg", "https://x.test/b.jpg")),
        SitemapEntry("https://x.test/b?x=1&y=2",
                     alternates=(("de", "https://x.test/de/b"), ("en", "https://x.test/b"))),
        SitemapEntry("https://x.test/c", videos=(video,)),
    ]
    written = write_sitemaps(entries, out_dir=tmp_path, base_url="https://x.test/",
                             images=True, alternates=True, videos=True, html=True)
    assert written.url_count == 3
    page = (tmp_path / "sitemap.html").read_text()  # one file: its URLs are here
    assert "<td>2026-01-02 03:04</td>" in page and "2 images" in page
    assert '<a href="https://x.test/b?x=1&amp;y=2">' in page
    assert '<a href="https://x.test/de/b" hreflang="de">de</a>' in page
    # a lone surrogate, replaced as the sitemaps replace it: the page is written
    assert "video: Kettle \ufffd film" in page
    assert "Written 20" in page and "https://x.test/sitemap_index.xml" in page


def test_the_library_writes_no_view_unless_asked(tmp_path: Path) -> None:
    write_sitemaps([SitemapEntry("https://x.test/a")], out_dir=tmp_path,
                   base_url="https://x.test/")
    assert not list(tmp_path.glob("*.html"))
