"""A benchmark's process, timed by its own exit, while something samples it.

Polling ``wait4`` between samples rounds a run's wall time up to the sampling
interval (a PostgreSQL-docs crawl of 0.51 s read as 1.01 s at 0.5 s sampling):
here a thread waits for the exit and notes its moment, and the sampler's sleep
ends the moment the process does.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class TimedRun:
    wall: float  # seconds from start to exit, not to the next sample
    status: int  # as os.wait4 gives it
    usage: os.struct_rusage  # of the process and the children it waited for
    samples: int


def run_sampled(process: subprocess.Popen[bytes], started: float,
                sample: Callable[[int], None], every: float) -> TimedRun:
    """Sample ``process`` (by its pid) every ``every`` seconds until it exits."""
    ended: dict[str, object] = {}
    done = threading.Event()

    def reap() -> None:
        _pid, status, usage = os.wait4(process.pid, 0)
        ended.update(at=time.monotonic(), status=status, usage=usage)
        process.returncode = os.waitstatus_to_exitcode(status)
        done.set()

    threading.Thread(target=reap, daemon=True).start()
    samples = 0
    while not done.is_set():
        sample(process.pid)
        samples += 1
        done.wait(every)
    return TimedRun(wall=float(ended["at"]) - started,  # type: ignore[arg-type]
                    status=int(ended["status"]),  # type: ignore[call-overload]
                    usage=ended["usage"], samples=samples)  # type: ignore[arg-type]
