"""Which page a parse child is reading, and since when, told without a message.

The parent's watchdog (crawler.engine.parse_sandbox) times the page the child is
on; a write and a wakeup per page would cost the crawling process more than the
page's parse does, so the child writes the two facts into memory shared with
its parent instead."""

from __future__ import annotations

import mmap
import struct
import time


class Progress:
    """The ticket of the page a child is reading (0: none) and when it began, in memory
    shared by the parent and the child forked with it (no write, no wakeup).

    The child writes the time before the ticket, and the parent reads the ticket
    before and after the time, keeping the reading only if both agree: an 8-byte
    aligned store is whole on the machines Python runs on, so a reading never pairs
    one page's ticket with another's time."""

    _TICKET = struct.Struct("=q")
    _SINCE = struct.Struct("=d")

    def __init__(self) -> None:
        self.memory = mmap.mmap(-1, 24)  # anonymous and shared: the fork inherits it

    def begin(self, ticket: int) -> None:
        self._SINCE.pack_into(self.memory, 8, time.monotonic())
        self._SINCE.pack_into(self.memory, 16, time.process_time())
        self._TICKET.pack_into(self.memory, 0, ticket)

    def cpu_at_start(self) -> float:
        """The child's CPU time when it began the page it is reading."""
        return self._SINCE.unpack_from(self.memory, 16)[0]

    def idle(self) -> None:
        self._TICKET.pack_into(self.memory, 0, 0)

    def reading(self) -> tuple[int, float] | None:
        """(ticket, since) of the page being read; None when idle or mid-write."""
        (ticket,) = self._TICKET.unpack_from(self.memory, 0)
        (since,) = self._SINCE.unpack_from(self.memory, 8)
        (again,) = self._TICKET.unpack_from(self.memory, 0)
        return (ticket, since) if ticket and ticket == again else None

    def ticket(self) -> int:
        """The page the child was reading when it stopped (0: none)."""
        return self._TICKET.unpack_from(self.memory, 0)[0]

    def close(self) -> None:
        self.memory.close()
