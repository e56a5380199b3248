"""Python's cyclic garbage collector, off while the crawler starts.

Importing the crawler builds some 400 modules' worth of classes, functions and
dataclass methods, and every 700 new objects the collector walked them all
again: ~13 ms of the 0.15 s from exec to the first request (issue #27's
goal), for no garbage (start-up frees next to nothing). So the command turns
it off first thing (``crawler.cli.launch``) and the crawl turns it back on
once its first request is out (``crawler.engine.coordinator``), after
freezing what start-up built: those objects live as long as the process, so
no later collection walks them again, and a child forked from here (the
parse child) does not have their pages copied by the collector's writes.

Only what :func:`pause` turned off is turned back on: a program that imports
the crawler with its own collector settings keeps them.
"""

from __future__ import annotations

import gc

_paused = [False]


def pause() -> None:
    """Turn the collector off for start-up, if it is on."""
    if gc.isenabled():
        gc.disable()
        _paused[0] = True


def resume() -> None:
    """Start-up is over: freeze what it built and turn the collector back on
    (only if :func:`pause` turned it off; once)."""
    if _paused[0]:
        _paused[0] = False
        gc.freeze()
        gc.enable()
