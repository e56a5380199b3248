"""A full disk while writing the sitemaps, the report or the state: exit 4 with one
line, the previous sitemaps untouched, no partial file and no staging left behind.

Each test mounts a small tmpfs (root only, as in CI and on the development
machines) and fills it, so the kernel itself answers ENOSPC.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("transport")]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}): run as root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave: int) -> None:
    """Fill ``disk`` until about ``leave`` bytes are free."""
    stats = os.statvfs(disk)
    free = stats.f_bavail * stats.f_frsize
    (disk / "filler").write_bytes(b"\0" * max(0, free - leave))


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_full_disk_while_writing_the_sitemaps_keeps_the_previous_ones(
        small_disk: Path) -> None:
    out = small_disk / "out"
    with RunningServer("many") as site:
        assert run_cli("crawl", site.url + "/", "--out", str(out), "--quiet").code == 0
        before = files(out)
        fill(small_disk, leave=1024)
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--no-gzip")
    assert run.code == 4, run.stderr
    assert run.stderr.count("\n") == 1 and "No space left on device" in run.stderr
    assert files(out) == before  # untouched, nothing partial, no staging directory


def test_a_full_disk_while_writing_the_report_leaves_no_partial_file(
        small_disk: Path, tmp_path: Path) -> None:
    fill(small_disk, leave=1024)
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--report",
                      str(small_disk / "report.json"))
    assert run.code == 4, run.stderr
    assert run.stderr.count("\n") == 1 and "No space left on device" in run.stderr
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


def test_a_full_disk_while_writing_the_state_exits_4(small_disk: Path, tmp_path: Path) -> None:
    fill(small_disk, leave=16 * 1024)
    with RunningServer("many") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), "--state",
                      str(small_disk / "state.db"))
    assert run.code == 4, run.stderr
    assert run.stderr.count("\n") == 1 and "full" in run.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
