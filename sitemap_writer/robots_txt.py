"""Adds the ``Sitemap:`` line to a site's robots.txt — pure and idempotent.

Everything else in the file is kept byte for byte: the rules are the site
owner's, and a changed rule could open or close a whole site to crawlers.
The line goes at the end, unless that is past what readers parse: RFC 9309
asks them to read at least 500 KiB, and many stop there, so in a longer file
it goes first (a ``Sitemap:`` line belongs to no group, so it may stand
anywhere).
"""

from __future__ import annotations

# RFC 9309 §2.5: the least a reader parses; a line past it may never be seen.
READ_BY_ALL = 500 * 1024
_BOM = b"\xef\xbb\xbf"


def _sitemap_value(line: bytes) -> bytes | None:
    field, colon, value = line.partition(b":")
    if colon and field.strip().lower().removeprefix(_BOM) == b"sitemap":
        return value.split(b"#", 1)[0].strip()
    return None


def with_sitemap_line(robots_txt: bytes | None, sitemap_url: str) -> bytes:
    """``robots_txt`` with exactly one ``Sitemap: sitemap_url`` line, within the
    first 500 KiB.

    Lines naming other sitemaps stay; repeated lines for this URL are reduced
    to the first (or, when the first is past 500 KiB, moved to the top).
    """
    wanted = sitemap_url.encode("ascii")
    line = b"Sitemap: " + wanted + b"\n"
    text = robots_txt or b""
    kept: list[bytes] = []
    found_at: int | None = None
    size = 0
    for part in text.splitlines(keepends=True):
        if _sitemap_value(part) == wanted:
            if found_at is not None:
                continue
            found_at = size
        kept.append(part)
        size += len(part)
    result = b"".join(kept)
    if found_at is not None and found_at + len(line) <= READ_BY_ALL:
        return result
    if found_at is not None:  # ours, out of reach: taken out, and put first below
        result = b"".join(part for part in kept if _sitemap_value(part) != wanted)
    elif result and not result.endswith((b"\n", b"\r")):
        result += b"\n"
    if result and len(result) + 1 + len(line) <= READ_BY_ALL:
        return result + b"\n" + line
    if not result:
        return line
    bom = _BOM if result.startswith(_BOM) else b""
    return bom + line + result[len(bom):]
