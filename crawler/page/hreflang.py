"""Which language versions a sitemap may name for each listed page — pure.

Google reads hreflang alternates from a sitemap only when they hold together:
every version is a real, indexable page, names the others, and is named back.
A sitemap that repeats whatever the pages declare spreads their mistakes
(a version answering 404, a one-way link, ``en-UK``), so each declared
alternate is checked here and kept only when:

* its code is a language (ISO 639-1), optionally with a script (ISO 15924) and
  a region (ISO 3166-1 alpha-2, or a three-digit UN M.49 area such as
  ``419``), or ``x-default``;
* its URL is listed in this crawl's sitemap (200, indexable, canonical to
  itself), or, for a URL outside the crawl's scope, ``--hreflang-external``
  says to trust the page (it cannot be verified: it is never requested);
* the version it names names this page back (``x-default`` excepted).

Each page's own entry is included, as Google asks; when a page does not name
itself, the code the other versions give it is used. What is left out is
reported with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from crawler.core.records import PageRecord, Verdict

X_DEFAULT = "x-default"
_CODE = re.compile(r"([a-z]{2,3})(?:-([a-z]{4}))?(?:-([a-z]{2}|[0-9]{3}))?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class HreflangProblem:
    """One declared alternate left out of the sitemap, and why."""

    page: str
    hreflang: str
    href: str
    reason: str  # hreflang-invalid-code | -out-of-scope | -not-listed | -not-reciprocal


@cache
def _registries() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """ISO 639-1 languages, ISO 15924 scripts, ISO 3166-1 regions (from pycountry)."""
    import pycountry

    languages = frozenset(lang.alpha_2 for lang in pycountry.languages
                          if hasattr(lang, "alpha_2"))
    scripts = frozenset(script.alpha_4.lower() for script in pycountry.scripts)
    regions = frozenset(country.alpha_2.lower() for country in pycountry.countries)
    return languages, scripts, regions


def normalize_code(code: str) -> str | None:
    """``EN-gb`` → ``en-GB``; ``zh-hant-tw`` → ``zh-Hant-TW``; ``None`` if invalid."""
    if code.lower() == X_DEFAULT:
        return X_DEFAULT
    match = _CODE.fullmatch(code.strip())
    if match is None:
        return None
    language, script, region = (part.lower() if part else None for part in match.groups())
    languages, scripts, regions = _registries()
    if language not in languages:
        return None
    if script is not None and script not in scripts:
        return None
    if region is not None and not region.isdigit() and region not in regions:
        return None
    parts = [language]
    if script:
        parts.append(script.title())
    if region:
        parts.append(region.upper())
    return "-".join(parts)


def sitemap_alternates(
    records: Iterable[PageRecord],
    in_scope: Callable[[str], bool],
    *,
    external: bool = False,
    is_listed: Callable[[str], bool] | None = None,
) -> tuple[dict[str, tuple[tuple[str, str], ...]], list[HreflangProblem]]:
    """Per listed URL, the alternates to write (itself included, sorted); and the
    declared alternates left out.

    Only the pages that declare alternates are held in memory; whether another
    URL is listed at all is asked of ``is_listed`` (by default, a set of the
    listed URLs), so a spilled record store is never read into memory.
    """
    listed: dict[str, PageRecord] = {}
    urls: set[str] = set()
    for record in records:
        if record.verdict is Verdict.LISTED:
            if record.alternates:
                listed[record.url] = record
            if is_listed is None:
                urls.add(record.url)
    if is_listed is None:
        is_listed = urls.__contains__
    named_back = {url: {href for _code, href in record.alternates}
                  for url, record in listed.items()}
    problems: list[HreflangProblem] = []
    written: dict[str, tuple[tuple[str, str], ...]] = {}
    judging = _Judging(is_listed, named_back, in_scope, external)
    for url, record in listed.items():
        kept: dict[tuple[str, str], None] = {}
        for raw, href in record.alternates:
            code = normalize_code(raw)
            reason = _left_out(url, code, href, judging)
            if reason is not None:
                problems.append(HreflangProblem(url, raw, href, reason))
            elif code is not None:
                kept[(code, href)] = None
        if kept and not any(href == url for _code, href in kept):
            own = _code_given_by_others(url, kept, listed)
            if own is not None:
                kept[(own, url)] = None
        if len({href for _code, href in kept}) >= 2 and any(href == url for _c, href in kept):
            written[url] = tuple(sorted(kept))
    return written, problems


class _Judging(NamedTuple):
    """What an alternate is judged against: the same for every alternate of a crawl."""

    is_listed: Callable[[str], bool]
    named_back: dict[str, set[str]]  # each listed page's alternates
    in_scope: Callable[[str], bool]
    external: bool  # --hreflang-external: alternates outside the scope are kept


def _left_out(url: str, code: str | None, href: str, judging: _Judging) -> str | None:
    if code is None:
        return "hreflang-invalid-code"
    if href == url:
        return None
    if not judging.in_scope(href):
        return None if judging.external else "hreflang-out-of-scope"
    if not judging.is_listed(href):
        return "hreflang-not-listed"
    if code != X_DEFAULT and url not in judging.named_back.get(href, ()):
        return "hreflang-not-reciprocal"
    return None


def _code_given_by_others(url: str, kept: dict[tuple[str, str], None],
                          listed: dict[str, PageRecord]) -> str | None:
    """The code the other versions give ``url``, when they agree on one."""
    codes = {normalize_code(raw) for _code, other in kept if other in listed
             for raw, href in listed[other].alternates if href == url}
    codes.discard(None)
    codes.discard(X_DEFAULT)
    return codes.pop() if len(codes) == 1 else None  # type: ignore[return-value]
