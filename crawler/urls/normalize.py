"""URL normalisation and link resolution (RFC 3986, RFC 3987) — pure functions.

Every URL the crawler compares, de-duplicates or publishes goes through
:func:`normalize_url` first, so that one page has exactly one spelling. The
rules:

* only ``http`` and ``https``; scheme and host lower-case; IDNA (UTS #46) host;
* userinfo and fragment dropped; the scheme's default port dropped;
* dot-segments removed; an empty path becomes ``/``; an empty query is dropped;
* percent-escapes upper-cased, escapes of unreserved characters decoded, and
  every character that may not appear raw (spaces, non-ASCII as UTF-8, ...)
  percent-encoded, so IRIs become URIs (RFC 3987 §3.1);
* query parameter order kept: reordering would invent URLs the site never uses.

Reference resolution (RFC 3986 §5.2) is done here rather than with
``urllib.parse.urljoin``: the result is the same on every example of §5.4
(the tests hold both to the table), but splitting the work by case lets the
costly normalisation be cached, and urljoin cost more than parsing the page.
Neither urllib nor ``httpx.URL`` normalises escapes or ports fully anyway.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import TypeVar

from crawler.urls.hosts import normalize_host

DEFAULT_PORTS = {"http": 80, "https": 443}
K = TypeVar("K")
V = TypeVar("V")

_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
# Characters a path may hold raw (RFC 3986 pchar and "/"); the rest is percent-encoded.
PATH_SAFE = _UNRESERVED | frozenset("!$&'()*+,;=:@/")
# WHATWG's special-query set: browsers send "'" in an http(s) query as %27.
_QUERY_SAFE = (PATH_SAFE - frozenset("'")) | frozenset("?")
_HEX = frozenset(string.hexdigits)
# Anything outside these classes (including "%") needs the slow path.
PATH_NEEDS_WORK = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/]")
QUERY_NEEDS_WORK = re.compile(r"[^A-Za-z0-9\-._~!$&()*+,;=:@/?]")
# WHATWG: browsers drop tabs and newlines anywhere in an href, and trim
# leading/trailing C0 controls and spaces.
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_C0_AND_SPACE = "".join(chr(code) for code in range(0x21))


def _encode_char(char: str) -> str:
    try:
        # A surrogate escape is a raw header byte (aiohttp decodes headers with
        # surrogateescape): the byte is what the server named.
        raw = char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # any other lone surrogate: publish U+FFFD instead
        raw = "\ufffd".encode()
    return "".join(f"%{byte:02X}" for byte in raw)


def normalize_escapes(text: str, safe: frozenset[str]) -> str:
    """Make percent-encoding canonical (RFC 3986 §6.2.2.1-2, RFC 3987 §3.1)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) == 2 and pair[0] in _HEX and pair[1] in _HEX:
                decoded = chr(int(pair, 16))
                out.append(decoded if decoded in _UNRESERVED else "%" + pair.upper())
                i += 3
                continue
            out.append("%25")  # a stray "%" is data, not an escape
        elif char in safe:
            out.append(char)
        else:
            out.append(_encode_char(char))
        i += 1
    return "".join(out)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for an absolute path."""
    if "." not in path:
        return path
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if len(kept) > 1:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")
    result = "/".join(kept)
    return result if result.startswith("/") else "/" + result


def _split_authority(authority: str) -> tuple[str, str] | None:
    """Split ``[userinfo@]host[:port]`` into host and port text (userinfo dropped)."""
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            return None
        host, rest = hostport[: end + 1], hostport[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        return host, rest[1:]
    host, _, port = hostport.partition(":")
    return host, port


def normalize_url(url: str) -> str | None:
    """The one spelling of an absolute http(s) URL, or ``None`` if it is not one."""
    return _normalize_trimmed(_TAB_NEWLINE.sub("", url).strip(_C0_AND_SPACE))


def _normalize_trimmed(url: str) -> str | None:
    """:func:`normalize_url` of a URL already rid of tabs, newlines and surrounding
    spaces: one joined from a trimmed href keeps a space before its "#" (``/a #x``
    is ``/a%20``, as in browsers)."""
    scheme, sep, rest = url.partition(":")
    if not sep:
        return None
    scheme = scheme.lower()
    if scheme not in DEFAULT_PORTS:
        return None
    if "\\" in rest:
        rest = backslashes(rest)
    # WHATWG: after "http:" any number of slashes (none too) leads to the host.
    rest = rest.lstrip("/").partition("#")[0]
    # The authority ends at the first "/", "?" (or "#", already cut).
    end = len(rest)
    for delim in "/?":
        pos = rest.find(delim)
        if 0 <= pos < end:
            end = pos
    authority, tail = rest[:end], rest[end:]
    split = _split_authority(authority)
    if split is None:
        return None
    host = normalize_host(split[0])
    if host is None:
        return None
    port_text = split[1]
    port = ""
    if port_text:
        if not port_text.isdigit() or not port_text.isascii() or int(port_text) > 65535:
            return None
        if int(port_text) != DEFAULT_PORTS[scheme]:
            port = f":{int(port_text)}"
    path, _, query = tail.partition("?")
    if PATH_NEEDS_WORK.search(path):
        path = normalize_escapes(path, PATH_SAFE)
    path = remove_dot_segments(path) if path else "/"
    if query and QUERY_NEEDS_WORK.search(query):
        query = normalize_escapes(query, _QUERY_SAFE)
    return f"{scheme}://{host}{port}{path}" + (f"?{query}" if query else "")


SCHEME_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def resolve_link(base: str, href: str) -> str | None:
    """Resolve an ``href`` found on a page at ``base`` (a normalised URL).

    RFC 3986 §5.2.2, case by case, so that the expensive part — normalising
    the resulting path — is cached on what repeats across a site: the origin
    and an absolute path, or a directory and a relative path. (A cache on
    ``(page, href)`` misses almost always: every page is a different base.)
    ``None`` for links that are not web pages (``javascript:``, ``mailto:``,
    ``tel:``, ``data:``, other schemes) or cannot be parsed.
    """
    if href and (href[0] <= " " or href[-1] <= " " or "\n" in href or "\t" in href
                 or "\r" in href):
        href = _TAB_NEWLINE.sub("", href).strip(_C0_AND_SPACE)
    if "\\" in href:
        href = backslashes(href)
    if not href:
        return base
    first = href[0]
    if first == "#":
        return base
    scheme, _, rest = base.partition("://")
    if first == "/":
        if href.startswith("//"):
            return _absolute(f"{scheme}:{href.partition('#')[0]}")
        return _join(f"{scheme}://{rest.split('/', 1)[0]}", href.partition("#")[0])
    if first != "?":
        match = SCHEME_PREFIX.match(href)
        if match:
            if href[: match.end() - 1].lower() != scheme or href[match.end() :].startswith("//"):
                return _absolute(href)
            href = href[match.end() :]  # "http:g": the backward-compatible reading, §5.2.2
            if not href or href[0] in "#?/":
                return resolve_link(base, href)
    slash = rest.find("/")
    origin = f"{scheme}://{rest[:slash]}" if slash >= 0 else base
    path = rest[slash:] if slash >= 0 else "/"
    if first == "?":
        return _join(origin, path.partition("?")[0] + href)
    directory = path.partition("?")[0]
    reference = directory[: directory.rfind("/") + 1] + href.partition("#")[0]
    if "." in reference and "%" not in reference:
        # Spell "../x" from every directory the same way before the cache lookup,
        # so the links of a whole site share entries instead of missing. (With a
        # "%" the escapes must be decoded first, as normalize_url does: %2E is ".")
        ref_path, qmark, query = reference.partition("?")
        reference = remove_dot_segments(ref_path) + qmark + query
    return _join(origin, reference)


# An href (or a joined reference) longer than this is resolved each time and never
# kept: a hostile site's pages of long unique links would otherwise fill the caches
# with hundreds of megabytes. (A sitemap refuses URLs past 2,048 characters anyway.)
CACHED_CHARS = 512


def backslashes(text: str) -> str:
    """``\\`` is ``/`` in an http(s) URL before its query and fragment, as in
    browsers: ``..\\index.htm``, ``http://host\\path``. (After ``?`` or ``#`` it
    is data, and encoded as such.)"""
    end = len(text)
    for mark in "?#":
        found = text.find(mark)
        if 0 <= found < end:
            end = found
    return text[:end].replace("\\", "/") + text[end:]


def _absolute(url: str) -> str | None:
    return _absolute_kept(url) if len(url) <= CACHED_CHARS else _normalize_trimmed(url)


@lru_cache(maxsize=1 << 15)
def _absolute_kept(url: str) -> str | None:
    return _normalize_trimmed(url)


def _join(origin: str, reference: str) -> str | None:
    return (_join_kept(origin, reference) if len(reference) <= CACHED_CHARS
            else _joined(origin, reference))


@lru_cache(maxsize=1 << 17)
def _join_kept(origin: str, reference: str) -> str | None:
    return _joined(origin, reference)


def _joined(origin: str, reference: str) -> str | None:
    """``origin`` (normalised) plus an absolute path-and-query that may need work.

    Only the reference is normalised: reading the origin's host again was most
    of the cost (a numeric host is parsed as an IPv4 address each time), and a
    normalised origin normalises to itself.
    """
    if "\\" in reference:
        reference = backslashes(reference)
    path, _, query = reference.partition("#")[0].partition("?")
    if PATH_NEEDS_WORK.search(path):
        path = normalize_escapes(path, PATH_SAFE)
    path = remove_dot_segments(path) if path else "/"
    if query and QUERY_NEEDS_WORK.search(query):
        query = normalize_escapes(query, _QUERY_SAFE)
    return f"{origin}{path}?{query}" if query else origin + path


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a normalised URL."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}"


def path_of(url: str) -> str:
    """The path of a normalised URL (no query)."""
    rest = url.partition("://")[2]
    slash = rest.find("/")
    return rest[slash:].partition("?")[0] if slash >= 0 else "/"


def host_of(url: str) -> str:
    """The host of a normalised URL, without port or IPv6 brackets."""
    hostport = url.partition("://")[2].split("/", 1)[0].split("?", 1)[0]
    if hostport.startswith("["):
        return hostport[1 : hostport.find("]")]
    return hostport.partition(":")[0]
