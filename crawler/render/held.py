"""Telling a page whose script holds its renderer from a machine that answers late.

At ``--render-timeout`` the settling wait may not be back for two reasons: a
script that never yields holds the renderer's main thread, so nothing in the
page can answer; or the machine is busy and every answer is late. The first
must be stopped at once (the page ends within the timeout and a second, and
its render slot is let go); the second must be waited for, or the page's
rendering is lost for its raw HTML. So while the page settles, its main thread
is asked for nothing (an expression of one number, through the tab's DevTools
session) every quarter of a second, and the answers are timed: a free main
thread answers, late perhaps on a loaded machine; a held one has been silent
since its script began, longer than :data:`LIVENESS`.

A held script is stopped from outside: V8 is told to end what it runs
(``Runtime.terminateExecution`` interrupts the main thread from the IO thread).
Should the page still not give its DOM, its renderer is crashed
(``Page.crash``, also handled off the main thread): each page has a renderer
process of its own, so no other page goes with it.
"""

from __future__ import annotations

import contextlib
import time

import anyio
from playwright.async_api import CDPSession
from playwright.async_api import Error as PlaywrightError

# Seconds past the deadline before a wait that is not back is looked into
PROBE_AFTER = 0.2
# While a page settles its main thread is asked this often, the answers timed: one
# that answered within LIVENESS seconds of the deadline is alive (a busy machine:
# waited for); one silent longer is held (a script that never yields: stopped)
HEARTBEAT = 0.25
LIVENESS = 1.5
# A held page is read, or given up, by this many seconds past the deadline
HELD_BUDGET = 0.9


class Heartbeat:
    """The last moment the tab's main thread answered, asked every :data:`HEARTBEAT`
    seconds (one question at a time: a held thread keeps the one it was asked)."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.asking = False  # False: no session to ask with, so nothing is known

    async def run(self, session: CDPSession | None) -> None:
        if session is None:
            return
        self.asking = True
        while True:
            try:
                await session.send("Runtime.evaluate", {"expression": "0",
                                                        "returnByValue": True})
            except PlaywrightError:
                return  # the tab is gone: its page is over anyway
            self.last = time.monotonic()
            await anyio.sleep(HEARTBEAT)

    def held(self) -> bool:
        """Has the main thread been silent for :data:`LIVENESS` seconds? (A script holds
        it; a thread merely slow on a loaded machine answered in that time.)"""
        return self.asking and time.monotonic() - self.last >= LIVENESS


async def stop_scripts(session: CDPSession | None, within: float) -> bool:
    """Tell V8 to end what the tab runs; True when it was asked."""
    if session is None:
        return False
    with contextlib.suppress(PlaywrightError), anyio.move_on_after(within):
        await session.send("Runtime.terminateExecution")
    return True


async def crash_renderer(session: CDPSession | None) -> None:
    """The tab's renderer process ended (a page that could not be stopped)."""
    if session is None:
        return
    with contextlib.suppress(PlaywrightError), anyio.move_on_after(1.0):
        await session.send("Page.crash")
