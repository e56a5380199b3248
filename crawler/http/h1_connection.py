"""One HTTP/1.1 connection of our client (``h1_transport.py``): an asyncio protocol
that writes a request and parses its answer with llhttp, a request at a time.

Apart from the pool because it is the part that reads the wire: the limits on
an answer's head, interim answers, bodies framed every way HTTP/1.1 allows,
back-pressure, and the one rule that makes a connection stale (it closed before
any byte of an answer came, which the pool may retry on a new one).
"""

from __future__ import annotations

import asyncio
import re

import httptools
import httpx

# Past this many unread body bytes the socket is paused until the reader catches up.
HIGH_WATER = 256 * 1024
# Each connection reads into a buffer of its own. asyncio's default read allocates
# 256 KiB for every recv() and shrinks it after: past glibc's mmap threshold, that
# is an mmap and munmap a read (17 us against 3 us for a 20 KB answer, measured).
READ_BUFFER = 128 * 1024


# Control characters no header value may hold (HTAB aside): llhttp's leniency for
# obs-fold also stops it checking them, so they are refused here, as httpcore does.
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")


class Stale(Exception):
    """The connection closed before any byte of an answer came."""


class Connection(asyncio.BufferedProtocol):
    """One HTTP/1.1 connection: a request at a time, its answer parsed by llhttp."""

    def __init__(self, key: tuple[bytes, bytes, int], max_header_bytes: int,
                 max_headers: int, max_head_bytes: int) -> None:
        self.key = key
        self.max_head_bytes = max_head_bytes
        self.head_bytes = 0
        self.max_header_bytes = max_header_bytes
        self.max_headers = max_headers
        self.transport: asyncio.Transport | None = None
        self.lost = False
        self.discarded = False
        self.idle_since = 0.0
        self.parser: httptools.HttpResponseParser | None = None
        self.head_only = False
        self.got_bytes = False
        self.headers: list[tuple[bytes, bytes, bytes]] = []  # name, lower-cased, value
        self.head_waiter: asyncio.Future[tuple[int, list[tuple[bytes, bytes, bytes]]]] | None = (
            None)
        # parsed, not yet handed over
        self.head: tuple[int, list[tuple[bytes, bytes, bytes]]] | None = None
        self.body_waiter: asyncio.Future[None] | None = None
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.paused = False
        self.complete = False
        self.informational = False
        self.until_close = False  # a body delimited by the connection's end
        self.keep_alive = False
        self.error: BaseException | None = None
        self.buffer = memoryview(bytearray(READ_BUFFER))

    # -- the requesting side --------------------------------------------------------

    def usable(self, now: float, keepalive: float) -> bool:
        return not self.lost and now - self.idle_since < keepalive

    def send(self, head: bytes, head_only: bool) -> None:
        if self.lost or self.transport is None:
            raise Stale()
        self.parser = httptools.HttpResponseParser(self)
        # RFC 9112 as a user agent reads it, and as httpcore and browsers do: a header
        # continued on the next line (obs-fold, 5.2) is one value with a space, and a
        # bare LF ends a line of the head (2.2)
        self.parser.set_dangerous_leniencies(lenient_headers=True,
                                             lenient_optional_cr_before_lf=True)
        self.head_only = head_only
        self.got_bytes = self.complete = self.informational = self.until_close = False
        self.keep_alive = False
        self.head_bytes = 0
        self.headers = []
        self.chunks = []
        self.buffered = 0
        self.error = None
        self.head = None
        self.head_waiter = asyncio.get_running_loop().create_future()
        self.transport.write(head)

    def answer(self) -> asyncio.Future[tuple[int, list[tuple[bytes, bytes, bytes]]]]:
        """What the answer's status and headers are awaited on (set by :meth:`send`)."""
        waiter = self.head_waiter
        assert waiter is not None
        return waiter

    def reusable(self) -> bool:
        return (self.complete and self.keep_alive and self.error is None and not self.lost
                and not self.until_close)

    def take(self) -> bytes | None:
        """What arrived of the body since the last call (``None``: nothing yet)."""
        if not self.chunks:
            return None
        chunks, self.chunks, self.buffered = self.chunks, [], 0
        if self.paused and self.transport is not None and not self.lost:
            self.paused = False
            self.transport.resume_reading()
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def abandon(self) -> None:
        """The request was given up before its answer was awaited (what ran after
        sending it raised): its failure, set when the connection's loss arrives,
        would have no reader, and asyncio prints such an exception at exit."""
        waiter = self.head_waiter
        if waiter is not None and not waiter.done():
            waiter.cancel()

    def close(self) -> None:
        if self.transport is not None and not self.lost:
            self.transport.close()
        self.lost = True

    # -- asyncio's side -----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self.buffer[:nbytes])  # llhttp copies what it hands on

    def data_received(self, data: bytes | memoryview) -> None:
        parser = self.parser
        if parser is None or self.complete:
            self._fail(httpx.RemoteProtocolError("data from the server with no request asked"))
            return
        self.got_bytes = True
        if self.head is None:
            self.head_bytes += len(data)
            if self.head_bytes > self.max_head_bytes:
                self._fail(httpx.RemoteProtocolError(
                    f"an answer's head longer than {self.max_head_bytes} bytes"))
                return
        try:
            parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(httpx.RemoteProtocolError("the server switched protocols"))
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__
            self._fail(cause if isinstance(cause, httpx.HTTPError) else
                       httpx.RemoteProtocolError(str(exc)))
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"malformed answer: {exc}"))
        # The head is handed over once the whole read is parsed: where the body came
        # with it (most pages, on a fast connection), the request's task then finds
        # the answer complete and reads it without waiting again.
        waiter = self.head_waiter
        if self.head is not None and waiter is not None and not waiter.done():
            waiter.set_result(self.head)

    def eof_received(self) -> bool:
        return False  # close the transport: no request is ever sent after a half-close

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self.parser is None or self.complete or self.error is not None:
            return
        head = self.head_waiter
        if head is not None and not head.done():
            if not self.got_bytes:
                self._fail(Stale())
            else:
                self._fail(httpx.ReadError("the server closed the connection mid-head"))
        elif self.until_close:
            self.complete = True
            self._wake_body()
        else:
            self._fail(httpx.ReadError("the server closed the connection mid-body"))

    def pause_writing(self) -> None:  # a request head never fills a socket buffer
        pass

    def resume_writing(self) -> None:
        pass

    # -- llhttp's callbacks --------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.complete:  # a second answer to one request: nothing on this connection is
            raise httpx.RemoteProtocolError("more answers than requests")  # to be trusted

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(name) + len(value) > self.max_header_bytes:
            raise httpx.RemoteProtocolError(
                f"a header line is longer than {self.max_header_bytes} bytes")
        if len(self.headers) >= self.max_headers:
            raise httpx.RemoteProtocolError(f"more than {self.max_headers} header lines")
        if _CONTROL.search(value) is not None:
            raise httpx.RemoteProtocolError("a control character in a header value")
        self.headers.append((name, name.lower(), value))

    def on_headers_complete(self) -> None:
        parser = self.parser
        assert parser is not None
        status = parser.get_status_code()
        if 100 <= status < 200:  # 100 Continue, 103 Early Hints: the answer is yet to come
            self.informational = True
            self.headers = []
            return
        headers = self.headers
        chunked = length = False
        for _name, lowered, value in headers:
            if lowered == b"content-length":
                length = True
            elif lowered == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        self.until_close = (not (chunked or length) and not self.head_only
                            and status not in (204, 304))
        if self.head_only:  # a HEAD answer has no body, whatever its length says
            self.complete = True
            self.keep_alive = parser.should_keep_alive()
        self.head = (status, headers)

    def on_body(self, body: bytes) -> None:
        if self.head_only:
            return
        self.chunks.append(body)
        self.buffered += len(body)
        if self.buffered > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake_body()

    def on_message_complete(self) -> None:
        if self.informational:
            self.informational = False
            return
        if self.head_only:
            return  # complete since its head
        self.complete = True
        # asked here: once the message is over, llhttp has forgotten its "Connection"
        self.keep_alive = self.parser is not None and self.parser.should_keep_alive()
        self._wake_body()

    # -- helpers -------------------------------------------------------------------

    def _fail(self, error: BaseException) -> None:
        if self.complete:  # the answer is whole; only the connection is spoilt
            self.close()
            return
        if self.error is None:
            self.error = error
        head = self.head_waiter
        if head is not None and not head.done():
            if self.head is not None:  # the answer began: its body is what failed
                head.set_result(self.head)
            else:
                head.set_exception(error)
        self._wake_body()
        if not self.lost and self.transport is not None:
            self.transport.close()
            self.lost = True

    def _wake_body(self) -> None:
        waiter = self.body_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
