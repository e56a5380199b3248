"""IndexNow: telling search engines which URLs changed, right after a run.

The protocol (indexnow.org, "Documentation"): a POST of JSON ``{"host", "key",
"keyLocation", "urlList"}`` to an endpoint (the shared ``api.indexnow.org``
passes it on to every engine taking part), at most 10,000 URLs a request, every
URL on ``host``. The engine proves the key is the site's by fetching the key
file: ``https://host/KEY.txt`` holding the key (or the file ``keyLocation``
names). Answers: 200 and 202 taken; 400, 403 (key not valid or not found),
422 (URLs not of the host) final; 429 and 5xx retried after a wait.

The key is a secret of the site owner's: it is sent to the endpoint and
nowhere else, and never printed (the caller redacts it from every message).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import httpx

from crawler.http.address_rule import NetworkRule, PrivateAddress
from crawler.http.guarded import guarded_sync_client
from crawler.http.transports import proxy_for

MAX_BATCH = 10_000  # "up to 10,000 URLs per post"
KEY = re.compile(r"[A-Za-z0-9-]{8,128}")  # the protocol's key: 8 to 128 of these
RETRIES = 4
BACKOFF = 2.0  # seconds before the first retry, doubled each time
TIMEOUT = 30.0


class IndexNowError(Exception):
    """The submission failed; what was sent before it failed is in ``sent``."""

    def __init__(self, message: str, sent: int) -> None:
        super().__init__(message)
        self.sent = sent


@dataclass(slots=True)
class Submission:
    endpoint: str
    host: str
    key: str
    key_location: str | None = None
    user_agent: str = "sitemap-crawler"
    max_wait: float = 120.0  # the longest Retry-After honoured
    sleep: Callable[[float], None] = time.sleep
    # where it may connect: the crawl's rule (address_rule.py)
    rule: NetworkRule | None = None


def batches(urls: Iterable[str], size: int = MAX_BATCH) -> Iterator[list[str]]:
    batch: list[str] = []
    for url in urls:
        batch.append(url)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def key_file_holds_key(url: str, key: str, user_agent: str,
                       rule: NetworkRule | None = None) -> str | None:
    """None when the key file answers 200 with the key; else why not (the key never
    named: the caller shows the reason)."""
    try:
        with guarded_sync_client(rule or NetworkRule.open(), proxy=proxy_for(url),
                                 timeout=TIMEOUT, headers={"User-Agent": user_agent},
                                 follow_redirects=False) as client:
            answer = client.get(url)
    except httpx.HTTPError as exc:
        return f"the key file could not be fetched ({type(exc).__name__})"
    if answer.status_code != 200:
        return f"the key file answered HTTP {answer.status_code}"
    if answer.text.strip() != key:
        return "the key file does not hold the key"
    return None


def submit(submission: Submission, urls: Iterable[str]) -> int:
    """Send ``urls`` in batches; returns how many were sent. Raises IndexNowError."""
    sent = 0
    rule = submission.rule or NetworkRule.open()
    with guarded_sync_client(rule, proxy=proxy_for(submission.endpoint), timeout=TIMEOUT,
                             follow_redirects=False,
                             headers={"User-Agent": submission.user_agent,
                                      "Content-Type": "application/json; charset=utf-8"}
                             ) as client:
        for batch in batches(urls):
            body: dict[str, object] = {"host": submission.host, "key": submission.key,
                                       "urlList": batch}
            if submission.key_location is not None:
                body["keyLocation"] = submission.key_location
            _post(client, submission, json.dumps(body).encode(), sent)
            sent += len(batch)
    return sent


def _post(client: httpx.Client, submission: Submission, body: bytes, sent: int) -> None:
    wait = BACKOFF
    for attempt in range(RETRIES + 1):
        try:
            answer = client.post(submission.endpoint, content=body)
        except PrivateAddress as exc:  # the network rule's answer: asking again changes nothing
            raise IndexNowError(str(exc), sent) from None
        except httpx.HTTPError as exc:
            status, why = None, type(exc).__name__
        else:
            status, why = answer.status_code, f"HTTP {answer.status_code}"
            if status in (200, 202):
                return
            if status != 429 and status < 500:
                raise IndexNowError(f"the endpoint refused the URLs: {why}"
                                    + _meaning(status), sent)
            wait = max(wait, _retry_after(answer, submission.max_wait))
        if attempt == RETRIES:
            raise IndexNowError(f"the endpoint kept failing ({why}) after {RETRIES} retries",
                                sent)
        submission.sleep(min(wait, submission.max_wait))
        wait *= 2


def _retry_after(answer: httpx.Response, most: float) -> float:
    try:
        return min(float(answer.headers.get("Retry-After", "0")), most)
    except ValueError:
        return 0.0


def _meaning(status: int) -> str:
    return {400: " (bad request)", 403: " (the key is not valid: is the key file in place?)",
            422: " (URLs that do not belong to the host, or a key that does not match)"
            }.get(status, "")
