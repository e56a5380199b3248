"""``enqueue``, ``worker`` and ``jobs``: the CLI's side of the RQ queue (crawler.jobs)."""

from __future__ import annotations

import importlib.util
import urllib.parse

import click

from crawler.cli import failure
from crawler.cli.failure import EXIT_OK, EXIT_USAGE
from crawler.core.errors import ConfigError


def _need_rq() -> None:
    missing = [name for name in ("rq", "redis") if importlib.util.find_spec(name) is None]
    if missing:
        raise click.UsageError(f"{' and '.join(missing)} not installed: pip install "
                               "'sitemap-crawler[jobs]'")


def _redacted(url: str) -> str:
    """A Redis URL as shown: its password never (``redis://:secret@host``)."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        return f"{scheme}://…@{rest.rpartition('@')[2]}"
    return url


def _keep_secret(url: str) -> None:
    password = urllib.parse.urlsplit(url).password
    if password:
        failure.SECRETS.append(password)


def enqueue_sites(configs: tuple[str, ...], redis_url: str, queue_name: str) -> int:
    _need_rq()
    from crawler.jobs.queue import enqueue

    _keep_secret(redis_url)
    try:
        queued = enqueue(configs, redis_url, queue_name)
    except ConfigError as exc:
        return failure.fail(str(exc), EXIT_USAGE)
    for job_id, site in queued:
        click.echo(f"queued {job_id} {site.start_url} ({site.config})")
    click.echo(f"{len(queued)} job(s) on queue {queue_name!r} at {_redacted(redis_url)}; "
               f"run them with: sitemap-crawler worker --redis URL --queue {queue_name}",
               err=True)
    return EXIT_OK


def run_worker(redis_url: str, queue_name: str, burst: bool, monitoring_interval: int,
               maintenance_interval: int) -> int:
    _need_rq()
    from crawler.jobs.queue import connect
    from crawler.jobs.worker import run_worker as work

    _keep_secret(redis_url)
    try:
        connect(redis_url)
    except ConfigError as exc:
        return failure.fail(str(exc), EXIT_USAGE)
    work(redis_url, queue_name, burst=burst, monitoring_interval=monitoring_interval,
         maintenance_interval=maintenance_interval)
    return EXIT_OK


def show_jobs(redis_url: str, queue_name: str) -> int:
    _need_rq()
    from crawler.jobs.queue import list_jobs

    _keep_secret(redis_url)
    try:
        rows = list_jobs(redis_url, queue_name)
    except ConfigError as exc:
        return failure.fail(str(exc), EXIT_USAGE)
    for row in rows:
        click.echo(f"{row.state:<9} {row.job_id}  {row.site}  {row.summary}")
    if not rows:
        click.echo(f"no jobs on queue {queue_name!r}", err=True)
    return EXIT_OK
