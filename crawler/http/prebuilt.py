"""httpx requests for already-normalised URLs, built without parsing them again.

``httpx.Request(method, "http://…")`` parses and validates its URL (34 µs)
and encodes an empty body (another 30 µs): two thirds of the cost of an
httpx request on this workload, for URLs that :func:`crawler.urls.normalize.normalize_url`
has already made valid and canonical, and that must be sent exactly as they
are. A crawl has one origin, so every request URL is that origin's parsed
form with another path and query: :class:`RequestFactory` copies it with the
new ones, and passes the (empty) body as a stream, so httpx adds nothing.

The copy relies on how httpx 0.28 stores a URL. The factory checks, when it
is made, that a copy equals what ``httpx.URL`` parses from the same text,
and falls back to ``httpx.URL`` for every request if it does not; a test
holds the two to the same result on generated URLs.
"""

from __future__ import annotations

import functools

import httpx

_NO_BODY = httpx.ByteStream(b"")
RAW_URL = "sitemap_crawler.raw_url"  # request extension: the URL as the crawler spelt it
# request extension: a callable the transport calls once the request is on the wire
# (the crawl imports what reading pages needs while the first answer travels)
WHEN_SENT = "sitemap_crawler.when_sent"
_PROBE = "/a/b;c%2F%7E%C3%A9?q=%20x&y=%7C"


class RequestFactory:
    """GET requests to one origin (``scheme://host[:port]``) with fixed base headers."""

    def __init__(self, origin: str, headers: list[tuple[bytes, bytes]],
                 private: list[tuple[bytes, bytes]] | None = None) -> None:
        self.origin = origin
        # ``private`` headers (the user's credentials) go to this origin only.
        self._own_raw = headers + (private or [])
        self._own_headers = httpx.Headers(self._own_raw)  # normalised once, copied per request
        # another origin's request (a live sitemap elsewhere) names its own host:
        # the crawl's Host would have a virtual host answer for another site
        self._public_raw = [(name, value) for name, value in headers
                            if name.lower() != b"host"]
        self._template = _template(origin)
        self._append_trusted = append_trusted()

    def own(self, url: str) -> bool:
        """Is ``url`` on this factory's origin (not merely a longer port or host)?"""
        return url.startswith(self.origin) and url[len(self.origin):][:1] in ("/", "")

    def url(self, url: str) -> httpx.URL:
        return self._copied(url) or httpx.URL(url)

    def _copied(self, url: str) -> httpx.URL | None:
        """The origin's parsed form with ``url``'s path and query, where that is
        known to equal what ``httpx.URL(url)`` would parse; else ``None``."""
        template = self._template
        if template is not None and url.startswith(self.origin):
            rest = url[len(self.origin):]
            if rest[:1] == "/" and "#" not in rest:
                path, mark, query = rest.partition("?")
                made = httpx.URL.__new__(httpx.URL)
                made._uri_reference = template._replace(path=path, query=query if mark else None)
                return made
        return None

    def get(self, url: str, extra: tuple[tuple[str, str], ...] | None = None,
            method: str = "GET") -> httpx.Request:
        """A GET (or HEAD) of the normalised ``url``; ``extra`` headers (validators) are
        added. Private headers are sent only if ``url`` is on the origin."""
        own = self.own(url)
        copied = self._copied(url)
        # The URL exactly as normalised (a copy is what httpx parses from it), for
        # a transport that sends a string: spares it re-serialising every request's.
        extensions = {RAW_URL: url} if copied is not None else None
        target = copied or httpx.URL(url)
        request = httpx.Request(method, target,
                                headers=self._own_headers if own else self._headers_for(target),
                                stream=_NO_BODY, extensions=extensions)
        if extra:
            # Validators as raw bytes (a stored ETag may hold any latin-1 byte: sent
            # as that byte), appended the way httpx stores a header, which the
            # factory checked when it was made; else httpx builds the headers anew.
            fields = [(name.encode("latin-1"), value.encode("latin-1", "replace"))
                      for name, value in extra]
            if self._append_trusted:
                request.headers._list.extend(
                    (name, name.lower(), value) for name, value in fields)
            else:
                request.headers = httpx.Headers(request.headers.raw + fields)
        return request


    def _headers_for(self, target: httpx.URL) -> httpx.Headers:
        """The public headers, with the Host of ``target`` (not the crawl's)."""
        return httpx.Headers([(b"Host", target.netloc), *self._public_raw])


@functools.cache
def append_trusted() -> bool:
    """Does appending to ``Headers._list`` give what httpx builds from the same pairs?
    (Asked once: the answer is httpx's, the same for every request.)"""
    try:  # httpx's internals, probed: whatever they raise means "not to be trusted"
        return _appended_as_built()
    except (AttributeError, TypeError, ValueError):
        return False


def _appended_as_built() -> bool:
    pairs = [(b"Accept", b"*/*"), (b"If-None-Match", b'"\xe9tag"')]
    built = httpx.Headers(pairs[:1])
    built._list.extend((name, name.lower(), value) for name, value in pairs[1:])
    expected = httpx.Headers(pairs)
    return built.raw == expected.raw and built == expected and (
        built.get("if-none-match") == expected.get("if-none-match"))


def _template(origin: str) -> object | None:
    """The parsed origin to copy, or ``None`` if copying cannot be trusted here."""
    try:  # httpx's internals, probed: whatever they raise means "not to be trusted"
        return _copied_as_parsed(origin)
    except (AttributeError, TypeError, ValueError):
        return None


def _copied_as_parsed(origin: str) -> object | None:
    template = httpx.URL(origin + "/")._uri_reference
    made = httpx.URL.__new__(httpx.URL)
    path, _, query = _PROBE.partition("?")
    made._uri_reference = template._replace(path=path, query=query)
    expected = httpx.URL(origin + _PROBE)
    if made == expected and str(made) == origin + _PROBE and made.raw_path == (
            expected.raw_path):
        return template
    return None
