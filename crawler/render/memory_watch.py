"""A watch over the memory of the browser's renderers: a page cannot take the machine's.

V8's own cap (``--max-old-space-size``, set at launch) bounds a renderer's
JavaScript heap, but not what lives outside it: typed arrays' buffers, canvases,
the DOM. So on Linux the renderer processes under this process are looked at
every :data:`EVERY` seconds (``/proc``: their parent chain and resident size),
and one past :data:`RENDERER_MB`, or the largest when all together pass
:data:`TREE_MB`, is killed. Sizes are anonymous resident memory (``RssAnon``:
the heap, buffers and DOM a page made), not RSS, which counts the code every
renderer shares once for each. Its tab crashes, the renderer reports that page
``out of memory``, and the crawl goes on: each tab has a renderer of its own, so
no other page dies with it. Elsewhere (no ``/proc``) only V8's cap applies.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio

EVERY = 0.5
RENDERER_MB = 768  # one page's renderer: 512 MB of heap, and its DOM and buffers
TREE_MB = 1280  # every renderer of this process together
PROC = Path("/proc")


def _renderers(root: int) -> dict[int, int]:
    """Renderer processes descending from ``root``, with their anonymous resident MB."""
    parents: dict[int, int] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
    found: dict[int, int] = {}
    for pid in parents:
        ancestor, steps = parents.get(pid), 0
        while ancestor not in (None, 0, 1, root) and steps < 16:
            ancestor, steps = parents.get(ancestor), steps + 1  # type: ignore[arg-type]
        if ancestor != root:
            continue
        try:
            if b"--type=renderer" not in (PROC / str(pid) / "cmdline").read_bytes():
                continue
            status = (PROC / str(pid) / "status").read_text()
            kb = int(status.split("RssAnon:", 1)[1].split()[0])
        except (OSError, ValueError, IndexError):
            continue
        found[pid] = kb // 1024
    return found


class MemoryWatch:
    """Kills renderers over their cap; remembers when, to name the crash it causes."""

    def __init__(self, renderer_mb: int = RENDERER_MB, tree_mb: int = TREE_MB) -> None:
        self.renderer_mb = renderer_mb
        self.tree_mb = tree_mb
        self.last_kill: tuple[float, str] | None = None  # when, and why

    @staticmethod
    def available() -> bool:
        return (PROC / "self" / "stat").exists()

    def why_crashed(self) -> str:
        """What a crash just seen most likely was."""
        if self.last_kill is not None and time.monotonic() - self.last_kill[0] < 5:
            return self.last_kill[1]
        return "out of memory (past its JavaScript heap's cap), or crashed"

    def check(self) -> int | None:
        """One look; the pid killed, if any."""
        sizes = _renderers(os.getpid())
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
        self.last_kill = (time.monotonic(), why)
        return pid

    async def run(self) -> None:
        """Look every :data:`EVERY` seconds until cancelled (a thread does the
        reading, so the crawl's event loop is not held by ``/proc``)."""
        while True:
            await anyio.to_thread.run_sync(self.check)
            await anyio.sleep(EVERY)
