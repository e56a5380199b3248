"""Adds the ``Sitemap:`` line to a site's robots.txt — pure and idempotent.

Everything else in the file is kept byte for byte: the rules are the site
owner's, and a changed rule could open or close a whole site to crawlers.
"""

from __future__ import annotations


def _sitemap_value(line: bytes) -> bytes | None:
    field, colon, value = line.partition(b":")
    if colon and field.strip().lower() == b"sitemap":
        return value.split(b"#", 1)[0].strip()
    return None


def with_sitemap_line(robots_txt: bytes | None, sitemap_url: str) -> bytes:
    """``robots_txt`` with exactly one ``Sitemap: sitemap_url`` line.

    Lines naming other sitemaps stay; repeated lines for this URL are reduced
    to the first.
    """
    wanted = sitemap_url.encode("ascii")
    text = robots_txt or b""
    lines = text.splitlines(keepends=True)
    kept: list[bytes] = []
    found = False
    for line in lines:
        if _sitemap_value(line) == wanted:
            if found:
                continue
            found = True
        kept.append(line)
    result = b"".join(kept)
    if found:
        return result
    if result and not result.endswith((b"\n", b"\r")):
        result += b"\n"
    if result:
        result += b"\n"
    return result + b"Sitemap: " + wanted + b"\n"
