"""The manual's first page, run as written: every ``$ sitemap-crawler`` command of
``docs/pages/index.md``, against the ``pglike`` fixture standing in for
www.example.com, and the output the page shows is the output a reader gets."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(180)
PAGE = REPO / "docs" / "pages" / "index.md"
EXAMPLE = "https://www.example.com/"


def _blocks(text: str) -> list[tuple[str, str]]:
    """The page's fenced blocks: (language, body)."""
    return re.findall(r"```(\w*)\n(.*?)```", text, flags=re.DOTALL)


def _shown(output: str) -> str:
    """Output with what differs from run to run (times, rates) made a pattern."""
    pattern = re.escape(output.strip())
    pattern = re.sub(r"\d+\\\.\d+s", r"\\d+\\.\\ds", pattern)
    return re.sub(r"\\\(\d+\\ pages/s", r"\\(\\d+\\ pages/s", pattern)


@pytest.mark.slow(28)
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    text = PAGE.read_text()
    commands = [line.removeprefix("$ ") for language, body in _blocks(text)
                if language == "console" for line in body.splitlines()
                if line.startswith("$ sitemap-crawler ")]
    samples = [body for language, body in _blocks(text) if language == ""]
    assert len(commands) >= 5 and len(samples) >= 2
    outputs = []
    env = {**{k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
           "NO_PROXY": "*"}
    with RunningServer("pglike") as site:
        for command in commands:
            args = shlex.split(command.replace(EXAMPLE, site.url + "/"))[1:]
            done = subprocess.run([sys.executable, "-m", "crawler", *args], cwd=tmp_path,
                                  capture_output=True, text=True, timeout=120, env=env)
            assert done.returncode == 0, (command, done.stderr)
            outputs.append(done.stdout + done.stderr)
    every = "\n".join(outputs).replace(site.url + "/", EXAMPLE)
    for sample in samples:  # what the page shows, line by line, is what was printed
        for line in sample.strip().splitlines():
            if line.strip() == "…" or line.rstrip().endswith("…"):
                continue  # shortened on the page
            assert re.search(_shown(line), every), line
    written = sorted(path.name for path in (tmp_path / "public").iterdir())
    assert written == ["robots.txt", "sitemap-00001.xml.gz", "sitemap.html", "sitemap_index.xml"]
    robots = (tmp_path / "public" / "robots.txt").read_text()
    assert f"Sitemap: {site.url}/sitemap_index.xml" in robots
    assert (tmp_path / "audit.html").exists() and (tmp_path / "audit-2.html").exists()
    assert "Since the last audit" in (tmp_path / "audit-2.html").read_text()
