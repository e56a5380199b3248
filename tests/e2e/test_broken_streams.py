"""A broken or full stderr never costs the output (hostile item 13): ``-v 2>&1 | head -2``
closes the pipe after two lines, and ``2>/dev/full`` fails every write."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, read_sitemaps
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(60)


def _env() -> dict[str, str]:
    import os
    return {**{k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
            "NO_PROXY": "*"}


def test_stderr_closed_by_head_after_two_lines_still_publishes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("many") as site:
        process = subprocess.Popen(
            [sys.executable, "-m", "crawler", "crawl", site.url + "/", "--out", str(out), "-v",
             "--concurrency", "1"],
            cwd=REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert process.stderr is not None
        lines = [process.stderr.readline() for _ in range(2)]
        process.stderr.close()  # what head does after its lines
        code = process.wait(timeout=45)
    assert all(line.startswith(b"GET ") for line in lines), lines
    assert code == 0
    assert len(read_sitemaps(out, site.url + "/").locs) > 2


@pytest.mark.parametrize("verbose", [True, False])
def test_stderr_on_a_full_disk_still_publishes(tmp_path: Path, verbose: bool) -> None:
    out = tmp_path / "out"
    with RunningServer("many") as site, open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "crawler", "crawl", site.url + "/", "--out", str(out),
             *(["-v"] if verbose else [])],
            cwd=REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=full, timeout=45)
    assert done.returncode == 0
    assert len(read_sitemaps(out, site.url + "/").locs) > 2


def test_a_failure_with_a_full_stderr_keeps_its_exit_code(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "crawler", "crawl", "not a url", "--out", str(tmp_path)],
            cwd=REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=full, timeout=45)
    assert done.returncode == 2
