"""The parts of an HTTP answer the crawler reads: vocabulary, so that reading a page
(``crawler.page``) needs nothing of the code that speaks HTTP (``crawler.http``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from crawler.core.errors import ErrorKind


@dataclass(slots=True)
class Response:
    """The parts of an HTTP answer the crawler uses (no httpx types leak out)."""

    url: str
    status: int | None = None
    content_type: str | None = None
    location: str | None = None
    last_modified: str | None = None
    etag: str | None = None
    x_robots_tag: list[str] = field(default_factory=list)
    link: list[str] = field(default_factory=list)
    retry_after: str | None = None
    length: int | None = None  # Content-Length, when the server sent one
    body: bytes | None = None
    error: ErrorKind | None = None
    # an internal-error's exception, "Type: message" (the only free text of a Response)
    detail: str | None = None
    elapsed: float = 0.0
    attempts: int = 1
