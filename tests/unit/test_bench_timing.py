"""bench/render.py times a crawl by the process's own exit, not by its sampling."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from timed_run import run_sampled


def test_wall_time_is_the_processes_not_the_sampling_intervals() -> None:
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.6)"])
    seen: list[int] = []
    run = run_sampled(process, started, seen.append, every=0.5)
    assert 0.6 <= run.wall < 0.9, run.wall  # polling would have said 1.0
    assert run.samples == len(seen) >= 2 and set(seen) == {process.pid}
    assert process.returncode == 0 and run.status == 0
