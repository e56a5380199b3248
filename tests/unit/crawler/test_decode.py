from __future__ import annotations

import codecs

import pytest

from crawler.page.decode import decode_html, sniff_encoding


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
