"""The request factory builds what httpx itself would, only cheaper."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.http.prebuilt import RAW_URL, RequestFactory, append_trusted
from crawler.urls.normalize import normalize_url

ORIGIN = "http://site.test:8080"
BASE = [(b"Host", b"site.test:8080"), (b"Accept", b"*/*")]

_segment = st.text(
    alphabet=st.sampled_from("abcXYZ019-._~!$&'()*+,;=:@%/é|^` "), min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(path=_segment, query=st.none() | _segment)
def test_copied_urls_equal_what_httpx_parses(path: str, query: str | None) -> None:
    url = normalize_url(f"{ORIGIN}/{path}" + (f"?{query}" if query is not None else ""))
    if url is None:
        return
    request = RequestFactory(ORIGIN, BASE).get(url)
    expected = httpx.URL(url)
    assert request.url == expected
    assert request.url.raw_path == expected.raw_path
    # The exact spelling a string transport sends is the normalised URL itself.
    assert request.extensions[RAW_URL] == url == str(request.url)


def test_other_origins_are_parsed_by_httpx_and_carry_no_raw_url() -> None:
    factory = RequestFactory(ORIGIN, BASE)
    for url in ("http://site.test:80/a", "http://other.test:8080/a", "https://site.test:8080/"):
        request = factory.get(url)
        assert request.url == httpx.URL(url)
        assert RAW_URL not in request.extensions


def test_validators_are_appended_as_httpx_would_store_them() -> None:
    assert append_trusted()
    date = "Mon, 02 Nov 2026 10:00:00 GMT"
    extra = (("If-None-Match", '"caf\u00e9"'), ("If-Modified-Since", date))
    request = RequestFactory(ORIGIN, BASE).get(f"{ORIGIN}/a", extra)
    expected = httpx.Headers([*BASE, (b"If-None-Match", b'"caf\xe9"'),
                              (b"If-Modified-Since", date.encode())])
    assert request.headers.raw == expected.raw
    assert request.headers == expected
    assert request.headers.get("if-modified-since") == "Mon, 02 Nov 2026 10:00:00 GMT"


def test_without_the_shortcuts_the_same_request_is_built(monkeypatch) -> None:
    """Where httpx's internals differ from what the factory checked, it falls
    back to httpx's own constructors and builds the same request."""
    fast = RequestFactory(ORIGIN, BASE)
    monkeypatch.setattr("crawler.http.prebuilt._template", lambda origin: None)
    monkeypatch.setattr("crawler.http.prebuilt.append_trusted", lambda: False)
    slow = RequestFactory(ORIGIN, BASE)
    extra = (("If-None-Match", '"\u00e9"'),)
    for url in (f"{ORIGIN}/a%7Eb;c?q=%2F", f"{ORIGIN}/"):
        one, other = fast.get(url, extra), slow.get(url, extra)
        assert one.url == other.url
        assert one.headers.raw == other.headers.raw
        assert RAW_URL not in other.extensions
