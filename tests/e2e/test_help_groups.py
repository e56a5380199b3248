"""``--help`` in groups, the most used first; ``audit`` refuses what only shapes a sitemap."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli
from siteserver import RunningServer

from crawler.cli.commands import cli
from crawler.cli.help_groups import OTHER, grouped


def _groups(text: str) -> list[str]:
    return re.findall(r"^([A-Z][^\n]*):$", text, flags=re.MULTILINE)


@pytest.mark.parametrize(("command", "first"), [
    ("crawl", ["--out", "--report", "--max-pages", "--state", "--exclude", "--config",
               "--changes"]),
    ("audit", ["--report", "--fail-on", "--max-pages", "--state", "--exclude", "--config"]),
])
def test_help_opens_with_the_most_used_options_then_groups(command: str,
                                                           first: list[str]) -> None:
    run = run_cli(command, "--help")
    assert run.code == 0, run.stderr
    text = run.stdout
    groups = _groups(text)
    assert groups[0] == "Most used" and OTHER not in groups
    assert {"Scope: what is crawled", "Politeness and speed", "Rendering JavaScript",
            "The run"} <= set(groups)
    most_used = text.split("Most used:")[1].split("\n\n")[0]
    assert re.findall(r"^  (--[a-z-]+)", most_used, flags=re.MULTILINE) == first
    lines = text.splitlines()
    assert next(i for i, line in enumerate(lines) if "--max-pages" in line) < 30
    every = {option for _title, options in grouped(cli.commands[command])
             for option in options}
    assert len(every) > 40  # every option has its group, none left to "Other"


def test_audit_help_shows_no_option_that_only_shapes_a_sitemap() -> None:
    text = run_cli("audit", "--help").stdout
    for option in ("--out", "--gzip", "--lastmod", "--images", "--indexnow",
                   "--search-console", "--changefreq", "--stylesheet", "--base-url"):
        assert not re.search(rf"^\s+{option}\b", text, flags=re.MULTILINE), option
    assert "into the sitemap" not in text


@pytest.mark.parametrize("option", [["--images"], ["--lastmod", "header"], ["--out", "x"],
                                    ["--no-gzip"], ["--indexnow-env=KEY"]])
def test_audit_refuses_a_sitemap_option_in_one_line_before_any_request(option: list[str]
                                                                       ) -> None:
    with RunningServer("basic") as site:
        run = run_cli("audit", site.url + "/", *option)
        assert site.log == []
    assert run.code == 2
    name = option[0].split("=")[0]
    assert run.stderr.strip().splitlines() == [
        f"sitemap-crawler: error: {name}: only shapes the sitemap crawl writes, and an audit "
        "writes none (crawl --report writes both)"]
