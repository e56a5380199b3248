"""What the user chose to leave out: ``--exclude``, ``--include``, ``--no-list``, ``--strip-param``.

Patterns are matched against what a person sees in the address bar after the
host — the path and query of the *normalised* URL — so ``/tag/*`` means the
same whichever way a page spelled its link. A glob keeps to one wildcard,
``*`` (any run of characters, ``/`` and ``?`` included), and treats every
other character literally: ``?`` is in almost every interesting pattern
(``*?*sort=*``) and fnmatch's "any one character" would silently widen it.
Anything subtler is a Python regular expression after ``re:``, *searched* in
the same string.

Sound here rather than in the frontier: the same filters judge links, redirect
targets, canonicals and resumed queues, so each is one call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from crawler.core.errors import ConfigError
from crawler.core.records import Verdict
from crawler.urls.normalize import origin_of

REGEX_PREFIX = "re:"


@dataclass(frozen=True, slots=True)
class Pattern:
    """One ``--exclude``/``--include``/``--no-list`` pattern, compiled."""

    text: str
    regex: re.Pattern[str]
    anchored: bool  # a glob matches the whole path-and-query; a regex is searched

    def matches(self, target: str) -> bool:
        if self.anchored:
            return self.regex.fullmatch(target) is not None
        return self.regex.search(target) is not None


def glob_regex(glob: str) -> re.Pattern[str]:
    """``*`` is any run of characters; everything else stands for itself."""
    return re.compile(".*".join(re.escape(part) for part in glob.split("*")), re.DOTALL)


def compile_pattern(text: str, option: str) -> Pattern:
    """A user's pattern, or a :class:`ConfigError` naming the option and the pattern."""
    if text.startswith(REGEX_PREFIX):
        source = text[len(REGEX_PREFIX):]
        try:
            return Pattern(text, re.compile(source), anchored=False)
        except re.error as exc:
            raise ConfigError(f"{option} {text!r} is not a valid regular expression: "
                              f"{exc.msg}") from None
    if not text:
        raise ConfigError(f"{option} {text!r} is empty: it needs a pattern such as "
                          "'/tag/*' or 're:^/cart/'")
    if not text.startswith(("/", "*")):
        raise ConfigError(
            f"{option} {text!r} can never match: a glob is matched against the URL's path "
            "and query, which start with '/' (write '/cart/*' or '*cart*', or 're:' for "
            "a regular expression)")
    return Pattern(text, glob_regex(text), anchored=True)


def compile_param(text: str) -> re.Pattern[str]:
    """A ``--strip-param`` name glob (``utm_*``)."""
    if not text or any(char in text for char in "&=?#"):
        raise ConfigError(f"--strip-param {text!r} must be a parameter name or a glob such "
                          "as 'utm_*' (without '=', '&', '?' or '#')")
    return glob_regex(text)


class UrlFilters:
    """The filters of one crawl. Pure: every method is a function of its URL."""

    def __init__(
        self,
        *,
        exclude: Iterable[str] = (),
        include: Iterable[str] = (),
        no_list: Iterable[str] = (),
        strip_params: Iterable[str] = (),
    ) -> None:
        self.exclude = tuple(compile_pattern(text, "--exclude") for text in exclude)
        self.include = tuple(compile_pattern(text, "--include") for text in include)
        self.no_list = tuple(compile_pattern(text, "--no-list") for text in no_list)
        self.strip_params = tuple(compile_param(text) for text in strip_params)
        # Memoised per instance: the same URL is judged as a link many times.
        self.clean = lru_cache(maxsize=1 << 16)(self._clean) if self.strip_params else _same

    @property
    def active(self) -> bool:
        return bool(self.exclude or self.include or self.no_list or self.strip_params)

    def refusal(self, url: str, start_url: str) -> Verdict | None:
        """Why ``url`` (normalised, in scope) must not be requested, or ``None``."""
        if not self.exclude and not self.include:
            return None
        target = path_and_query(url)
        if any(pattern.matches(target) for pattern in self.exclude):
            return Verdict.EXCLUDED
        if self.include and url != start_url and not any(
                pattern.matches(target) for pattern in self.include):
            return Verdict.NOT_INCLUDED
        return None

    def unlisted(self, url: str) -> bool:
        """Whether ``url`` is crawled for its links but kept out of the sitemap."""
        if not self.no_list:
            return False
        target = path_and_query(url)
        return any(pattern.matches(target) for pattern in self.no_list)

    def _clean(self, url: str) -> str:
        base, mark, query = url.partition("?")
        if not mark:
            return url
        kept = [pair for pair in query.split("&")
                if not any(name.fullmatch(pair.partition("=")[0]) for name in self.strip_params)]
        return f"{base}?{'&'.join(kept)}" if kept else base


def _same(url: str) -> str:
    return url


def path_and_query(url: str) -> str:
    """What a PATTERN is matched against: the normalised URL after its origin."""
    return url[len(origin_of(url)):]
