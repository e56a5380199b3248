"""From the crawl's listed records to the writer's entries, and the summary line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

from crawler.cli.failure import EXIT_USAGE, Failure
from crawler.cli.progress import CrawlDisplay
from crawler.config.hints import Hints
from crawler.core.counts import external_words
from crawler.core.records import PageRecord
from crawler.engine.result import CrawlResult
from crawler.urls.normalize import normalize_url
from crawler.urls.scope import Scope
from sitemap_writer import (
    MAX_IMAGES_PER_URL,
    MAX_LOC_LENGTH,
    NEWS_LANGUAGE,
    InvalidEntry,
    NewsEntry,
    SitemapEntry,
    SitemapError,
    Video,
    WriteResult,
    is_url_shard,
    normalize_base_url,
)

NEWS_WINDOW = timedelta(days=2)  # Google News: "articles published in the last two days"
CLOCK_SKEW = timedelta(minutes=10)  # a publication time a little ahead of ours still counts


def base_url_for(base_url: str | None, scope: Scope) -> str:
    if base_url is None:
        return scope.root[: scope.root.rfind("/") + 1]
    normalized = normalize_url(base_url)
    try:
        if normalized is None:
            raise SitemapError(f"--base-url {base_url!r} must be an absolute http(s) URL")
        base = normalize_base_url(normalized)
    except SitemapError as exc:
        raise Failure(str(exc), EXIT_USAGE) from None
    if not scope.root.startswith(base):
        raise Failure(
            f"--base-url {base} cannot list the crawled URLs under {scope.root}: a sitemap may "
            "only list URLs under the directory it is served from", EXIT_USAGE)
    return base




def sitemap_entries(records: Iterable[PageRecord],
                    alternates: dict[str, tuple[tuple[str, str], ...]],
                    hints: Hints) -> Iterator[SitemapEntry]:
    for record in records:
        try:
            yield SitemapEntry(record.url, record.lastmod,
                               changefreq=hints.changefreq(record),
                               priority=hints.priority(record),
                               alternates=alternates.get(record.url, ()),
                               images=valid_images(record.images or ()),
                               videos=valid_videos(record.videos))
        except InvalidEntry:
            continue  # refused rather than published; the report still lists the page


def namespaces(with_alternates: Iterable[SitemapEntry],
               with_media: Iterable[SitemapEntry]) -> tuple[bool, bool, bool]:
    """Whether any entry carries alternates, images or videos: the namespaces every
    shard declares. Each reading stops once it has its answer, so a caller may hand
    over only the entries that can carry them (a spilled crawl's few)."""
    has_alternates = any(entry.alternates for entry in with_alternates)
    has_images = has_videos = False
    for entry in with_media:
        has_images = has_images or bool(entry.images)
        has_videos = has_videos or bool(entry.videos)
        if has_images and has_videos:
            break
    return has_alternates, has_images, has_videos


def valid_videos(videos: tuple[tuple[object, ...], ...] | None) -> tuple[Video, ...]:
    """The videos a sitemap may carry: each one the writer accepts (the crawl left out
    those missing a required field and said so; this drops what the writer refuses)."""
    kept = []
    for thumbnail, title, description, content, player, duration, published in videos or ():
        try:
            kept.append(Video(thumbnail, title, description, content,  # type: ignore[arg-type]
                              player=player, duration=duration,  # type: ignore[arg-type]
                              published=datetime.fromisoformat(published)  # type: ignore[arg-type]
                              if published else None))
        except (InvalidEntry, TypeError, ValueError):
            continue
    return tuple(kept)


def news_entries(records: Iterable[PageRecord], publication: tuple[str, str],
                 now: datetime) -> list[NewsEntry]:
    """The listed articles published in the last two days (Google News reads no
    older ones), newest first; an article older than that leaves the file."""
    name, language = publication
    found = []
    for record in records:
        published = record.published
        if published is None or not now - NEWS_WINDOW <= published <= now + CLOCK_SKEW:
            continue
        try:
            found.append(NewsEntry(record.url, name, language, published,
                                   record.headline or record.title or ""))
        except InvalidEntry:
            continue
    return found


def parse_news(value: str | None) -> tuple[str, str] | None:
    """--news NAME=LANG: the publication's name as Google News shows it, and its
    language; refused with one line before any request."""
    if value is None:
        return None
    name, equals, language = value.rpartition("=")
    if not equals or not name.strip() or not NEWS_LANGUAGE.fullmatch(language.strip()):
        raise Failure(f"--news {value!r} must be NAME=LANG: the publication's name and an "
                      "ISO 639 language code (en, fr, zh-cn, zh-tw)", EXIT_USAGE)
    return name.strip(), language.strip()


def valid_images(images: tuple[str, ...]) -> tuple[str, ...]:
    """The images a sitemap may carry (an image URL too long for it is left out)."""
    return tuple(image for image in images[:MAX_IMAGES_PER_URL]
                 if len(image) <= MAX_LOC_LENGTH)




def seed_lines(result: CrawlResult) -> list[str]:
    """What became of --urls, --from-sitemap and --add-urls, a line each."""
    lines = []
    for name, counts in result.seeds.items():
        option = "--" + name.replace("_", "-")
        line = f"{option}: {counts.given:,} URL(s)"
        if counts.source is not None:
            line += f" (sitemaps found by {counts.source})"
        if counts.judging:
            line += f", {counts.listed:,} listed, {counts.refused:,} refused"
            if (others := counts.given - counts.listed - counts.refused) > 0:
                line += f", {others:,} already reached by links or skipped"
            line += "".join(f"; {item['reason']}: {item['url']}"
                            for item in counts.refused_examples[:3])
        if counts.invalid:
            line += (f"; {counts.invalid:,} line(s) not an absolute http(s) URL, skipped "
                     f"({counts.invalid_examples[0]})")
        lines.append(line)
    return lines


def print_summary(display: CrawlDisplay, result: CrawlResult, written: WriteResult,
             elapsed: float, out_dir: Path) -> None:
    stats = result.stats
    for line in seed_lines(result):
        display.console.print(line, markup=False)
    if stats.videos_left_out:
        display.console.print(f"{stats.videos_left_out:,} video(s) left out of the sitemap: a "
                              "thumbnail, title, description or file missing (--report: "
                              "incomplete-videos)", markup=False)
    asked, used = result.crawl_delay_asked, result.crawl_delay_used
    if asked is not None and used is not None and used < asked:
        display.console.print(f"robots.txt Crawl-delay {asked:g} s capped at {used:g} s "
                              "(--max-crawl-delay)", markup=False)
    if result.workers_added_at is not None:
        display.console.print(
            f"worker processes added at page {result.workers_added_at:,}: the crawl was large "
            "and CPU-bound (--workers auto)", markup=False)
    rate = stats.fetched / elapsed if elapsed > 0 else 0.0
    skipped, estimated = skipped_counts(result)
    changed = [name for name in written.published.changed if is_url_shard(name)]
    display.console.print(
        f"crawled {stats.fetched:,} pages in {elapsed:.1f}s ({rate:,.0f} pages/s, "
        f"{stats.not_modified:,} not modified): {written.url_count:,} listed, "
        f"{stats.fetched - written.url_count:,} excluded, {stats.errors:,} errors, "
        f"{sum(skipped.values()):,} skipped; {len(changed):,} of {len(written.shards):,} "
        f"sitemap shard(s) changed in {out_dir}",
        markup=False,
    )
    if result.external_totals["urls"]:
        display.console.print(f"links out: {external_words(result.external_totals)}",
                              markup=False)
    if skipped:
        display.console.print(f"skipped: never fetched, {skipped_words(skipped, estimated)}",
                              markup=False)
    if written.sections:
        display.console.print("sections: " + ", ".join(
            f"{name} {count:,}" for name, count in written.sections.items()), markup=False)


def skipped_counts(result: CrawlResult) -> tuple[dict[str, int], set[str]]:
    """URLs never fetched, by reason: the links out of scope counted distinct (the
    report keeps 1,000 of each reason as rows; past them the count is an estimate,
    whose reasons are returned), the others as they were met."""
    counts = dict(result.stats.skipped_by)
    estimated = set()
    for reason, outside in result.outside.items():
        counts[reason] = int(outside["urls"])
        if outside["estimated"]:
            estimated.add(reason)
    return {reason: count for reason, count in counts.items() if count}, estimated


# what a skipped URL's reason means, in the words of the crawl's summary
_SKIPPED = {"external": "links to other sites", "other-host-same-site":
            "links to other hosts of the site", "out-of-scope": "outside --prefix or the "
            "scheme and port", "robots-disallowed": "disallowed by robots.txt",
            "max-depth": "past --max-depth", "max-pages": "past --max-pages",
            "excluded": "matched --exclude", "not-included": "not matched by --include"}


def _one(words: str, count: int) -> str:
    """"links to other sites" as one reads it after 1."""
    return words.replace("links ", "link ", 1) if count == 1 else words


def skipped_words(counts: dict[str, int], about: set[str] | frozenset[str] = frozenset()
                  ) -> str:
    """``{"external": 980, "robots-disallowed": 20}`` → "980 links to other sites
    (external), 20 disallowed by robots.txt (robots-disallowed)": the reasons, most
    first, each with the report's name for it."""
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(("about " if reason in about else "")
                     + (f"{count:,} {_one(_SKIPPED[reason], count)} ({reason})"
                        if reason in _SKIPPED else f"{count:,} {reason}")
                     for reason, count in ordered)
