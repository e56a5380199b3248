"""A watch over the memory of the browser's renderers: a page cannot take the machine's.

V8's own cap (``--max-old-space-size``, set at launch: :func:`caps`) bounds a
renderer's JavaScript heap, but not what lives outside it: typed arrays'
buffers, canvases, the DOM. So on Linux the renderer processes under this
process are looked at every :data:`EVERY` seconds, and one past its cap, or the
largest when all of them together pass theirs, is killed. Its tab crashes, the
renderer reports that page ``out of memory``, and the crawl goes on: each tab
has a renderer of its own, so no other page dies with it. Elsewhere (no
``/proc``) only V8's cap applies.

Sizes are anonymous resident memory (``RssAnon``: the heap, buffers and DOM a page
made), not RSS, which counts the code every renderer shares once for each. A
look costs a listing of ``/proc`` and a read of each renderer's status: a
process's ancestry is read once, when it first appears, and only the few under
this one have their command line read again until they show they are renderers
(a renderer is forked from Chromium's zygote, and names itself a moment later),
so a page growing fast is caught within a tenth of a second.

The caps are shares of one budget for the whole crawl (:data:`PAGES_BUDGET_MB`),
so that a crawl of two workers (a browser each) with a page that eats memory
in each stays within 1.5 GB: the browsers, their ordinary pages and the crawl
take about 0.9 GB of it.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio

EVERY = 0.1
# what the renderers of the whole crawl may hold together, shared among its workers
PAGES_BUDGET_MB = 768
PROC = Path("/proc")


def caps(workers: int) -> tuple[int, int, int]:
    """(JavaScript heap, one renderer, all renderers of this browser), in MB, for a
    crawl of ``workers`` browsers: 256/384/768 with one, 192/256/384 with two."""
    tree = PAGES_BUDGET_MB // max(1, workers)
    renderer = max(192, min(384, tree * 2 // 3))
    return max(128, renderer - 64 if renderer < 384 else 256), renderer, tree


class MemoryWatch:
    """Kills renderers over their cap; remembers when, to name the crash it causes."""

    def __init__(self, renderer_mb: int, tree_mb: int) -> None:
        self.renderer_mb = renderer_mb
        self.tree_mb = tree_mb
        self.last_kill: tuple[float, str] | None = None  # when, and why
        self._parents: dict[int, int] = {}
        self._under_us: set[int] = set()  # processes under this one
        self._ours: set[int] = set()  # of those, the renderers

    @staticmethod
    def available() -> bool:
        return (PROC / "self" / "stat").exists()

    def why_crashed(self) -> str:
        """What a crash just seen most likely was."""
        if self.last_kill is not None and time.monotonic() - self.last_kill[0] < 5:
            return self.last_kill[1]
        return "out of memory (past its JavaScript heap's cap), or crashed"

    def renderers(self, root: int) -> dict[int, int]:
        """This process's renderer processes, with their anonymous resident MB."""
        try:
            alive = {int(name) for name in os.listdir(PROC) if name.isdigit()}
        except OSError:
            return {}
        for gone in set(self._parents) - alive:
            del self._parents[gone]
            self._under_us.discard(gone)
            self._ours.discard(gone)
        new = alive - set(self._parents)
        for pid in new:
            try:
                fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
                self._parents[pid] = int(fields[1])
            except (OSError, IndexError, ValueError):
                self._parents[pid] = 0
        self._under_us.update(pid for pid in new if self._under(pid, root))
        self._ours.update(pid for pid in self._under_us - self._ours if self._is_renderer(pid))
        sizes: dict[int, int] = {}
        for pid in self._ours:
            try:
                status = (PROC / str(pid) / "status").read_text()
                sizes[pid] = int(status.split("RssAnon:", 1)[1].split()[0]) // 1024
            except (OSError, ValueError, IndexError):
                continue
        return sizes

    def _under(self, pid: int, root: int) -> bool:
        ancestor, steps = self._parents.get(pid), 0
        while ancestor not in (None, 0, 1, root) and steps < 16:
            ancestor, steps = self._parents.get(ancestor), steps + 1  # type: ignore[arg-type]
        return ancestor == root

    @staticmethod
    def _is_renderer(pid: int) -> bool:
        try:
            return b"--type=renderer" in (PROC / str(pid) / "cmdline").read_bytes()
        except OSError:
            return False

    def check(self) -> int | None:
        """One look; the pid killed, if any."""
        sizes = self.renderers(os.getpid())
        if not sizes:
            return None
        pid, size = max(sizes.items(), key=lambda item: item[1])
        together = sum(sizes.values())
        if size > self.renderer_mb:
            why = (f"out of memory: its renderer reached {size} MB (cap {self.renderer_mb} "
                   "MB) and was stopped")
        elif together > self.tree_mb:
            why = (f"out of memory: the renderers together reached {together} MB (cap "
                   f"{self.tree_mb} MB); its own, the largest at {size} MB, was stopped")
        else:
            return None
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            return None
        self._ours.discard(pid)
        self._under_us.discard(pid)
        self.last_kill = (time.monotonic(), why)
        return pid

    async def run(self) -> None:
        """Look every :data:`EVERY` seconds until cancelled (a thread does the
        reading, so the crawl's event loop is not held by ``/proc``)."""
        while True:
            await anyio.to_thread.run_sync(self.check)
            await anyio.sleep(EVERY)
