"""Which URLs the crawl may request — pure string logic over normalised URLs.

Because :func:`crawler.urls.normalize.normalize_url` gives every URL one spelling
(lower-case scheme and host, default port dropped), "same scheme, host and
effective port, path under the prefix on a segment boundary" reduces to a
prefix test on the string, which keeps this check off the profile.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from typing import Any

from crawler.core.records import Verdict
from crawler.urls.normalize import (
    PATH_SAFE,
    host_of,
    normalize_escapes,
    normalize_url,
    origin_of,
    path_of,
    remove_dot_segments,
)

_EXTRACTOR: list[Any] = []


def _extractor() -> Any:
    """tldextract, offline by construction: the bundled public-suffix snapshot, no
    download, no cache written to the home directory.

    Imported on first use: it brings ``requests`` along, and it and its suffix list
    take ~100 ms of CPU that a crawl spends in a child process instead
    (``crawler.engine.suffix_child``)."""
    if not _EXTRACTOR:
        import tldextract

        _EXTRACTOR.append(tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None))
    return _EXTRACTOR[0]


def default_prefix(start_url: str) -> str:
    """START_URL's path up to and including its last ``/``."""
    path = path_of(start_url)
    return path[: path.rfind("/") + 1]


def normalize_prefix(prefix: str) -> str:
    """Spell a path prefix the way normalised URLs spell their paths."""
    return remove_dot_segments(normalize_escapes(prefix, PATH_SAFE)) or "/"


def registered_domain(host: str) -> str:
    """``www.example.co.uk`` → ``example.co.uk`` (the host itself for IPs)."""
    if is_own_domain(host):
        return host
    parts = _extractor()(host)
    return parts.top_domain_under_public_suffix or host


def is_own_domain(host: str) -> bool:
    """An IP address, or a name of one label (``localhost``): no public suffix can
    make it part of a larger registered domain, so it is its own, and the answer
    needs no suffix list (whose parsing cost every crawl of an address ~50 ms of
    CPU, in a child forked for it)."""
    if "." not in host:
        return True
    try:
        ipaddress.ip_address(host[1:-1] if host.startswith("[") else host)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Scope:
    """The part of the web one crawl covers: an origin and a path prefix."""

    origin: str
    path_prefix: str

    @classmethod
    def for_start(cls, start_url: str, prefix: str | None = None) -> Scope:
        url = normalize_url(start_url)
        if url is None:
            raise ValueError(f"not an http(s) URL: {start_url!r}")
        chosen = normalize_prefix(prefix) if prefix is not None else default_prefix(url)
        return cls(origin=origin_of(url), path_prefix=chosen)

    @property
    def root(self) -> str:
        """The URL every in-scope URL starts with."""
        return self.origin + self.path_prefix

    def count_outside(self, urls: list[str]) -> int:
        """How many of ``urls`` lie outside: a page's links out, counted on every page
        (one C-level pass where the root is a directory, the usual case)."""
        root = self.root
        if root.endswith("/"):
            return len(urls) - sum(map(str.startswith, urls, repeat(root)))
        contains = self.contains
        return sum(not contains(url) for url in urls)

    def contains(self, url: str) -> bool:
        """Is the normalised ``url`` inside this scope?"""
        root = self.root
        if not url.startswith(root):
            return False
        if root.endswith("/"):
            return True
        # A prefix without a trailing slash admits only whole segments:
        # /docs admits /docs, /docs/x and /docs?q, never /docs-old.
        return len(url) == len(root) or url[len(root)] in "/?"

    def classify_outside(self, url: str, ours: Callable[[], str] | None = None) -> Verdict:
        """Why a URL outside the scope is not crawled, for the report. ``ours``, when
        given, answers :func:`registered_domain` for this scope's own host."""
        origin = origin_of(url)
        if origin == self.origin:
            return Verdict.OUT_OF_SCOPE
        host = host_of(url)
        if not _may_share_domain(host, host_of(self.origin)):
            return Verdict.EXTERNAL
        # Same site: the host is our registered domain or under it. A suffix test, not
        # a second public-suffix lookup: a page may link 100,000 other hosts.
        ours_now = ours() if ours is not None else _registered_domain_cached(
            host_of(self.origin))
        if host == ours_now or host.endswith("." + ours_now):
            return Verdict.OTHER_HOST
        return Verdict.EXTERNAL


def _may_share_domain(host: str, own: str) -> bool:
    """Could ``host`` be under our registered domain? Not unless it ends with our
    host's last two labels (its one label, if that is all it has): a registered
    domain is a public suffix and one label more, so it holds at least those,
    and where tldextract finds no suffix (an IP address, ``localhost``, an
    unknown top-level domain) it is the whole host. Most links to other sites
    are told apart here, without the suffix list, which the crawl would
    otherwise stop to wait for at its first such link (about 0.1 s; it is
    worked out in a child as the crawl starts). A host with a trailing dot is
    left to the list (tldextract drops the dot)."""
    if own.endswith("."):
        return True
    cut = own.rfind(".", 0, own.rfind("."))
    tail = own[cut + 1:]
    return host == tail or host.endswith("." + tail)


@lru_cache(maxsize=64)
def _registered_domain_cached(host: str) -> str:
    return registered_domain(host)

