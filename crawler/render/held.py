"""Telling a page whose script holds its renderer from a machine that answers late.

At ``--render-timeout`` the settling wait may not be back for two reasons: a
script that never yields holds the renderer's main thread, so nothing in the
page can answer; or the machine is busy and every answer is late. The first
must be stopped at once (the page ends within the timeout and a second, and
its render slot is let go); the second must be waited for, or the page's
rendering is lost for its raw HTML. The renderer is asked for nothing: an
expression of one number, through the tab's DevTools session. A free main
thread answers that in milliseconds even on a loaded machine; a held one
cannot answer at all.

A held script is stopped from outside: V8 is told to end what it runs
(``Runtime.terminateExecution`` interrupts the main thread from the IO thread).
Should the page still not give its DOM, its renderer is crashed
(``Page.crash``, also handled off the main thread): each page has a renderer
process of its own, so no other page goes with it.
"""

from __future__ import annotations

import contextlib

import anyio
from playwright.async_api import CDPSession
from playwright.async_api import Error as PlaywrightError

# Seconds past the deadline before a wait that is not back is looked into
PROBE_AFTER = 0.2
# Seconds a free main thread is given to evaluate one number, on a loaded machine
PROBE_WAIT = 0.3
# A held page is read, or given up, by this many seconds past the deadline
HELD_BUDGET = 0.9


async def responsive(session: CDPSession | None) -> bool:
    """Does the tab's main thread answer within :data:`PROBE_WAIT`? (No session:
    nothing to ask with, so it is taken as answering: the patient path.)"""
    if session is None:
        return True
    with anyio.move_on_after(PROBE_WAIT):
        try:
            await session.send("Runtime.evaluate", {"expression": "0", "returnByValue": True})
        except PlaywrightError:
            return False  # the tab or its renderer is gone: nothing to wait for
        return True
    return False


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
