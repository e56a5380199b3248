"""SIGTERM as Ctrl-C while a crawl runs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterator
from types import FrameType
from typing import Any, ClassVar

_STOPPING = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait (pending, not lost) until the block ends.

    Their handlers raise where the program happens to be, and an object whose
    constructor is interrupted is left half made: asyncio's event loop, stopped
    while it opened its self-pipe, printed "Exception ignored in ...
    BaseEventLoop.__del__" and a traceback when it was freed, under the crawl's
    one-line message. Signals held while the loop is made arrive as soon as it is
    whole, where stopping is clean. Where threads' signal masks are not
    available (not POSIX), nothing is held."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class TermAsInterrupt:
    """Make SIGTERM stop a crawl the way Ctrl-C does (cron and systemd send it).

    Also when Ctrl-C is ignored: a shell starts a script's ``crawl … &`` with
    SIGINT ignored, and it stays ignored, but ``kill`` must still stop the crawl."""

    active: ClassVar[TermAsInterrupt | None] = None

    def __enter__(self) -> TermAsInterrupt:
        self._previous = signal.getsignal(signal.SIGTERM)
        self._previous_int = signal.getsignal(signal.SIGINT)
        if callable(self._previous_int) and self._previous_int is not signal.default_int_handler:
            # the launcher's handler: from here Ctrl-C is asyncio's, as Python's default
            signal.signal(signal.SIGINT, signal.default_int_handler)
        self.task: asyncio.Task[Any] | None = None  # the crawl's, while it runs
        self.fired = False
        signal.signal(signal.SIGTERM, self._handle)
        TermAsInterrupt.active = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        signal.signal(signal.SIGTERM, self._previous)
        signal.signal(signal.SIGINT, self._previous_int)
        TermAsInterrupt.active = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if callable(signal.getsignal(signal.SIGINT)):
            # Re-deliver as SIGINT, so asyncio cancels the crawl exactly as for Ctrl-C.
            os.kill(os.getpid(), signal.SIGINT)
            return
        # SIGINT is ignored: do what asyncio's runner does for Ctrl-C, cancel the
        # crawl's task (then _run raises KeyboardInterrupt); outside it, raise now.
        self.fired = True
        task = self.task
        if task is not None and not task.done():
            task.get_loop().call_soon_threadsafe(task.cancel)
        else:
            raise KeyboardInterrupt
