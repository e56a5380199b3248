"""The live progress line, as a person sees it: in a terminal (a pseudo-terminal here)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


@pytest.mark.slow(7)
def test_progress_line_shows_elapsed_time_and_share_done(tmp_path: Path) -> None:
    with RunningServer("many", {"/p*": {"delay": 0.3}}) as site:
        leader, follower = pty.openpty()
        env = {**os.environ, "NO_PROXY": "*", "COLUMNS": "160", "TERM": "xterm"}
        env = {k: v for k, v in env.items() if "proxy" not in k.lower() or k == "NO_PROXY"}
        process = subprocess.Popen(
            [sys.executable, "-m", "crawler", "crawl", site.url + "/", "--out",
             str(tmp_path / "out"), "--concurrency", "2"],
            cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=follower)
        os.close(follower)
        seen = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the crawler closed the terminal: it ended
                break
            if not chunk:
                break
            seen += chunk
        os.close(leader)
        assert process.wait(timeout=30) == 0
    text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", seen).decode("utf-8", "replace")
    lines = re.findall(r"(\d+:\d\d) · pages (\d+) of (\d+) known \((\d+)%\)", text)
    assert lines, text[-2000:]
    shares = [int(share) for *_rest, share in lines]
    assert all(0 <= share <= 100 for share in shares)
    assert any(0 < share < 100 for share in shares)  # it was seen moving
    assert all(int(done) <= int(known) for _clock, done, known, _share in lines)
    assert "crawled" in text  # and the summary after it
