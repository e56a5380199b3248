"""The worker that runs site jobs: ``sitemap-crawler worker --redis URL``.

RQ's own ``Worker`` in every respect but one: how long a job's heartbeat may
be missing before RQ calls the job abandoned (and retries it elsewhere). RQ
waits a fixed minute past its monitoring interval; a site's nightly run loses
that minute at most, but a test or an impatient operator may set
``SITEMAP_CRAWLER_HEARTBEAT_GRACE`` (seconds) lower.

:func:`run_worker` always starts RQ's scheduler with it: a failed job's retry
is *scheduled* for later, and only a worker with a scheduler puts it back on
the queue. ``rq worker`` without ``--with-scheduler`` ran a failing job once,
and it then waited forever.
"""

from __future__ import annotations

import os

from rq import Worker
from rq.job import Job

from crawler.jobs.queue import connect

DEFAULT_GRACE = 60


def heartbeat_grace() -> int:
    try:
        return max(1, int(os.environ.get("SITEMAP_CRAWLER_HEARTBEAT_GRACE", DEFAULT_GRACE)))
    except ValueError:
        return DEFAULT_GRACE


class SiteWorker(Worker):
    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        interval = self.job_monitoring_interval
        if job.timeout and job.timeout > 0:
            interval = int(min(job.timeout - working_time, interval))
        return interval + heartbeat_grace()


# How often a worker looks for jobs whose worker died (RQ's default is 10 minutes):
# such a job is taken over at most this long after its heartbeat ran out.
MAINTENANCE_INTERVAL = 30
MONITORING_INTERVAL = 30  # how often a running job's heartbeat is renewed (RQ's)


def run_worker(redis_url: str, queue_name: str, *, burst: bool = False,
               monitoring_interval: int = MONITORING_INTERVAL,
               maintenance_interval: int = MAINTENANCE_INTERVAL) -> None:
    """Take jobs off ``queue_name`` until stopped (``burst``: until the queue is
    empty), with RQ's scheduler, so retries come back when they are due. A job whose
    worker died is taken over within ``monitoring_interval`` + the heartbeat grace +
    ``maintenance_interval`` (two minutes by default)."""
    worker = SiteWorker([queue_name], connection=connect(redis_url),
                        job_monitoring_interval=monitoring_interval,
                        maintenance_interval=maintenance_interval)
    worker.work(burst=burst, with_scheduler=True, logging_level="INFO")
