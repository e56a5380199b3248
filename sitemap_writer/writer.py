"""``write_sitemaps``: entries in, a published set of sitemap files out."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sitemap_writer.entry import MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP, SitemapEntry
from sitemap_writer.errors import InvalidEntry, OutputError, SitemapError
from sitemap_writer.index import INDEX_NAME, index_bytes
from sitemap_writer.news import MAX_NEWS_URLS, NEWS_NAME, NewsEntry, newest_news, news_bytes
from sitemap_writer.publish import (
    SECTION_NAME,
    SHARD_FILE,
    STAGING_PREFIX,
    VIEW_FILE,
    Published,
    publish,
    staging,
    write_file,
)
from sitemap_writer.robots_txt import with_sitemap_line
from sitemap_writer.serialize import urlset_head
from sitemap_writer.shards import Shard, ShardWriter
from sitemap_writer.stylesheet import BUILTIN, BUILTIN_XSL, STYLESHEET_NAME

if TYPE_CHECKING:
    from sitemap_writer.html_view import HtmlView

ROBOTS_NAME = "robots.txt"


def writes_or_prunes(name: str) -> bool:
    """Is a file of this name in the output directory the writer's to replace or
    remove? Anything else kept there (a state file, a report) must not be."""
    return (name in (INDEX_NAME, ROBOTS_NAME, STYLESHEET_NAME)
            or SHARD_FILE.fullmatch(name) is not None or VIEW_FILE.fullmatch(name) is not None
            or name.startswith(STAGING_PREFIX))


def is_url_shard(name: str) -> bool:
    """A shard of ``<url>`` entries (any section's), not the News sitemap or the index."""
    return SHARD_FILE.fullmatch(name) is not None and name != NEWS_NAME


def shard_section(name: str) -> str:
    """The section a shard's file name says it belongs to; ``""`` for an unsectioned one."""
    found = SHARD_FILE.fullmatch(name)
    return (found.group("section") or "") if found is not None else ""


def check_section_name(name: str) -> str:
    """A section's name as its file names carry it, or :class:`SitemapError` saying why not."""
    if not SECTION_NAME.fullmatch(name):
        raise SitemapError(f"section name {name!r} must be 1 to 40 lowercase letters, digits, "
                           "'-' or '_', starting with a letter")
    return name


def normalize_base_url(base_url: str) -> str:
    """The public directory URL where the files are served, always ending in ``/``.

    ``https://example.com`` → ``https://example.com/``;
    ``https://example.com/maps/index.html`` → ``https://example.com/maps/``.
    """
    scheme, sep, rest = base_url.partition("://")
    if (
        scheme.lower() not in ("http", "https")
        or not sep
        or not rest
        or rest[0] in "/?#"
        or any(char in rest for char in "?# \t\r\n")
    ):
        raise SitemapError(f"base URL {base_url!r} must be an absolute http(s) URL")
    if "/" not in rest:
        rest += "/"
    return f"{scheme.lower()}://{rest[: rest.rfind('/') + 1]}"


@dataclass(slots=True)
class WriteResult:
    """What one ``write_sitemaps`` call produced."""

    index_url: str
    url_count: int
    shards: list[Shard] = field(default_factory=list)
    published: Published = field(default_factory=Published)
    # URLs per section, in the index's order (empty when the sitemap is not sectioned)
    sections: dict[str, int] = field(default_factory=dict)


def write_sitemaps(
    entries: Iterable[SitemapEntry],
    *,
    out_dir: str | Path,
    base_url: str,
    compressed: bool = True,
    max_urls: int = MAX_URLS_PER_SITEMAP,
    max_bytes: int = MAX_SITEMAP_BYTES,
    robots_txt: bytes | None = None,
    write_robots: bool = True,
    alternates: bool = False,
    images: bool = False,
    stylesheet: str | None = None,
    videos: bool = False,
    news: list[NewsEntry] | None = None,
    before_publish: Callable[[int], None] | None = None,
    section_of: Callable[[str], str] | None = None,
    sections: Sequence[str] = (),
    before_publish_sections: Callable[[dict[str, int]], None] | None = None,
    html: bool = False,
) -> WriteResult:
    """Write shards, the index and robots.txt into ``out_dir``, atomically.

    ``entries`` must be sorted by ``loc`` with no repeats (the writer streams and only
    checks it), each ``loc`` under ``base_url``'s directory, where files are served.
    ``alternates``, ``images`` and ``videos`` declare the hreflang, image and
    video namespaces on every shard (say so when any entry carries them).
    ``news``: the articles of the News sitemap, written as ``sitemap-news.xml`` and
    named in the index (an earlier one removed when none). ``stylesheet`` is an
    XSL URL for ``<?xml-stylesheet?>``, or ``"builtin"``: our own
    ``sitemap.xsl``, written beside the sitemaps and named relatively (a
    browser applies only a stylesheet of the sitemap's own origin).
    ``before_publish`` is called with the number of URLs once every shard is
    written and before anything is published: whatever it raises ends the
    write with the previous output untouched. A caller that judges the count
    (an empty or much shrunken sitemap) learns it from the one pass that
    writes, instead of reading its entries twice.

    ``section_of`` splits the sitemap: it names the section of each ``loc``, and
    each section is sharded on its own (``sitemap-NAME-00001.xml.gz``…, the same
    caps), so a section whose entries did not change keeps its files byte for byte.
    The index lists the sections in the order of ``sections``, then any other in
    name order. ``before_publish_sections`` is called like ``before_publish``, with
    the URLs of each section written. ``html``: ``sitemap.html`` too (:mod:`.html_view`).
    """
    _check_caps(max_urls, max_bytes)
    for name in sections:
        check_section_name(name)
    job = _Job(out=Path(out_dir), base=normalize_base_url(base_url), compressed=compressed,
               max_urls=max_urls, max_bytes=max_bytes, robots_txt=robots_txt,
               write_robots=write_robots,
               extras=_Extras(alternates, images, stylesheet, videos), news=news or [],
               before_publish=before_publish,
               split=_Split(section_of, tuple(sections), before_publish_sections),
               html=html)
    try:
        return _write(entries, job)
    except OSError as exc:  # a full disk, mostly: the staging directory is gone already
        raise OutputError(f"cannot write the sitemaps into {job.out}: "
                          f"{exc.strerror or exc}; previous output kept") from None


def _check_caps(max_urls: int, max_bytes: int) -> None:
    if not 1 <= max_urls <= MAX_URLS_PER_SITEMAP:
        raise SitemapError(f"max URLs per sitemap must be 1..50000 (got {max_urls})")
    if not 0 < max_bytes <= MAX_SITEMAP_BYTES:
        raise SitemapError(f"max bytes per sitemap must be 1..52428800 (got {max_bytes})")


@dataclass(frozen=True, slots=True)
class _Extras:
    alternates: bool
    images: bool
    stylesheet: str | None
    videos: bool = False

    @property
    def href(self) -> str | None:
        return STYLESHEET_NAME if self.stylesheet == BUILTIN else self.stylesheet


class _Split:
    """How the entries are split into sections (no ``section_of``: one set of shards)."""

    def __init__(self, section_of: Callable[[str], str] | None, order: tuple[str, ...],
                 judge: Callable[[dict[str, int]], None] | None) -> None:
        self.section_of = section_of
        self.order = order
        self.judge = judge
        self.writers: dict[str | None, ShardWriter] = {}

    def writer_for(self, loc: str, make: Callable[[str | None], ShardWriter]) -> ShardWriter:
        """The shard writer of a loc's section, each opened when its first entry comes."""
        name = check_section_name(self.section_of(loc)) if self.section_of else None
        found = self.writers.get(name)
        if found is None:
            found = self.writers[name] = make(name)
        return found

    def close(self) -> tuple[list[Shard], dict[str, int]]:
        """Every shard in the index's order, and the URLs of each section."""
        rank = {name: place for place, name in enumerate(self.order)}
        names = sorted(self.writers,
                       key=lambda name: (rank.get(name or "", len(rank)), name or ""))
        shards: list[Shard] = []
        counts: dict[str, int] = {}
        for name in names:
            written = self.writers[name].close()
            shards += written
            if name is not None:
                counts[name] = sum(shard.count for shard in written)
        return shards, counts


@dataclass(frozen=True, slots=True)
class _Job:
    """One write: where, under which base URL, with which caps and extras."""

    out: Path
    base: str
    compressed: bool
    max_urls: int
    max_bytes: int
    robots_txt: bytes | None
    write_robots: bool
    extras: _Extras
    news: list[NewsEntry]
    before_publish: Callable[[int], None] | None
    split: _Split
    html: bool = False


def _write(entries: Iterable[SitemapEntry], job: _Job) -> WriteResult:
    with staging(job.out) as stage:
        view = None
        if job.html:  # loaded only to write it
            from sitemap_writer.html_view import HtmlView

            view = HtmlView(stage)
        count = _write_shards(entries, job, stage, view)
        written, sections = job.split.close()
        if job.split.judge is not None and job.split.section_of is not None:
            job.split.judge(sections)
        if job.before_publish is not None:
            job.before_publish(count)
        if not written:
            raise SitemapError("no URL to write: a sitemap must hold at least one <url>")
        names = _write_beside(written, job, stage)
        if view is not None:  # before the index, which is published last
            names[-1:-1] = view.write(written, sections, datetime.now(UTC),
                                      job.base + INDEX_NAME, newest_news(job.news))
        published = publish(stage, job.out, names)
    return WriteResult(job.base + INDEX_NAME, count, written, published, sections)


def _write_shards(entries: Iterable[SitemapEntry], job: _Job, stage: Path,
                  view: HtmlView | None) -> int:
    """Stream the entries into their shards (one set a section); the URLs written."""
    extras, split = job.extras, job.split
    head = urlset_head(alternates=extras.alternates, images=extras.images,
                       videos=extras.videos, stylesheet=extras.href)

    def make(section: str | None) -> ShardWriter:
        return ShardWriter(stage, compressed=job.compressed, max_urls=job.max_urls,
                           max_bytes=job.max_bytes, head=head, section=section)
    single = None if split.section_of else split.writer_for("", make)
    previous = ""
    count = 0
    for entry in entries:
        if not entry.loc.startswith(job.base):
            raise InvalidEntry(f"{entry.loc} is not under the base URL {job.base}")
        if entry.loc <= previous:
            raise InvalidEntry(f"entries must be sorted and unique: {entry.loc}")
        previous = entry.loc
        writer = single or split.writer_for(entry.loc, make)
        writer.add(entry)
        if view is not None:
            view.add(writer.section, entry)
        count += 1
    return count


def _write_beside(written: list[Shard], job: _Job, stage: Path) -> list[str]:
    """The news sitemap, the index, the stylesheet and robots.txt beside the shards;
    every name to publish, the index last."""
    base, extras, news = job.base, job.extras, job.news
    named = list(written)
    names = [shard.name for shard in written]
    if news:
        for entry in news:
            if not entry.loc.startswith(base):
                raise InvalidEntry(f"{entry.loc} is not under the base URL {base}")
        write_file(stage / NEWS_NAME, news_bytes(news, extras.href))
        names.append(NEWS_NAME)
        named.append(Shard(NEWS_NAME, min(len(news), MAX_NEWS_URLS),
                           newest=max(entry.published for entry in news)))
    write_file(stage / INDEX_NAME, index_bytes(named, base, extras.href))
    if extras.stylesheet == BUILTIN:
        write_file(stage / STYLESHEET_NAME, BUILTIN_XSL)
        names.append(STYLESHEET_NAME)
    if job.write_robots:
        write_file(stage / ROBOTS_NAME, with_sitemap_line(job.robots_txt, base + INDEX_NAME))
        names.append(ROBOTS_NAME)
    names.append(INDEX_NAME)
    return names
