"""How many cores this process may use: the one count behind ``--workers auto`` and
the parse sandbox's second child.

The affinity mask, not the machine's count: a container or ``taskset`` that grants
two of sixteen cores must not get sixteen processes.
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def worker_count(asked: int | str, concurrency: int) -> int:
    """``--workers``: a positive number, or ``auto`` (the cores this process may use,
    never more than ``--concurrency``, since each worker keeps a request in flight)."""
    if asked == "auto":
        return max(1, min(usable_cores(), concurrency))
    return int(asked)
