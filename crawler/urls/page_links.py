"""A page's hrefs resolved by the thousand: :class:`PageLinks`, the fast path of
:func:`crawler.urls.normalize.resolve_link`, with the same answers.

Apart from the URL rules (``normalize.py``) because what it adds is memory:
bounded caches of the answers a site's pages repeat (its navigation, its
``../x.html`` within a directory), which a hostile site must not be able to grow.
"""

from __future__ import annotations

import re
from typing import TypeVar

from crawler.urls.normalize import (
    CACHED_CHARS,
    PATH_NEEDS_WORK,
    QUERY_NEEDS_WORK,
    SCHEME_PREFIX,
    origin_of,
    resolve_link,
)

K = TypeVar("K")
V = TypeVar("V")


# (directory or origin, href) -> resolved URL, for hrefs whose resolution does
# not depend on the page's file name. Bounded: cleared when full.
_PAGE_CACHE: dict[tuple[str, str], str | None] = {}
_PAGE_CACHE_MAX = 1 << 16
# origin -> {absolute-path href -> URL}, for the hrefs PageLinks joins directly: a
# site's "/..." links (its navigation on every page, and each page from all that
# link it) answered by one lookup of the href as written. Bounded like _PAGE_CACHE.
_ROOTED: dict[str, dict[str, str]] = {}
_ROOTED_ORIGINS = 64
_rooted_kept = 0  # answers in all origins: at most _PAGE_CACHE_MAX
# directory URL -> {relative href -> URL}, the same for a page's relative path
# hrefs: what a site's pages link as "../x.html" repeats within each directory
# (documentation sites: 60-90 % of such hrefs). At most _PAGE_CACHE_MAX answers and
# directories in all, every directory's forgotten when that many are kept; a
# directory is kept only once it has an answer (a site of a million directories
# must not leave a million empty ones).
_NEARBY: dict[str, dict[str, str]] = {}
_nearby_kept = 0
_NO_ANSWERS: dict[str, str] = {}  # a directory's, until it has one (never written)
# absolute-URL href as written -> URL (None: not a web page), for those no page can
# change: "scheme://..." and the schemes that are not http(s) ("mailto:", "tel:").
# ("http:g" and "https:" are read against the page, the way browsers do.)
_ELSEWHERE: dict[str, str | None] = {}
_WEB_SCHEMES = ("http", "https")
_WEB_ORIGINS = ("http://", "https://")
_MISS = object()
_DOT_PREFIX = re.compile(r"(?:\.\.?/)+")  # "./" and "../" steps at a relative path's start
# The commonest hrefs, told by one match: a path of characters that need no
# escaping, no query (a fragment is dropped), rooted ("/a/b.html", not "//host") or relative
# ("../../a/b.html": its "./" and "../" steps, then a segment that starts with
# none of ".", "/" and has no ":"). Resolution then is a join: where a dot
# segment is left in the result, the general way decides.
_PLAIN_ROOTED = re.compile(r"(/(?!/)[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)(?:#.*)?", re.DOTALL)
_PLAIN_RELATIVE = re.compile(
    r"((?:\.\.?/)*)([A-Za-z0-9\-_~!$&'()*+,;=@][A-Za-z0-9\-._~!$&'()*+,;=@/]*)(?:#.*)?",
    re.DOTALL)


class PageLinks:
    """Resolves the hrefs of one page; the same answers as :func:`resolve_link`, faster.

    Most hrefs are plain paths (``../s12/p3.html``, ``/docs/a.html``) with
    nothing to escape: those are joined here directly, the base's parts split
    once per page instead of once per href. Navigation repeats, so the other
    hrefs' results are shared across pages where that is sound: a relative
    path depends only on the base's directory, an absolute path only on its
    origin. ``#x``, ``?q``, ``http:g`` and hrefs with spaces to trim take the
    full resolution every time.
    """

    __slots__ = ("_nearby", "_rooted", "_ups", "base", "directory", "directory_path",
                 "origin")

    def __init__(self, base: str) -> None:
        self.base = base
        self.origin = origin_of(base)
        path = base[len(self.origin):].partition("?")[0] or "/"
        self.directory_path = path[: path.rfind("/") + 1]
        self.directory = self.origin + self.directory_path
        self._ups: dict[int, str] = {}  # levels up -> that directory, as asked
        rooted = _ROOTED.get(self.origin)
        if rooted is None:
            if len(_ROOTED) >= _ROOTED_ORIGINS:
                global _rooted_kept
                _ROOTED.clear()
                _rooted_kept = 0
            rooted = _ROOTED[self.origin] = {}
        self._rooted = rooted
        self._nearby = _NEARBY.get(self.directory, _NO_ANSWERS)

    def resolve(self, href: str) -> str | None:
        if not href:
            return self.base
        first = href[0]
        if first == "/":
            known = self._rooted.get(href)
            if known is not None:
                return known
        elif first == "#":  # the page itself, whatever follows (resolve_link's answer)
            return self.base
        elif first != "?":
            found = (_ELSEWHERE if ":" in href else self._nearby).get(href, _MISS)
            if found is not _MISS:
                return found  # type: ignore[return-value]
        if first == "?" or first <= " " or href[-1] <= " ":
            return resolve_link(self.base, href)
        joined = self._plain(href, first)
        if joined is not None:
            if len(href) <= CACHED_CHARS:
                if first == "/":
                    self._keep_rooted(href, joined)
                elif ":" not in href:
                    self._keep_nearby(href, joined)
            return joined
        if len(href) > CACHED_CHARS:
            return resolve_link(self.base, href)
        if first != "/" and ":" in href and self._elsewhere(href):
            result = resolve_link(self.base, href)
            _keep(_ELSEWHERE, href, result)
            return result
        key = (self.origin if first == "/" else self.directory, href)
        found = _PAGE_CACHE.get(key, _MISS)
        if found is not _MISS:
            return found  # type: ignore[return-value]
        result = resolve_link(self.base, href)
        if _shareable(href):
            _keep(_PAGE_CACHE, key, result)
        return result

    def _keep_rooted(self, href: str, url: str) -> None:
        global _rooted_kept
        if _rooted_kept >= _PAGE_CACHE_MAX:
            for answers in _ROOTED.values():
                answers.clear()
            _rooted_kept = 0
        _rooted_kept += 1
        self._rooted[href] = url

    def _keep_nearby(self, href: str, url: str) -> None:
        global _nearby_kept
        if _nearby_kept >= _PAGE_CACHE_MAX:
            _NEARBY.clear()
            _nearby_kept = 0
            self._nearby = _NO_ANSWERS
        if self._nearby is _NO_ANSWERS:
            nearby = _NEARBY.get(self.directory)  # another page's of it, since this began
            if nearby is None:
                nearby = _NEARBY[self.directory] = {}
                _nearby_kept += 1  # a directory counts as an answer kept
            self._nearby = nearby
        _nearby_kept += 1
        self._nearby[href] = url

    def _elsewhere(self, href: str) -> bool:
        """Whether ``href`` is an absolute URL whose answer no page's URL changes."""
        match = SCHEME_PREFIX.match(href)
        if match is None or not self.origin.startswith(_WEB_ORIGINS):
            return False
        end = match.end()
        return href.startswith("//", end) or href[: end - 1].lower() not in _WEB_SCHEMES

    def _plain(self, href: str, first: str) -> str | None:
        """The URL of a path-only href that needs no normalising, else ``None``.

        The commonest hrefs are told by one match (:data:`_PLAIN_ROOTED`,
        :data:`_PLAIN_RELATIVE`): on the synthetic site, whose links mostly lead
        to pages no earlier page linked, resolving was a quarter of the parse
        child's time in a crawl, and every link no cache knew came through here."""
        if first == "/":
            rooted = _PLAIN_ROOTED.fullmatch(href)
            if rooted is not None:
                path = rooted.group(1)
                return None if "/." in path else self.origin + path
        else:
            steps = _PLAIN_RELATIVE.fullmatch(href)
            if steps is not None:
                dots, rest = steps.groups()
                path = (self._up(dots.count("../")) if dots else self.directory_path) + rest
                return None if "/." in path else self.origin + path
        cut = href.find("#")
        path, _, query = (href if cut < 0 else href[:cut]).partition("?")
        if (not path or PATH_NEEDS_WORK.search(path)
                or (query and QUERY_NEEDS_WORK.search(query))):
            return None
        if first == "/":
            if path[1:2] == "/":
                return None  # another host
        else:
            slash = path.find("/")
            if ":" in (path if slash < 0 else path[:slash]):
                return None  # a scheme, or a colon a relative path may not start with
            directory = self.directory_path
            if first == ".":
                dots = _DOT_PREFIX.match(path)
                if dots is not None:  # "./" stays, each "../" leaves one segment
                    end = dots.end()
                    directory = self._up(path.count("../", 0, end))
                    path = path[end:]
            path = directory + path
        if "/." in path:
            return None  # dot segments left (or a name starting with "."): the full way
        return f"{self.origin}{path}?{query}" if query else self.origin + path

    def _up(self, levels: int) -> str:
        """The directory ``levels`` segments above the base's (an empty one counts)."""
        directory = self._ups.get(levels)
        if directory is None:
            directory = self.directory_path
            for _ in range(levels):
                directory = directory[: directory.rfind("/", 0, len(directory) - 1) + 1] or "/"
            self._ups[levels] = directory
        return directory


def _keep(cache: dict[K, V], key: K, value: V) -> None:
    """``cache[key] = value``, the whole cache forgotten first when it is full."""
    if len(cache) >= _PAGE_CACHE_MAX:
        cache.clear()
    cache[key] = value


def _shareable(href: str) -> bool:
    """Whether ``href`` resolves the same from every page of a directory."""
    if "\t" in href or "\n" in href or "\r" in href:
        return False
    match = SCHEME_PREFIX.match(href)
    return match is None or href.startswith("//", match.end())
