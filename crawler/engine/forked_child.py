"""What every child this process forks does first: die with its parent, leave
signals to it, keep only its own socket, and (for a parser) cap its memory.

Its own module so that a child that reads no page (the public-suffix one,
``suffix_child.py``) and the crawl's start do not import the page reader with
it: the parse child's module and the reader load while the first request is
on the wire (``coordinator.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import socket

# room for the parser above what the child has when it starts: a 10 MB page of
# ordinary HTML builds a DOM of a few hundred MB
MEMORY_HEADROOM = 2 * 1024**3
_PR_SET_PDEATHSIG = 1


def become_child(sock: socket.socket, *, cap_memory: bool = True) -> None:
    """Die with the parent, leave signals to it, keep no descriptor but ``sock``,
    and cap the address space (unless ``cap_memory`` is false). Nothing is imported
    here: a module lock another thread held at the fork is never released in the
    child, which would then wait for ever, before it could die with its parent."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(0)
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    keep = sock.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    if not cap_memory:
        return
    with contextlib.suppress(OSError, ValueError):
        used = _address_space()
        resource.setrlimit(resource.RLIMIT_AS, (used + MEMORY_HEADROOM, resource.RLIM_INFINITY))


def kill_and_reap(pid: int) -> None:
    """A forked child of ours stopped at once and reaped (no zombie left)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _address_space() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
