"""``--section NAME=PATTERN`` and ``--sections auto``: which sitemap file set each URL
goes in.

Search Console reports indexing per submitted sitemap, so a site split into
sections (blog, products, docs) shows which part is not getting indexed. A URL
goes to the first section whose pattern matches its path and query (the pattern
language of ``--include``), else to ``other``. ``auto`` splits by the first path
segment under the sitemap's directory, when several segments each hold at least
1 % of the listed pages: a split along segments of a handful of pages each would
give Search Console nothing to compare. A page at the top whose name is a
section's (``/blog.html`` beside ``/blog/``) is that section's landing page and
goes with it.
"""

from __future__ import annotations

import re
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from crawler.cli.failure import EXIT_USAGE, Failure
from crawler.core.errors import ConfigError
from crawler.urls.filters import Pattern, compile_pattern, path_and_query
from sitemap_writer import SitemapError, check_section_name

OTHER = "other"  # the URLs no section claims
AUTO_SHARE = 0.01  # --sections auto: a segment's least share of the listed pages
_UNSAFE = re.compile(r"[^a-z0-9_-]+")


@dataclass(slots=True)
class Sections:
    """The sections of one run, in the order the index lists them (``other`` last)."""

    patterns: list[tuple[str, Pattern]] = field(default_factory=list)
    segments: dict[str, str] = field(default_factory=dict)  # --sections auto: segment → name
    root_path: str = "/"  # the path of the sitemap's directory (auto reads what follows)
    note: str = ""  # why auto did not split, said on the summary

    @property
    def split(self) -> bool:
        return bool(self.patterns or self.segments)

    @property
    def order(self) -> list[str]:
        names = [name for name, _pattern in self.patterns] or list(
            dict.fromkeys(self.segments.values()))
        return [*dict.fromkeys(names), OTHER]

    def section_of(self, url: str) -> str:
        if self.patterns:
            target = path_and_query(url)
            for name, pattern in self.patterns:
                if pattern.matches(target):
                    return name
            return OTHER
        return self.segments.get(_first_segment(url, self.root_path) or "", OTHER)

    def counts(self, urls: Iterable[str]) -> dict[str, int]:
        """URLs per section, in the index's order (sections with none left out)."""
        found = Counter(self.section_of(url) for url in urls)
        return {name: found[name] for name in self.order if found[name]}


def parse_sections(given: Iterable[str], mode: str | None) -> Sections | None:
    """The options, checked before any request; None when the sitemap is one set."""
    given = list(given)
    if mode == "auto" and given:
        raise Failure("--section and --sections auto: choose the sections one way",
                      EXIT_USAGE)
    if mode == "auto":
        return Sections()
    if not given:
        return None
    sections = Sections()
    for value in given:
        name, equals, text = value.partition("=")
        name = name.strip()
        if not equals:
            raise Failure(f"--section {value!r} must be NAME=PATTERN, such as "
                          "'blog=/blog/*'", EXIT_USAGE)
        try:
            check_section_name(name)
            pattern = compile_pattern(text, "--section")
        except (SitemapError, ConfigError) as exc:
            raise Failure(f"--section: {exc}", EXIT_USAGE) from None
        sections.patterns.append((name, pattern))
    return sections


def choose_auto(sections: Sections, urls: Callable[[], Iterable[str]], root: str) -> None:
    """Find ``auto``'s sections in the listed URLs (one pass): the first path segments
    under ``root`` that each hold at least 1 % of them, when there are two or more."""
    sections.root_path = urllib.parse.urlsplit(root).path or "/"
    tops: Counter[str] = Counter()
    total = 0
    for url in urls():
        total += 1
        segment = _first_segment(url, sections.root_path, leaves=False)
        if segment is not None:
            tops[segment] += 1
    # "1 %" as a person reads a share rounded to a tenth of a percent: of 10,000
    # pages, a folder of 99 (0.99 %, shown 1.0 %) is a section like its neighbours of 100
    chosen = sorted((segment for segment, count in tops.items()
                     if round(100 * count / total, 1) >= 100 * AUTO_SHARE),
                    key=lambda segment: (-tops[segment], segment))
    if len(chosen) < 2:
        sections.note = (f"--sections auto: one sitemap; no two first path segments hold "
                         f"1 % of the {total:,} listed pages each")
        return
    taken = {OTHER}
    for segment in chosen:
        name = _safe_name(segment)
        if name in taken:
            name = next(f"{name[:36]}-{n}" for n in range(2, 1000) if f"{name[:36]}-{n}"
                        not in taken)
        taken.add(name)
        sections.segments[segment] = name


def _first_segment(url: str, root_path: str, leaves: bool = True) -> str | None:
    """The first path segment after ``root_path``; a page at the top (``/blog.html``)
    counts as its name's segment when ``leaves`` (so it joins a section ``blog``)."""
    path = urllib.parse.urlsplit(url).path
    if not path.startswith(root_path):
        return None
    rest = path[len(root_path):]
    segment, slash, _after = rest.partition("/")
    if slash:
        return segment or None
    if not leaves or not segment:
        return None
    return segment.partition(".")[0] or None


def _safe_name(segment: str) -> str:
    """A file-name-safe section name for a path segment (``Über Uns`` → ``ber-uns``)."""
    text = _UNSAFE.sub("-", urllib.parse.unquote(segment).lower()).strip("-_")[:40]
    if not text or not text[0].isalpha():
        text = ("s-" + text)[:40].rstrip("-_")
    return text
