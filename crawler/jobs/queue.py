"""Putting site jobs on an RQ queue, and saying what became of them.

RQ and Redis are imported here only (and in the worker class): a crawl never
loads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from crawler.core.errors import ConfigError
from crawler.jobs.site_config import SiteJob, read_site
from crawler.jobs.site_job import CrawlFailed

JOB_FUNCTION = "crawler.jobs.site_job.run_site"
RESULT_TTL = 7 * 86400  # a finished job's summary is listed for a week
FAILURE_TTL = 30 * 86400


@dataclass(frozen=True, slots=True)
class JobRow:
    state: str  # queued, running, retrying (waiting for its next attempt), finished, failed
    job_id: str
    site: str
    summary: str


def connect(redis_url: str) -> Any:
    from redis import Redis
    from redis.exceptions import RedisError

    try:
        connection = Redis.from_url(redis_url)
        connection.ping()
    except (RedisError, ValueError) as exc:
        raise ConfigError(f"--redis: cannot reach Redis ({type(exc).__name__})") from None
    return connection


def enqueue(configs: Iterable[str], redis_url: str, queue_name: str) -> list[tuple[str, SiteJob]]:
    """One job per config, every config checked before any is queued."""
    from rq import Queue, Retry

    sites = [read_site(config) for config in configs]
    queue = Queue(queue_name, connection=connect(redis_url))
    queued = []
    for site in sites:
        job = queue.enqueue(
            JOB_FUNCTION, str(site.config), job_timeout=site.timeout, result_ttl=RESULT_TTL,
            failure_ttl=FAILURE_TTL, description=site.start_url,
            retry=Retry(max=site.retries, interval=list(site.retry_after[:site.retries]))
            if site.retries else None,
            meta={"site": site.start_url, "config": str(site.config)})
        queued.append((job.id, site))
    return queued


def list_jobs(redis_url: str, queue_name: str) -> list[JobRow]:
    from rq import Queue
    from rq.job import Job
    from rq.registry import (
        FailedJobRegistry,
        FinishedJobRegistry,
        ScheduledJobRegistry,
        StartedJobRegistry,
    )

    connection = connect(redis_url)
    queue = Queue(queue_name, connection=connection)
    scheduled = ScheduledJobRegistry(queue=queue)
    groups = (("queued", queue.get_job_ids()),
              ("running", StartedJobRegistry(queue=queue).get_job_ids()),
              ("retrying", scheduled.get_job_ids()),
              ("finished", FinishedJobRegistry(queue=queue).get_job_ids()),
              ("failed", FailedJobRegistry(queue=queue).get_job_ids()))
    rows, seen = [], set()
    # a job may stand in two registries for a moment (one taken over from a dead worker
    # is scheduled for a retry as it runs again): the first state listed wins
    order = ("running", "finished", "failed", "queued", "retrying")
    groups = tuple(sorted(groups, key=lambda group: order.index(group[0])))
    for state, ids in groups:
        for job in Job.fetch_many(list(ids), connection=connection):
            if job is None or job.id in seen:
                continue
            seen.add(job.id)
            summary = (_next_attempt(job, scheduled) if state == "retrying"
                       else _summary(job, state))
            rows.append(JobRow(state, job.id, job.meta.get("site", "?"), summary))
    return rows


def _next_attempt(job: Any, scheduled: Any) -> str:
    """When a failed job is tried again, and how many tries it has left."""
    try:
        when = scheduled.get_scheduled_time(job)
    except Exception:  # gone between the two look-ups
        return "waiting to be tried again"
    left = getattr(job, "retries_left", None)
    tries = f" ({left} more retr{'y' if left == 1 else 'ies'} after it)" if left is not None \
        else ""
    return f"next attempt {when:%Y-%m-%d %H:%M:%S} UTC{tries}"


def _summary(job: Any, state: str) -> str:
    if state == "finished":
        return str(job.return_value() or "")
    if state == "failed":
        info = (job.latest_result().exc_string if job.latest_result() else "") or ""
        lines = [line for line in info.splitlines() if line.strip()]
        return lines[-1].removeprefix(f"{CrawlFailed.__module__}.CrawlFailed: ") if lines \
            else "failed"
    if state == "running":
        return f"started {job.started_at:%Y-%m-%d %H:%M:%S} UTC" if job.started_at else ""
    return f"queued {job.enqueued_at:%Y-%m-%d %H:%M:%S} UTC" if job.enqueued_at else ""
