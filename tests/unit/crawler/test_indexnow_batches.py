"""IndexNow's request shape, without a network: batches of at most 10,000 URLs, and
the waits between retries (the e2e tests send them to a local endpoint)."""

from __future__ import annotations

import json

import httpx
import pytest

from crawler.http import indexnow
from crawler.http.indexnow import IndexNowError, Submission, batches, submit


def test_batches_hold_at_most_ten_thousand_urls() -> None:
    sizes = [len(batch) for batch in batches(f"https://e.com/{n}" for n in range(25_001))]
    assert sizes == [10_000, 10_000, 5_001]
    assert list(batches([])) == []


def test_retries_wait_longer_each_time_and_give_up(monkeypatch: pytest.MonkeyPatch) -> None:
    bodies: list[dict] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(503)

    transport = httpx.MockTransport(answer)
    monkeypatch.setattr(indexnow, "guarded_sync_client",
                        lambda _rule, proxy=None, **kwargs: httpx.Client(transport=transport,
                                                                          **kwargs))
    waits: list[float] = []
    submission = Submission("https://api.example/indexnow", "e.com", "k" * 8,
                            sleep=waits.append)
    with pytest.raises(IndexNowError) as failed:
        submit(submission, ["https://e.com/a"])
    assert waits == [2.0, 4.0, 8.0, 16.0]
    assert failed.value.sent == 0 and "after 4 retries" in str(failed.value)
    assert len(bodies) == 5 and bodies[0] == {"host": "e.com", "key": "k" * 8,
                                              "urlList": ["https://e.com/a"]}
