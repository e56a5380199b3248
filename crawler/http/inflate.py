"""Content-Encoding decoding with a hard cap on the bytes it may produce.

Bodies are read raw from the transport and inflated here rather than by the
HTTP library, because a library inflates without a limit: a 64 KiB gzip bomb
becomes gigabytes in memory before anyone can count them. Here the count is
checked after every chunk, so a bomb costs no more than a large page.
"""

from __future__ import annotations

import zlib


class TooLarge(Exception):
    """The decoded body passed its limit."""


class Undecodable(Exception):
    """The body's Content-Encoding is unknown or its compressed data is corrupt."""


class Inflater:
    """Feed raw chunks, get decoded bytes; raises :class:`TooLarge` past ``limit``."""

    def __init__(self, encoding: str, limit: int, *, truncate: bool = False) -> None:
        self.limit = limit
        self.size = 0
        # With ``truncate``, the first ``limit`` bytes are kept instead of raising,
        # and ``full`` says when to stop reading (robots.txt: the first 512 KiB count).
        self.truncate = truncate
        self.full = False
        self._raw_deflate_fallback = False
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._zlib = None
        elif encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
            self._raw_deflate_fallback = True
        else:
            raise Undecodable(f"unsupported content-encoding {encoding!r}")

    def feed(self, chunk: bytes) -> bytes:
        if self._zlib is None:
            out = chunk
        else:
            try:
                out = self._zlib.decompress(chunk, self.limit - self.size + 1)
            except zlib.error:
                if self._raw_deflate_fallback and self.size == 0:
                    # Some servers send raw deflate without the zlib header.
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._raw_deflate_fallback = False
                    return self.feed(chunk)
                raise Undecodable("corrupt compressed body") from None
            self._raw_deflate_fallback = False
        self.size += len(out)
        if self.size > self.limit:
            if not self.truncate:
                raise TooLarge
            out = out[: len(out) - (self.size - self.limit)]
            self.size, self.full = self.limit, True
        return out
