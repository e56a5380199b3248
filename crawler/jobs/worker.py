"""The worker class ``rq worker`` is told to use (``-w crawler.jobs.worker.SiteWorker``).

RQ's own ``Worker`` in every respect but one: how long a job's heartbeat may
be missing before RQ calls the job abandoned (and retries it elsewhere). RQ
waits a fixed minute past its monitoring interval; a site's nightly run loses
that minute at most, but a test or an impatient operator may set
``SITEMAP_CRAWLER_HEARTBEAT_GRACE`` (seconds) lower.
"""

from __future__ import annotations

import os

from rq import Worker
from rq.job import Job

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
