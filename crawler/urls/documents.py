"""``--documents pdf,docx``: non-HTML files listed like pages, never downloaded.

A document is judged from its headers alone — status 200, the content type
its extension names, no ``X-Robots-Tag: noindex``, ``Last-Modified`` for its
lastmod — so it is asked for with HEAD, and, where a server refuses HEAD
(405 or 501), with a GET whose body is never read. The extension-to-type
table is ours, not the machine's ``/etc/mime.types``, so a crawl lists the
same files everywhere.
"""

from __future__ import annotations

from crawler.core.errors import ConfigError
from crawler.urls.normalize import path_of

DOCUMENT_TYPES = {
    "pdf": ("application/pdf",),
    "doc": ("application/msword",),
    "docx": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",),
    "xls": ("application/vnd.ms-excel",),
    "xlsx": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",),
    "ppt": ("application/vnd.ms-powerpoint",),
    "pptx": ("application/vnd.openxmlformats-officedocument.presentationml.presentation",),
    "odt": ("application/vnd.oasis.opendocument.text",),
    "ods": ("application/vnd.oasis.opendocument.spreadsheet",),
    "odp": ("application/vnd.oasis.opendocument.presentation",),
    "rtf": ("application/rtf", "text/rtf"),
    "txt": ("text/plain",),
    "csv": ("text/csv",),
    "epub": ("application/epub+zip",),
    "ps": ("application/postscript",),
}
HEAD_REFUSED = frozenset({405, 501})


def parse_documents(values: tuple[str, ...]) -> tuple[str, ...]:
    """``("pdf,DOCX", ".txt")`` → ``("docx", "pdf", "txt")``; an unknown one is refused."""
    found: set[str] = set()
    for value in values:
        for item in value.split(","):
            ext = item.strip().lower().lstrip(".")
            if not ext:
                continue
            if ext not in DOCUMENT_TYPES:
                raise ConfigError(f"--documents {item.strip()!r} is not a document type this "
                                  f"crawler knows ({', '.join(sorted(DOCUMENT_TYPES))})")
            found.add(ext)
    return tuple(sorted(found))


def content_types(extensions: tuple[str, ...]) -> frozenset[str]:
    return frozenset(kind for ext in extensions for kind in DOCUMENT_TYPES[ext])


def extension(url: str) -> str:
    """The lower-case extension of a URL's last path segment (``""`` for none)."""
    name = path_of(url).rpartition("/")[2]
    stem, dot, ext = name.rpartition(".")
    return ext.lower() if dot and stem else ""
