"""A careless command line or config file ends in one line and exit 2, before any
request: numbers that are no numbers, files that are not text, paths that collide.
(Hostile tester's items 6, 14 and 15.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import interrupt_when, read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(60)

FLOAT_OPTIONS = ["--delay", "--max-crawl-delay", "--timeout", "--rate", "--max-retry-after"]


def _in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The command's own entry point, in this process: for checks that end before any
    request, where a subprocess would cost half a second each (two cases below run
    as a subprocess all the same)."""
    from crawler.cli.commands import main
    with pytest.raises(SystemExit) as ended:
        main(argv)
    code = ended.value.code
    return code if isinstance(code, int) else 1, capsys.readouterr().err


def test_nan_on_the_command_line_is_one_line_before_any_request(tmp_path: Path) -> None:
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      "--delay=nan", timeout=20)
        assert site.log == []  # refused before the first request
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "finite" in run.stderr and "--delay" in run.stderr


def test_infinity_in_a_config_file_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "job.toml"
    config.write_text('start-url = "http://127.0.0.1:9/"\nout = "out"\ndelay = inf\n')
    run = run_cli("crawl", "--config", str(config), timeout=20)
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "finite" in run.stderr and "delay" in run.stderr


@pytest.mark.parametrize(("option", "value"), [
    (option, value) for option in FLOAT_OPTIONS for value in ("nan", "inf", "-inf")] + [
    ("--delay", "-1e999"), ("--max-parse-seconds", "nan"), ("--max-parse-seconds", "inf")])
def test_nan_and_infinity_are_refused_in_every_numeric_option(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str) -> None:
    for command in (["crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "out")],
                    ["audit", "http://127.0.0.1:9/", "--report", str(tmp_path / "r.json")]):
        code, stderr = _in_process([*command, f"{option}={value}"], capsys)
        assert code == 2, stderr
        assert stderr.count("\n") == 1 and "finite" in stderr and option in stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("key", ["delay", "max-crawl-delay", "timeout", "rate",
                                 "max-retry-after", "max-parse-seconds"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_nan_and_infinity_are_refused_in_a_config_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str) -> None:
    config = tmp_path / "job.toml"
    config.write_text(f'start-url = "http://127.0.0.1:9/"\nout = "out"\n{key} = {value}\n')
    code, stderr = _in_process(["crawl", "--config", str(config)], capsys)
    assert code == 2, stderr
    assert stderr.count("\n") == 1 and "finite" in stderr and key in stderr


def test_the_library_refuses_nan_too() -> None:
    from crawler.config import CrawlConfig
    from crawler.core.errors import ConfigError
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


@pytest.mark.parametrize("case", ["report-is-dir", "report-is-state", "state-like-a-shard",
                                  "report-is-index", "two-reports-one-file"])
def test_colliding_paths_are_refused_before_the_first_request(tmp_path: Path,
                                                              case: str) -> None:
    out, state = tmp_path / "out", tmp_path / "state.db"
    out.mkdir()
    args = {
        "report-is-dir": ["--report", str(tmp_path / "dir.json")],
        "report-is-state": ["--report", str(tmp_path / "r.json"), "--state",
                            str(tmp_path / "." / "r.json")],
        "state-like-a-shard": ["--state", str(out / "sitemap-00007.xml.gz")],
        "report-is-index": ["--report", str(out / "sitemap_index.xml")],
        "two-reports-one-file": ["--report", str(tmp_path / "r.json"), "--report",
                                 str(tmp_path / "sub" / ".." / "r.json")],
    }[case]
    (tmp_path / "sub").mkdir()
    (tmp_path / "dir.json").mkdir()
    (out / "keep.txt").write_text("mine")
    with RunningServer("basic") as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), *args, timeout=20)
        assert site.log == []
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "sitemap-crawler: error: " in run.stderr
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert not state.exists()


def test_an_audit_report_that_is_a_directory_is_refused_before_crawling(tmp_path: Path) -> None:
    (tmp_path / "report.html").mkdir()
    with RunningServer("basic") as site:
        run = run_cli("audit", site.url + "/", "--report", str(tmp_path / "report.html"),
                      timeout=20)
        assert site.log == []
    assert run.code == 2 and "is a directory" in run.stderr, run.stderr


def test_a_state_file_in_out_named_otherwise_survives_the_pruning(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("basic") as site:
        for _ in range(2):
            run = run_cli("crawl", site.url + "/", "--out", str(out), "--state",
                          str(out / "crawl-state.db"), timeout=30)
            assert run.code == 0, run.stderr
    assert (out / "crawl-state.db").exists()


def _interrupted(site_url: str, command: list[str], site: object) -> None:
    interrupt_when(command, lambda: any(p.startswith("/p") for p in site.paths()),  # type: ignore[attr-defined]
                   settle=0.2)


def test_a_crawl_does_not_resume_an_interrupted_audit(tmp_path: Path) -> None:
    """It used to publish the audit's partial result as the site's sitemap."""
    state, out = tmp_path / "state.db", tmp_path / "out"
    with RunningServer("many", {"/p*": {"delay": 5}}) as site:
        _interrupted(site.url, ["audit", site.url + "/", "--report", str(tmp_path / "r.json"),
                                "--state", str(state), "--max-pages", "50"], site)
        before = len(site.log)
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--state", str(state),
                      "--resume", timeout=20)
        assert len(site.log) == before
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1
    assert "was 'audit', --max-pages 50; this one is 'crawl', no --max-pages" in run.stderr
    assert not out.exists() or not any(out.iterdir())


def test_a_resume_with_other_limits_is_refused_and_with_the_same_goes_on(
        tmp_path: Path) -> None:
    state, out = tmp_path / "state.db", tmp_path / "out"
    command = ["crawl", "--out", str(out), "--state", str(state), "--max-pages", "4",
               "--exclude", "/x/*"]
    with RunningServer("many", {"/p*": {"delay": 3}}) as site:
        _interrupted(site.url, [command[0], site.url + "/", *command[1:]], site)
        site.routes.clear()
        run = run_cli(command[0], site.url + "/", *command[1:5], "--max-pages", "9",
                      "--resume", timeout=30)
        assert run.code == 2, run.stderr
        assert "--max-pages 4, --exclude /x/*; this one is --max-pages 9, no --exclude" in (
            run.stderr)
        run = run_cli(command[0], site.url + "/", *command[1:], "--resume", timeout=30)
    assert run.code == 0, run.stderr
    assert len(read_sitemaps(out, site.url + "/").locs) == 4


def test_a_finished_audit_leaves_nothing_for_a_crawl_to_resume(tmp_path: Path) -> None:
    state, out = tmp_path / "state.db", tmp_path / "out"
    with RunningServer("many") as site:
        run = run_cli("audit", site.url + "/", "--report", str(tmp_path / "r.json"),
                      "--state", str(state), "--max-pages", "3", timeout=30)
        assert run.code == 0, run.stderr
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--state", str(state),
                      "--resume", timeout=30)
    assert run.code == 0, run.stderr
    assert len(read_sitemaps(out, site.url + "/").locs) > 3  # a crawl of its own
