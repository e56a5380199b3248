"""What HTTP ``Link`` headers (RFC 8288) say of a page: its canonical and its
language versions, which a PDF (or any answer) can declare only there."""

from __future__ import annotations

import re
from collections.abc import Iterable

from crawler.urls.normalize import resolve_link

_LINK_HEADER = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,]*)*)")
_REL_PARAM = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))""", re.IGNORECASE)
_HREFLANG_PARAM = re.compile(r"""hreflang\s*=\s*(?:"([^"]*)"|([^\s;,]+))""", re.IGNORECASE)


def alternates_from_link_headers(values: Iterable[str], page_url: str
                                 ) -> list[tuple[str, str | None]]:
    """``Link: <…>; rel="alternate"; hreflang="…"`` (RFC 8288), as (code, URL)."""
    found: list[tuple[str, str | None]] = []
    for value in values:
        for match in _LINK_HEADER.finditer(value):
            params = match.group(2)
            rels = [(rel.group(1) or rel.group(2) or "").lower().split()
                    for rel in _REL_PARAM.finditer(params)]
            code = _HREFLANG_PARAM.search(params)
            if code and any("alternate" in rel for rel in rels):
                found.append(((code.group(1) or code.group(2) or "").strip(),
                              resolve_link(page_url, match.group(1).strip())))
    return found


def canonical_from_link_headers(values: Iterable[str], page_url: str) -> str | None:
    """The ``rel="canonical"`` target of HTTP ``Link`` headers (RFC 8288), if one."""
    found: set[str | None] = set()
    for value in values:
        for match in _LINK_HEADER.finditer(value):
            for rel in _REL_PARAM.finditer(match.group(2)):
                rels = (rel.group(1) or rel.group(2) or "").lower().split()
                if "canonical" in rels:
                    found.add(resolve_link(page_url, match.group(1).strip()))
    return found.pop() if len(found) == 1 else None
