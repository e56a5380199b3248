"""``sitemap.html``: the sitemaps as a page a person reads, with no XSLT.

Browsers are removing XSLT (Chrome deprecated it in 143 and turns it off in its
2026 releases; the WHATWG HTML standard dropped it), and from ``file://`` a
stylesheet is refused as another origin anyway; a gzipped shard is downloaded,
never shown. So the writer also writes plain HTML beside the sitemaps:

* ``sitemap.html``: when the run was, the sections with their counts, and each
  shard with its URLs and its own page (a site of one shard has its URLs here);
* one page a shard (``sitemap-00001.html``, ``sitemap-blog-00001.html``): each URL
  with its lastmod, and its images, alternates and videos where it has them.

Plain HTML and CSS that read the same from ``file://`` and over HTTP in every
browser; a filter box needs JavaScript and is the only thing that does. Rows are
written to a file in the staging directory as the entries stream past, and cut
into pages by the shards' counts: no entry is held. A shard's page holds no time,
so an unchanged shard keeps its page byte for byte too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO

from sitemap_writer.entry import SitemapEntry
from sitemap_writer.news import NEWS_NAME, NewsEntry
from sitemap_writer.publish import VIEW_FILE
from sitemap_writer.serialize import escape
from sitemap_writer.shards import Shard

__all__ = ["VIEW_FILE", "VIEW_NAME", "HtmlView", "page_name"]

VIEW_NAME = "sitemap.html"
NEWS_PAGE = "sitemap-news.html"
_ROWS = ".rows-{section}.html"


def page_name(shard_name: str) -> str:
    """``sitemap-blog-00001.xml.gz`` → ``sitemap-blog-00001.html``."""
    return shard_name.split(".", 1)[0] + ".html"


@dataclass(slots=True)
class HtmlView:
    """The view's rows, written as the entries pass; its pages, once the shards close."""

    stage: Path
    files: dict[str, IO[str]] = field(default_factory=dict)

    def add(self, section: str | None, entry: SitemapEntry) -> None:
        key = section or ""
        handle = self.files.get(key)
        if handle is None:
            path = self.stage / _ROWS.format(section=key or "all")
            # a lone surrogate a page carried (the XML escapes it) must not end the write
            handle = self.files[key] = path.open("w", encoding="utf-8", errors="replace")
        handle.write(_row(entry))

    def write(self, shards: list[Shard], sections: dict[str, int], made: datetime,
              index_url: str, news: Sequence[NewsEntry] = ()) -> list[str]:
        """The shard pages, the News sitemap's page and ``sitemap.html`` in the staging
        directory; their names."""
        for handle in self.files.values():
            handle.close()
        rows = {key: (self.stage / _ROWS.format(section=key or "all")).open(encoding="utf-8")
                for key in self.files}
        names: list[str] = []
        single = len(shards) == 1
        inline = ""
        try:
            for shard in shards:
                section = _section_of(shard.name)
                lines = "".join(_take(rows[section], shard.count))
                if single:
                    inline = lines
                    continue
                name = page_name(shard.name)
                (self.stage / name).write_text(_shard_page(shard, lines), encoding="utf-8",
                                               errors="replace")
                names.append(name)
        finally:
            for handle in rows.values():
                handle.close()
        if news:
            (self.stage / NEWS_PAGE).write_text(_news_page(news), encoding="utf-8",
                                                errors="replace")
            names.append(NEWS_PAGE)
        (self.stage / VIEW_NAME).write_text(
            _index_page(shards, sections, made, index_url, inline)
            .replace(_FOOT, _news_link(news) + _FOOT), encoding="utf-8", errors="replace")
        return [*names, VIEW_NAME]


def _news_page(news: Sequence[NewsEntry]) -> str:
    """The News sitemap's articles: each with its headline and when it was published."""
    rows = "".join(
        f'<tr><td><a href="{_e(entry.loc)}">{_e(entry.loc)}</a></td>'
        f'<td>{entry.published.strftime("%Y-%m-%d %H:%M")}</td><td>{_e(entry.title)}</td></tr>\n'
        for entry in news)
    return (_head(f"{NEWS_NAME}: {len(news):,} articles") + f'<p><a href="{VIEW_NAME}">All '
            f'sitemaps</a> · <a href="{NEWS_NAME}">{NEWS_NAME}</a></p><h1>News sitemap '
            f"<small>{len(news):,} articles of {_e(news[0].publication)}</small></h1>"
            '<input id="filter" type="search" placeholder="Filter articles" hidden>'
            '<table id="urls"><thead><tr><th>URL</th><th>Published (UTC)</th><th>Headline</th>'
            f"</tr></thead><tbody>\n{rows}</tbody></table>" + _FOOT)


def _news_link(news: Sequence[NewsEntry]) -> str:
    if not news:
        return ""
    return (f'<h2>News</h2><p><a href="{NEWS_PAGE}">{len(news):,} articles</a> in '
            f'<a href="{NEWS_NAME}">{NEWS_NAME}</a>.</p>')


def _section_of(shard_name: str) -> str:
    middle = shard_name[len("sitemap-"):].split(".", 1)[0]
    return middle.rsplit("-", 1)[0] if "-" in middle else ""


def _take(handle: IO[str], count: int) -> Iterator[str]:
    for _ in range(count):
        line = handle.readline()
        if not line:
            return
        yield line


def _row(entry: SitemapEntry) -> str:
    """One URL's row: written for every URL of a site, so the plain case (a URL with
    nothing to escape, no images, alternates or videos) takes about 1.4 µs, not 2.5."""
    lastmod = entry.lastmod_utc
    # "2025-01-01 07:28", as strftime("%Y-%m-%d %H:%M") writes it, in a third the time
    when = lastmod.isoformat(" ", "minutes")[:16] if lastmod is not None else ""
    loc = escape(entry.loc)
    extras = ("; ".join(_extras(entry)) if entry.images or entry.alternates or entry.videos
              else "")
    return f'<tr><td><a href="{loc}">{loc}</a></td><td>{when}</td><td>{extras}</td></tr>\n'


def _extras(entry: SitemapEntry) -> list[str]:
    extras = []
    if entry.images:
        extras.append(f"{len(entry.images):,} image{'s' if len(entry.images) != 1 else ''}")
    if entry.alternates:
        extras.append("alternates: " + ", ".join(
            f'<a href="{_e(url)}" hreflang="{_e(code)}">{_e(code)}</a>'
            for code, url in entry.alternates))
    if entry.videos:
        extras.append(", ".join(f"video: {_e(video.title)}" for video in entry.videos))
    return extras


def _table(rows: str) -> str:
    return ('<input id="filter" type="search" placeholder="Filter URLs" hidden>'
            '<table id="urls"><thead><tr><th>URL</th><th>Last modified (UTC)</th>'
            f"<th>Also</th></tr></thead><tbody>\n{rows}</tbody></table>")


def _shard_page(shard: Shard, rows: str) -> str:
    title = f"{shard.name}: {shard.count:,} URLs"
    return (_head(title) + f'<p><a href="{VIEW_NAME}">All sitemaps</a> · '
            f'<a href="{_e(shard.name)}">{_e(shard.name)}</a> (the file search engines '
            f"read)</p><h1>{_e(shard.name)} <small>{shard.count:,} URLs</small></h1>"
            + _table(rows) + _FOOT)


def _index_page(shards: list[Shard], sections: dict[str, int], made: datetime,
                index_url: str, inline: str) -> str:
    total = sum(shard.count for shard in shards)
    parts = [_head(f"Sitemap: {total:,} URLs"),
             f"<h1>Sitemap <small>{total:,} URLs</small></h1>",
             f'<p>Written {made.strftime("%Y-%m-%d %H:%M")} UTC. The index search engines '
             f'read: <a href="{_e(index_url)}">{_e(index_url)}</a>.</p>']
    if sections:
        parts.append("<h2>Sections</h2><table><thead><tr><th>Section</th><th>URLs</th>"
                     "</tr></thead><tbody>" + "".join(
                         f"<tr><td>{_e(name)}</td><td>{count:,}</td></tr>"
                         for name, count in sections.items()) + "</tbody></table>")
    if inline:
        parts.append(_table(inline))
    else:
        parts.append("<h2>Sitemap files</h2><table><thead><tr><th>File</th><th>URLs</th>"
                     "<th>Newest lastmod</th><th>Its URLs</th></tr></thead><tbody>" + "".join(
                         f'<tr><td><a href="{_e(shard.name)}">{_e(shard.name)}</a></td>'
                         f"<td>{shard.count:,}</td><td>"
                         f'{shard.newest.strftime("%Y-%m-%d") if shard.newest else ""}</td>'
                         f'<td><a href="{_e(page_name(shard.name))}">'
                         f"{_e(page_name(shard.name))}</a></td></tr>" for shard in shards)
                     + "</tbody></table>")
    return "".join(parts) + _FOOT


def _e(value: object) -> str:
    """Text for an element or a quoted attribute: the sitemaps' own escaping (its
    five entities are HTML's too), which also asks first whether there is any."""
    return escape(str(value))


def _head(title: str) -> str:
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>")


_STYLE = ("body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:80rem;"
          "padding:0 1rem;color:#1f2328}h1{font-size:1.35rem}h2{font-size:1.1rem}"
          "small{color:#59636e;font-weight:normal}a{color:#0969da;word-break:break-all}"
          "table{border-collapse:collapse;width:100%;margin-top:.5rem}th,td{text-align:left;"
          "padding:.3rem .5rem;border-bottom:1px solid #d1d9e0;vertical-align:top}"
          "th{background:#f6f8fa}#filter{width:100%;padding:.4rem;font:inherit;"
          "margin-top:.5rem}")
# the filter box is shown only where a script can make it work
_FOOT = """
<script>
const box = document.getElementById("filter");
if (box) {
  box.hidden = false;
  box.addEventListener("input", () => {
    const needle = box.value.toLowerCase();
    for (const row of document.querySelectorAll("#urls tbody tr"))
      row.hidden = !row.textContent.toLowerCase().includes(needle);
  });
}
</script></body></html>
"""
