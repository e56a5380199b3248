"""The parse child's wire: length-prefixed frames, one a batch, both ways.

Answers are one pickle a frame. Pages are the pickle of all but their bodies, then
the bodies as they are (:func:`pages_frame`). Its own module so that the sandbox's
process handling and the bytes it sends are read apart.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime
from operator import attrgetter
from typing import TYPE_CHECKING

from crawler.core.response import Response

if TYPE_CHECKING:
    from crawler.page.soft_404 import ProbeAnswer

LENGTH_BYTES = 4
_RESPONSE_FIELDS = tuple(field.name for field in fields(Response))
_BODY = _RESPONSE_FIELDS.index("body")  # None in the pickle: the body follows it
# the fields but the body, read in C (a tuple: there are many): a comprehension of
# getattr took 3 µs a page
_BUT_BODY = attrgetter(*(name for name in _RESPONSE_FIELDS if name != "body"))
# (ticket, the answer's fields, its body, depth, when, rendered, probe answer)
Outgoing = tuple[int, tuple[object, ...], "bytes | None", int, datetime, bool,
                 "ProbeAnswer | None"]


def frames_in(buffer: bytearray) -> tuple[list[bytes], int]:
    """The whole frames at the start of ``buffer``, and how many bytes they took.

    Each is copied once, through a view: slicing the bytearray copied a batch of
    pages twice, the first into a temporary past malloc's mmap threshold (a 250 KB
    frame: 106 µs, against 6)."""
    frames = []
    start = 0
    with memoryview(buffer) as view:
        while len(buffer) - start >= LENGTH_BYTES:
            end = start + LENGTH_BYTES + int.from_bytes(view[start:start + LENGTH_BYTES], "big")
            if len(buffer) < end:
                break
            frames.append(bytes(view[start + LENGTH_BYTES:end]))
            start = end
    return frames, start


def batch_frame(items: Sequence[object]) -> bytes:
    """A batch (of pages, or of their answers) as one length-prefixed pickle."""
    data = pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(LENGTH_BYTES, "big") + data


def wire_of(response: Response) -> tuple[object, ...]:
    """A response's fields for the pickle, its body left out (:func:`pages_frame`)."""
    wire = _BUT_BODY(response)
    return (*wire[:_BODY], None, *wire[_BODY:])


def pages_frame(pages: Sequence[Outgoing]) -> bytes:
    """A batch of pages for the child: the pickle of all but their bodies, then the
    bodies as they are. Pickled, each body was copied into a buffer grown by realloc,
    and the whole batch again behind its length; here a body is copied once, into
    the frame (13 pages of 20 KB: 24 to 36 µs a page to frame before, 2 to 4)."""
    bodies = [body for _t, _w, body, *_rest in pages if body]
    meta = pickle.dumps([(ticket, wire, -1 if body is None else len(body), *rest)
                         for ticket, wire, body, *rest in pages],
                        protocol=pickle.HIGHEST_PROTOCOL)
    size = LENGTH_BYTES + len(meta) + sum(map(len, bodies))
    return b"".join([size.to_bytes(LENGTH_BYTES, "big"),
                     len(meta).to_bytes(LENGTH_BYTES, "big"), meta, *bodies])


def pages_in(frame: bytes) -> list[tuple[int, Response, int, datetime, bool,
                                          ProbeAnswer | None]]:
    """The pages of a frame :func:`pages_frame` made, each with its body again."""
    start = LENGTH_BYTES + int.from_bytes(frame[:LENGTH_BYTES], "big")
    with memoryview(frame) as view:
        meta = pickle.loads(view[LENGTH_BYTES:start])
    pages = []
    for ticket, wire, size, *rest in meta:
        response = Response(*wire)
        if size >= 0:
            response.body, start = frame[start:start + size], start + size
        pages.append((ticket, response, *rest))
    return pages
