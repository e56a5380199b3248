"""The ``sitemap-crawler`` command: the one place that joins crawler and writer.

Options become a :class:`CrawlConfig`; the crawl's listed records become
sorted :class:`SitemapEntry` values; the writer publishes them. Every failure
a user can cause or meet ends as one line on stderr and an exit code (the
codes are in ``crawler.cli.failure`` and the manual's "Exit codes").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from crawler.__version__ import __version__
from crawler.cli import failure
from crawler.cli.failure import (
    EXIT_INTERRUPTED,
    EXIT_UNEXPECTED,
    EXIT_USAGE,
)
from crawler.cli.help_groups import GroupedCommand, refusals
from crawler.cli.invocation import INVOCATION, how_to_resume
from crawler.cli.options import (
    CRAWL_OPTIONS,
    SECTION_OPTIONS,
    SITEMAP_OPTIONS,
    sitemap_only,
    with_options,
)
from crawler.cli.quiet_stream import forgive_stderr
from crawler.config import (
    DEFAULT_MAX_ORPHANS,
)

_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", click.exceptions.UsageError
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sitemap-crawler")
def cli() -> None:
    """Crawl a website and write the XML sitemaps search engines read."""


@cli.command("crawl", cls=GroupedCommand)
@click.argument("start_url")
@with_options(SITEMAP_OPTIONS)
@with_options(SECTION_OPTIONS)
@click.option("--report", "report_files", multiple=True, type=click.Path(path_type=Path),
              help="Also write an audit report: .json, .csv, .html (repeatable; see 'audit').")
@click.option("--max-orphans", type=int, default=DEFAULT_MAX_ORPHANS, show_default=True,
              help="For --compare-sitemap: orphans fetched and listed; the rest are counted.")
@click.option("--compare-sitemap", metavar="auto|URL|off", default="off", show_default=True,
              help="For --report: also read the sitemaps the site publishes now (auto: "
              "robots.txt's, else /sitemap.xml and /sitemap_index.xml) and compare.")
@with_options(CRAWL_OPTIONS)
def crawl_command(**options: Any) -> int:
    """Crawl START_URL and write sitemaps into --out.

    \b
    PATTERN is a glob over a URL's path and query after normalisation, where
    * is any run of characters and everything else is literal ('?' too):
      --exclude '/cart/*'  --exclude '*?*sort=*'  --no-list '/tag/*'
    or a Python regular expression after 're:', searched in the same string:
      --exclude 're:^/(search|login)'
    """
    from crawler.cli.run import run_command  # the crawler's imports, only when it runs

    return run_command(**options)


@cli.command("audit", cls=GroupedCommand, refused=refusals(
    sitemap_only(), "only shapes the sitemap crawl writes, and an audit writes none "
    "(crawl --report writes both)"))
@click.argument("start_url")
@click.option("--report", "report_files", multiple=True,
              type=click.Path(path_type=Path),
              help="Where to write the report (without: the Fix-first summary on standard "
              "output, no file); the format follows the extension: .json "
              "(versioned schema), .csv (one row per URL), .html (one self-contained "
              "page), .junit.xml (a test case per finding item, failures for --fail-on's "
              "findings) or .md (a summary a pull-request comment can hold); - prints the "
              "summary. Repeatable.")
@click.option("--fail-on", "fail_on", metavar="FINDING[,FINDING…]",
              help="Exit 6 when any of these findings is present (broken-links, soft-404… "
              "as the reports name them, listed in the manual; since the last audit: "
              "new-FINDING, fixed-FINDING, added-pages, removed-pages, changed); the "
              "reports are written first.")
@click.option("--compare-with", "compare_with", type=click.Path(dir_okay=False, path_type=Path),
              metavar="REPORT.json",
              help="Say what changed since this earlier JSON report of the same site "
              "(new-FINDING, fixed-FINDING, added-pages, removed-pages, changed); with "
              "--state and without this, since the last audit kept in the state.")
@click.option("--max-orphans", type=int, default=DEFAULT_MAX_ORPHANS, show_default=True,
              help="Orphans of the live sitemap fetched and listed; the rest are counted.")
@click.option("--compare-sitemap", metavar="auto|URL|off", default="auto", show_default=True,
              help="Read the sitemaps the site publishes now (auto: robots.txt's Sitemap: "
              "lines, else /sitemap.xml and /sitemap_index.xml; or this URL) and compare "
              "them with the crawl; orphans they list are fetched, never listed.")
@click.option("--keep-duplicates", is_flag=True,
              help="Keep pages with the same content at several URLs as listable, each "
              "its own row; by default one is kept and the others are rows duplicate-of "
              "it (the finding 'duplicates' names them either way).")
@with_options(SECTION_OPTIONS)
@with_options(CRAWL_OPTIONS)
def audit_command(**options: Any) -> int:
    """Crawl START_URL as 'crawl' does and report on the site's health; no sitemap is written.

    Without --report, "Fix first" is printed: each finding present, worst first,
    with why it matters and how to fix it. The findings are named under --fail-on.
    """
    from crawler.cli.run import run_command

    return run_command(audit=True, **options)


@cli.command("history")
@click.argument("state", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--last", type=click.IntRange(1), default=20, show_default=True,
              help="How many of the most recent runs.")
@click.option("--report", "reports", multiple=True, type=click.Path(path_type=Path),
              help="Write them instead: .html (trend charts and each run's changes, one "
              "self-contained page), .json or .csv (repeatable).")
def history_command(state: Path, last: int, reports: tuple[Path, ...]) -> int:
    """The last runs the --state file STATE kept: when, how long, pages fetched and
    listed, what was added, removed and changed, errors, findings, and whether each
    published."""
    from crawler.cli.history_command import show_history

    return show_history(state, last, reports)


@cli.command("enqueue")
@click.argument("configs", nargs=-1, required=True, metavar="CONFIG.toml...")
@click.option("--redis", "redis_url", required=True, metavar="URL",
              help="The Redis the workers take jobs from (redis://host:6379/0, "
              "rediss://…, unix:///path/redis.sock).")
@click.option("--queue", "queue_name", default="sitemaps", show_default=True,
              help="The RQ queue to put the jobs on.")
def enqueue_command(configs: tuple[str, ...], redis_url: str, queue_name: str) -> int:
    """Put one regeneration job per site config on an RQ queue.

    Each job is 'crawl --config FILE', run by 'sitemap-crawler worker'. A
    config must name start-url, out
    and state (on storage every worker shares: a job killed on one worker
    resumes on another from its state); its [job] table may set timeout
    ("6h"), retries (3) and retry-after (["10s", "1m", "5m"]). Needs the jobs
    extra: pip install 'sitemap-crawler[jobs]'.
    """
    from crawler.cli.job_commands import enqueue_sites

    return enqueue_sites(configs, redis_url, queue_name)


@cli.command("worker")
@click.option("--redis", "redis_url", required=True, metavar="URL",
              help="The Redis to take jobs from (redis://host:6379/0, rediss://…, "
              "unix:///path/redis.sock).")
@click.option("--queue", "queue_name", default="sitemaps", show_default=True,
              help="The RQ queue to take jobs from.")
@click.option("--burst", is_flag=True,
              help="Stop once the queue is empty (jobs waiting for a retry are left).")
@click.option("--job-monitoring-interval", "monitoring_interval", type=click.IntRange(1),
              default=30, show_default=True, metavar="SECONDS",
              help="How often a running job's heartbeat is renewed.")
@click.option("--maintenance-interval", type=click.IntRange(1), default=30, show_default=True,
              metavar="SECONDS", help="How often the worker looks for jobs whose worker "
              "died. Such a job is taken over within the monitoring interval, plus "
              "SITEMAP_CRAWLER_HEARTBEAT_GRACE (60 s), plus this: two minutes by default.")
def worker_command(redis_url: str, queue_name: str, burst: bool, monitoring_interval: int,
                   maintenance_interval: int) -> int:
    """Run site jobs from the queue, one at a time, until stopped.

    RQ's worker with our job class and RQ's scheduler: a job that fails is tried
    again after its [job] retry-after waits, and a job whose worker was killed is
    taken over and resumes from its state. Start as many as you like; stop one
    with Ctrl-C or SIGTERM (it finishes its current job first; twice: at once).
    """
    from crawler.cli.job_commands import run_worker

    return run_worker(redis_url, queue_name, burst, monitoring_interval, maintenance_interval)


@cli.command("jobs")
@click.option("--redis", "redis_url", required=True, metavar="URL",
              help="The Redis the workers take jobs from.")
@click.option("--queue", "queue_name", default="sitemaps", show_default=True,
              help="The RQ queue to list.")
def jobs_command(redis_url: str, queue_name: str) -> int:
    """List the queue's jobs: queued, running, retrying (with the time of the next
    attempt), finished and failed, each with its site and its summary line (or
    why it failed)."""
    from crawler.cli.job_commands import show_jobs

    return show_jobs(redis_url, queue_name)


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: click's own usage errors, too, become one line and exit 2."""
    INVOCATION[:] = sys.argv[1:] if argv is None else argv
    forgive_stderr()  # a closed or full stderr must not cost the output
    try:
        code = cli.main(args=INVOCATION, prog_name="sitemap-crawler", standalone_mode=False)
    except _NO_ARGS_IS_HELP as exc:  # bare "sitemap-crawler": show the help, like git does
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        code = EXIT_USAGE
    except click.UsageError as exc:
        code = failure.fail(exc.format_message(), EXIT_USAGE)
    except (click.exceptions.Abort, KeyboardInterrupt):  # before or after the crawl
        code = failure.fail("interrupted; previous output left untouched; "
                     + how_to_resume(INVOCATION), EXIT_INTERRUPTED)
    except click.ClickException as exc:
        code = failure.fail(exc.format_message(), exc.exit_code)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_UNEXPECTED
    sys.exit(code or 0)
