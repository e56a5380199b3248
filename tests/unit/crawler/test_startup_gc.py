"""The collector is off during start-up and back on after, and never turned on for a
program that had it off. In a child interpreter: freezing is for the whole process."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

_PROBE = r"""
import gc, sys
from crawler.core import startup_gc
if sys.argv[1] == "off":
    gc.disable()
startup_gc.pause()
during = gc.isenabled()
startup_gc.resume()
startup_gc.resume()  # a second call changes nothing
print(during, gc.isenabled(), gc.get_freeze_count() > 0)
"""


def _run(mode: str) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE, mode], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_paused_then_resumed_with_start_up_frozen() -> None:
    assert _run("on") == "False True True"


def test_a_program_that_turned_it_off_keeps_it_off() -> None:
    assert _run("off") == "False False False"
