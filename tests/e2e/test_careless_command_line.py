"""A careless command line or config file ends in one line and exit 2, before any
request: numbers that are no numbers, files that are not text, paths that collide.
(Hostile tester's items 6, 14 and 15.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(60)

FLOAT_OPTIONS = ["--delay", "--max-crawl-delay", "--timeout", "--rate", "--max-retry-after"]


@pytest.mark.parametrize("option", FLOAT_OPTIONS)
@pytest.mark.parametrize("value", ["nan", "inf", "-1e999"])
def test_nan_and_infinity_are_refused_in_every_numeric_option(
        tmp_path: Path, option: str, value: str) -> None:
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      f"{option}={value}", timeout=20)
        assert site.log == []  # refused before the first request
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "finite" in run.stderr and option in run.stderr


@pytest.mark.parametrize("key", ["delay", "max-crawl-delay", "timeout", "rate"])
@pytest.mark.parametrize("value", ["nan", "-inf"])
def test_nan_and_infinity_are_refused_in_a_config_file(tmp_path: Path, key: str,
                                                       value: str) -> None:
    config = tmp_path / "job.toml"
    config.write_text(f'start-url = "http://127.0.0.1:9/"\nout = "out"\n{key} = {value}\n')
    run = run_cli("crawl", "--config", str(config), timeout=20)
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "finite" in run.stderr and key in run.stderr


def test_the_library_refuses_nan_too() -> None:
    from crawler.config import CrawlConfig
    from crawler.errors import ConfigError
    with pytest.raises(ConfigError, match="--delay must be a finite number"):
        CrawlConfig(start_url="http://127.0.0.1/", delay=float("nan"))


@pytest.mark.parametrize(("content", "says"), [
    (b"out = \"o\"\nmax-pages = 5\n\xff\xfe\n", "not UTF-8"),
    (b"out = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "nested too deeply"),
])
def test_a_config_file_that_is_not_text_or_too_deep_is_one_line(
        tmp_path: Path, content: bytes, says: str) -> None:
    config = tmp_path / "job.toml"
    config.write_bytes(content)
    run = run_cli("crawl", "http://127.0.0.1:9/", "--config", str(config), timeout=20)
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and says in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
