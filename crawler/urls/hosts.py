"""The host of an http(s) URL, read the way browsers read it (WHATWG URL §3.5).

A link's host decides which server a browser asks, so a crawler that reads it
differently lists URLs no visitor reaches, or, worse, treats
``https://evil.test\\@good.test/`` as good.test. The rules kept here:

* percent-escapes in a host are decoded (``ex%41mple.com`` is example.com);
* IDNA as UTS #46 non-transitional processing, which browsers apply and the
  IDNA2008 registry rules do not: ``ß`` stays ``ß`` (``xn--zca``), emoji and
  symbol domains are accepted; an ``xn--`` label that is not valid Punycode of
  a valid label is refused;
* a host ending in a number is an IPv4 address in any of the forms browsers
  take (``0x7f.1``, ``2130706433``), written dotted-decimal, or refused;
* an IPv6 literal is validated and written in its compressed form, without
  the dotted IPv4 tail (``[::ffff:c0a8:1]``), as browsers serialise it.

One departure, on purpose: browsers keep hosts holding characters such as
``!``, ``"`` or ``{``, which no DNS name can hold and which RFC 3986 does not
allow raw in a host; they are refused, so every URL written stays a valid URI.
"""

from __future__ import annotations

import ipaddress
import re
import string
import unicodedata
import urllib.parse
from functools import lru_cache

import idna

_HOST_OK = re.compile(r"[a-z0-9._\-]+")
_HEX = frozenset(string.hexdigits)
_OCTAL = frozenset("01234567")


@lru_cache(maxsize=4096)  # a crawl meets few hosts, each thousands of times
def normalize_host(host: str) -> str | None:
    """The one spelling of a URL's host, or ``None`` if browsers would refuse it too
    (or it is a host no DNS name can hold)."""
    if host.startswith("["):
        return _ipv6(host)
    if "%" in host:
        try:
            host = urllib.parse.unquote_to_bytes(host).decode("utf-8")
        except UnicodeDecodeError:
            return None
    ascii_host = host.lower() if host.isascii() and "xn--" not in host.lower() else (
        _domain_to_ascii(host))
    if not ascii_host:
        return None
    if _ends_in_number(ascii_host):
        return _ipv4(ascii_host)
    if (not _HOST_OK.fullmatch(ascii_host) or ".." in ascii_host
            or ascii_host.startswith(".")):
        return None
    return ascii_host


def _domain_to_ascii(host: str) -> str | None:
    """UTS #46 ToASCII, non-transitional, without the STD3 rules (as WHATWG asks)."""
    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
    except (idna.IDNAError, ValueError):
        return None
    labels = []
    for label in mapped.split("."):
        if label.startswith("xn--"):
            if not _valid_punycode(label):
                return None
            labels.append(label)
        elif label.isascii():
            labels.append(label)
        else:
            if unicodedata.normalize("NFC", label) != label:
                return None
            try:
                labels.append("xn--" + label.encode("punycode").decode("ascii"))
            except UnicodeError:
                return None
    return ".".join(labels)


def _valid_punycode(label: str) -> bool:
    """UTS #46 §4 step 4: an ``xn--`` label must decode to a valid, non-ASCII label."""
    if not label.isascii():
        return False
    try:
        decoded = label[4:].encode("ascii").decode("punycode")
    except (UnicodeError, ValueError, IndexError):
        return False
    if not decoded or decoded.isascii() or unicodedata.normalize("NFC", decoded) != decoded:
        return False
    try:  # every code point valid as it is: nothing mapped, nothing disallowed
        return idna.uts46_remap(decoded, std3_rules=False, transitional=False) == decoded
    except (idna.IDNAError, ValueError):
        return False


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    if last and last.isascii() and last.isdigit():
        return True
    return last[:2] in ("0x", "0X") and all(char in _HEX for char in last[2:])


def _ipv4_number(part: str) -> int | None:
    if not part:
        return None
    if part[:2] in ("0x", "0X"):
        digits, radix, allowed = part[2:], 16, _HEX
    elif len(part) > 1 and part[0] == "0":
        digits, radix, allowed = part[1:], 8, _OCTAL
    else:
        digits, radix, allowed = part, 10, frozenset(string.digits)
    if not all(char in allowed for char in digits):
        return None
    return int(digits, radix) if digits else 0


def _ipv4(host: str) -> str | None:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = [_ipv4_number(part) for part in parts]
    if any(number is None for number in numbers):
        return None
    values = [number for number in numbers if number is not None]
    if any(value > 255 for value in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1]
    for index, value in enumerate(values[:-1]):
        address += value * 256 ** (3 - index)
    return str(ipaddress.IPv4Address(address))


def _ipv6(host: str) -> str | None:
    if not host.endswith("]") or "%" in host:
        return None
    try:
        packed = ipaddress.IPv6Address(host[1:-1]).packed
    except ValueError:
        return None
    pieces = [int.from_bytes(packed[i:i + 2], "big") for i in range(0, 16, 2)]
    # the first longest run of two or more zero pieces becomes "::"
    best_start, best_length, index = -1, 1, 0
    while index < 8:
        if pieces[index] == 0:
            end = index
            while end < 8 and pieces[end] == 0:
                end += 1
            if end - index > best_length:
                best_start, best_length = index, end - index
            index = end
        else:
            index += 1
    words = [f"{piece:x}" for piece in pieces]
    if best_start < 0:
        return f"[{':'.join(words)}]"
    head = ":".join(words[:best_start])
    tail = ":".join(words[best_start + best_length:])
    return f"[{head}::{tail}]"
