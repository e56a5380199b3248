"""The socket between the coordinator and a worker process: length-prefixed pickled
frames, each carrying every message queued since the last one.

Outcomes wait up to a few milliseconds, and jobs less, to share a frame: each
frame costs a send, a wake-up and a turn of the loop on both sides, and on
loopback a frame a message made two workers 1.25x one instead of 1.6x.
"""

from __future__ import annotations

import pickle
from http.cookiejar import Cookie
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import UNIXSocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from crawler.http.fetch import Fetcher

Message = tuple[Any, ...]
LENGTH_BYTES = 4
# How long a worker's outcomes, and the coordinator's jobs, wait for company in
# a frame: a few ms against the 50+ ms of a request on the Internet. On
# loopback, with a frame a message two workers gave 1.25x one; batched, 1.6x
# (bench/README.md).
OUTCOME_LINGER = 0.005
JOB_LINGER = 0.002
# A worker says it is alive this often (crawler.engine.worker_pool gives up one
# that goes quiet).
BEAT_SECONDS = 1.0


class Link:
    """One end of a worker's socket: frames out in batches, frames in as lists."""

    def __init__(self, stream: UNIXSocketStream, linger: float) -> None:
        self.stream = stream
        self.linger = linger
        self.reader = BufferedByteReceiveStream(stream)
        self._outbox: list[Message] = []
        self._wake = anyio.Event()
        self._urgent = anyio.Event()

    def post(self, message: Message, *, urgent: bool = False) -> None:
        """Queue a message for the next frame (never blocks, so sync code can post).
        An urgent one (the pacing gate's) cuts the linger short."""
        self._outbox.append(message)
        self._wake.set()
        if urgent:
            self._urgent.set()

    async def send_loop(self) -> None:
        while True:
            await self._wake.wait()
            if self.linger and not self._urgent.is_set():
                # let the messages of the next few milliseconds share this frame: each
                # frame costs a send, a wake-up and a turn of the loop on both sides
                with anyio.move_on_after(self.linger):
                    await self._urgent.wait()
            self._wake, self._urgent = anyio.Event(), anyio.Event()
            batch, self._outbox = self._outbox, []
            try:
                await self.send_now(batch)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return  # the other end is gone: the receiving side says what happened

    async def send_now(self, batch: list[Message]) -> None:
        data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        await self.stream.send(len(data).to_bytes(LENGTH_BYTES, "big") + data)

    async def receive(self) -> list[Message] | None:
        """The next frame's messages, or ``None`` once the other end has closed."""
        try:
            size = int.from_bytes(await self.reader.receive_exactly(LENGTH_BYTES), "big")
            batch: list[Message] = pickle.loads(await self.reader.receive_exactly(size))
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError,
                anyio.ClosedResourceError, ConnectionError):
            return None
        return batch




def set_jar(fetcher: Fetcher, cookies: list[Cookie]) -> None:
    jar = fetcher.cookies.jar
    jar.clear()
    for cookie in cookies:
        jar.set_cookie(cookie)
