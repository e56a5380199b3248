"""The manual builds with ``mkdocs build --strict`` (a broken link or a missing page
fails it), and its command reference, generated from the click commands, names
every option of ``crawl`` and ``audit``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from crawler.cli.commands import cli

REPO = Path(__file__).resolve().parents[2]


def test_the_manual_builds_strictly_and_lists_every_option(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
         str(REPO / "docs" / "mkdocs.yml"), "--site-dir", str(site)],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    reference = (site / "reference" / "index.html").read_text()
    for name in ("crawl", "audit"):
        command = cli.commands[name]
        options = [opt for param in command.params for opt in param.opts + param.secondary_opts
                   if opt.startswith("--")]
        assert len(options) > 40
        missing = [opt for opt in options if opt not in reference]
        assert missing == [], (name, missing)
    # one table a group, the groups --help shows, in its order
    from crawler.cli.help_groups import grouped

    headings = re.findall(r"<h4[^>]*>([^<]+)", reference)
    assert headings == [title for name in ("crawl", "audit")
                        for title, _options in grouped(cli.commands[name])]
    for page in ("architecture", "library", "politeness", "audits", "performance"):
        assert (site / page / "index.html").exists()
