from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.page.decode import decode_html, html_source, sniff_encoding
from crawler.page.extract import extract


@pytest.mark.parametrize(("body", "content_type", "encoding"), [
    (b"plain", None, "utf-8"),
    (b"plain", "text/html; charset=ISO-8859-1", "cp1252"),
    (b"plain", 'text/html; charset="koi8-r"', "koi8-r"),
    (b'<meta charset="windows-1251">', "text/html", "cp1251"),
    (b'<meta http-equiv="Content-Type" content="text/html; charset=latin1">', None, "cp1252"),
    (codecs.BOM_UTF8 + b"x", "text/html; charset=latin1", "utf-8"),
    (codecs.BOM_UTF16_LE + "x".encode("utf-16-le"), None, "utf-16-le"),
    (b"x", "text/html; charset=no-such-charset", "utf-8"),
    (b'<meta charset="utf-16">', None, "utf-8"),
])
def test_sniff_encoding(body: bytes, content_type: str | None, encoding: str) -> None:
    assert sniff_encoding(body, content_type) == encoding


def test_latin1_page_decodes() -> None:
    assert decode_html("café".encode("latin-1"), "text/html; charset=iso-8859-1") == "café"


def test_invalid_utf8_and_nul_bytes_become_replacement_characters() -> None:
    text = decode_html(b"ok \xff\xfe bad \x00 nul", "text/html")
    assert "\x00" not in text
    assert text.count("\ufffd") >= 2
    assert text.startswith("ok ")


def test_bom_is_not_part_of_the_text() -> None:
    assert decode_html(codecs.BOM_UTF8 + b"<p>", None) == "<p>"


@pytest.mark.parametrize("label", ["hex", "base64", "idna", "rot13", "zlib", "uu", "bz2"])
def test_a_codec_that_is_no_text_encoding_is_ignored(label: str) -> None:
    body = b"<p>caf\xc3\xa9</p>"
    assert sniff_encoding(body, f"text/html; charset={label}") == "utf-8"
    assert sniff_encoding(b'<meta charset="' + label.encode() + b'">' + body, None) == "utf-8"
    assert decode_html(body, f"text/html; charset={label}") == "<p>caf\u00e9</p>"


@pytest.mark.parametrize("label", ["\x00", "utf\x008", "a\x00"])
def test_a_charset_with_a_nul_byte_is_ignored(label: str) -> None:
    """codecs.lookup raises ValueError, not LookupError, on a NUL (found by the page
    property test): such a label names no charset, so the page is read as UTF-8."""
    assert sniff_encoding(b"<p>", f"text/html; charset={label}") == "utf-8"


# Pieces of pages: markup, text in several scripts, and bytes that are not UTF-8
# (lone continuation bytes, truncated sequences, overlongs, surrogates, 0xFF),
# placed in attribute values, text, comments and tag names alike.
_PIECES = st.sampled_from([
    b"<a href=\"", b"\">", b"</a>", b"<a href=", b" ", b"<area href='", b"'>",
    b"<link rel=canonical href=\"", b"<link rel=alternate hreflang=\"", b"<meta name=robots "
    b"content=\"", b"<title>", b"</title>", b"<img src=\"", b"<base href=\"", b"<!--", b"-->",
    b"<script>", b"</script>", b"&eacute;", b"&#233;", b"&#xD800;", b"/p", b".html", b"#x",
    b"?q=", b"../", "caf\u00e9".encode(), "\u65e5\u672c".encode(), "\U0001f600".encode(),
    b"\x80", b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc0\xaf", b"\xed\xa0\x80",
    b"\xff", b"\xfe", b"\xe9", b"\r\n", b"\t", b"<", b">", b"\"", b"=",
    b'<script type="application/ld+json">{"@type": "VideoObject", "name": "',
    b'", "contentUrl": "/v.mp4"}</script>', b"<video src=\"", b'<meta property="og:title" '
    b'content="', b"<h1>",
])


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=40).map(b"".join))
def test_utf8_bytes_read_as_their_decoded_text(body: bytes) -> None:
    """A page given to the parser as bytes yields what its decoded text yields: the
    same links, canonical, robots, title, hreflang, images, anchors and fragments."""
    page = b"<html><head>" + body + b"</head><body>" + body + b"</body></html>"
    source = html_source(page, "text/html; charset=utf-8")
    try:
        page.decode("utf-8")
    except UnicodeDecodeError:  # bytes that are not UTF-8 go to the parser decoded
        assert isinstance(source, str)
    else:
        assert source is page
    options = {"images": True, "anchors": True, "fragments": True, "edges": True,
               "structured": True, "videos": True, "news": True}
    as_bytes = extract(source, "http://h/a/b.html", "bot", **options)
    as_text = extract(decode_html(page, "text/html; charset=utf-8"), "http://h/a/b.html",
                      "bot", **options)
    assert as_bytes == as_text


@pytest.mark.parametrize(("body", "content_type"), [
    (b"<p>nul \x00 byte</p>", "text/html"),
    (codecs.BOM_UTF8 + b"<p>bom</p>", "text/html"),
    ("<p>caf\u00e9</p>".encode("latin-1"), "text/html; charset=iso-8859-1"),
    (b'<meta charset="koi8-r"><p>\xc1</p>', None),
])
def test_pages_that_read_differently_as_bytes_are_decoded(body: bytes,
                                                         content_type: str | None) -> None:
    assert html_source(body, content_type) == decode_html(body, content_type)


def test_stray_bytes_joined_across_a_dropped_tag_are_read_as_the_text_reads_them() -> None:
    """The case the generated test found: lexbor joins the text around the dropped
    ``</head><body>``, and the stray 0xE9 and 0x80 it joins decode as one U+FFFD,
    where the text, decoded first, has two. Such a page goes to the parser decoded."""
    half = b'\x80<a href="">\xe9'
    page = b"<html><head>" + half + b"</head><body>" + half + b"</body></html>"
    options = {"anchors": True, "edges": True}
    assert isinstance(html_source(page, "text/html"), str)
    assert extract(html_source(page, "text/html"), "http://h/", "bot", **options) == extract(
        decode_html(page, "text/html"), "http://h/", "bot", **options)
    assert extract(page, "http://h/", "bot", **options).anchors != extract(
        decode_html(page, "text/html"), "http://h/", "bot", **options).anchors


def test_utf8_pages_go_to_the_parser_as_they_came() -> None:
    body = "<p>caf\u00e9 \u65e5\u672c</p>".encode()
    assert html_source(body, "text/html") is body
    assert html_source(body, "text/html; charset=UTF-8") is body
