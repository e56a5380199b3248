"""The pure parts of ``--workers``: the concurrency shares, ``auto``, and the wire."""

from __future__ import annotations

import os
import pickle
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord, Verdict
from crawler.engine.cores import worker_count
from crawler.engine.worker_pool import shares
from crawler.page.read import PageOutcome
from crawler.page.wire import outcome_in as _outcome_in
from crawler.page.wire import outcome_out as _outcome_out


@given(st.integers(1, 500), st.integers(1, 64))
def test_shares_add_up_to_the_concurrency_and_differ_by_one_at_most(
        concurrency: int, workers: int) -> None:
    if workers > concurrency:
        return  # refused by CrawlConfig
    split = shares(concurrency, workers)
    assert len(split) == workers and sum(split) == concurrency
    assert min(split) >= 1 and max(split) - min(split) <= 1


def test_auto_is_the_usable_cores_never_more_than_the_concurrency() -> None:
    cores = len(os.sched_getaffinity(0))
    assert worker_count("auto", 64) == min(cores, 64)
    assert worker_count("auto", 1) == 1
    assert worker_count(3, 8) == 3


def _outcome(error: ErrorKind | None, verdict: Verdict) -> PageOutcome:
    record = PageRecord(
        url="http://h/p?q=1", depth=3, status=200, content_type="text/html",
        lastmod=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), error=error, canonical="http://h/c",
        noindex=True, links_found=2, elapsed=0.25, attempts=2, verdict=verdict,
        alternates=(("de", "http://h/de/"),), images=("http://h/i.png",), title="Tïtle",
        bytes=1234, fingerprint=b"\x00\x01", detail="why")
    return PageOutcome(record, links=["http://h/a", "http://h/b"], siblings=["http://h/c"],
                       etag='"e"', last_modified="Fri, 02 Jan 2026 03:04:05 GMT",
                       content_hash=b"\x02", anchors={"http://h/a": "A"},
                       fresh=["http://h/b"])


@pytest.mark.parametrize(("error", "verdict"), [
    (None, Verdict.LISTED), (ErrorKind.TOO_LARGE, Verdict.ERROR),
    (None, Verdict.CANONICALISED)])
def test_an_outcome_crosses_the_wire_unchanged(error: ErrorKind | None,
                                               verdict: Verdict) -> None:
    outcome = _outcome(error, verdict)
    back = _outcome_in(pickle.loads(pickle.dumps(_outcome_out(outcome))))
    assert back == outcome
    assert back.record.error is error and back.record.verdict is verdict


def test_every_record_field_crosses_the_wire() -> None:
    """A field added to PageRecord travels without a change here (or this fails)."""
    outcome = _outcome(None, Verdict.LISTED)
    for name in PageRecord.__dataclass_fields__:
        if getattr(outcome.record, name) is None and name != "error":
            setattr(outcome.record, name, "set")  # any value: it must come back
    back = _outcome_in(_outcome_out(outcome))
    assert back.record == outcome.record


def test_a_worker_that_fails_names_the_error_on_its_socket() -> None:
    """A bug in a worker reaches the coordinator as one message, never as a
    traceback on stderr (here the worker gets no usable configuration)."""
    import socket

    import anyio
    from anyio.abc import UNIXSocketStream

    from crawler.engine.worker import _serve
    from crawler.engine.worker_link import Link as _Link

    async def main() -> list[tuple[object, ...]] | None:
        ours, theirs = socket.socketpair()
        async with anyio.create_task_group() as group:
            group.start_soon(_serve, theirs, None, False, [], None)
            link = _Link(await UNIXSocketStream.from_socket(ours), 0)
            batch = await link.receive()
            await link.stream.aclose()
        return batch

    batch = anyio.run(main)
    assert batch is not None and len(batch) == 1
    kind, text = batch[0]
    assert kind == "failed" and text.startswith("AttributeError: ")


def test_a_link_is_handed_over_once_and_forgotten_past_the_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from crawler.engine import page_fetcher

    sent: set[str] = set()
    assert page_fetcher.unsent(["a", "b", "a", "c"], sent) == ["a", "b", "c"]
    assert page_fetcher.unsent(["c", "d", "b"], sent) == ["d"]
    monkeypatch.setattr(page_fetcher, "LINKS_REMEMBERED", 3)
    # four remembered: the set starts again, so "a" goes out a second time
    assert page_fetcher.unsent(["a", "e"], sent) == ["a", "e"]
    assert sent == {"a", "e"}


_PAGE = '<a href="/nav">n</a><a href="/{0}">{0}</a><a href="http://other.test/x">x</a>'


def _read_two_pages(**settings: object) -> list[PageOutcome]:
    """Two pages read by one reader, as one parse child reads them: both link /nav."""
    from crawler.config import CrawlConfig
    from crawler.core.response import Response
    from crawler.engine.page_fetcher import PageFetcher

    reader = PageFetcher(CrawlConfig(start_url="http://h/", **settings),  # type: ignore[arg-type]
                         fetcher=None)
    now = datetime.now(UTC)
    return [reader.read(Response(url=f"http://h/{name}", status=200, content_type="text/html",
                                 body=_PAGE.format(name).encode()), 1, now)
            for name in ("one", "two")]


@pytest.mark.parametrize("settings", [{"state_path": "s.db"}, {"audit": True},
                                      {"check_external": True}])
def test_a_crawl_that_keeps_every_link_gets_them_all_and_judges_the_new_ones(
        settings: dict[str, object]) -> None:
    """The state stores each page's every link, an audit counts who links where: those
    get every link, and the coordinator judges only those not handed over before (it
    would find the others in its seen set and drop them, after paying to receive,
    clean and look each one up)."""
    first, second = _read_two_pages(**settings)
    assert first.links == ["http://h/nav", "http://h/one", "http://other.test/x"]
    assert first.fresh == first.links
    assert second.links == ["http://h/nav", "http://h/two", "http://other.test/x"]
    assert second.fresh == ["http://h/two"]


def test_a_plain_crawl_hands_over_each_link_once() -> None:
    first, second = _read_two_pages()
    assert first.links == ["http://h/nav", "http://h/one", "http://other.test/x"]
    assert second.links == ["http://h/two"]
    assert first.fresh is None and second.fresh is None  # the links are the new ones


def test_a_link_carrying_a_secret_leaves_the_links_to_judge_too() -> None:
    from crawler.core.credentials import Credentials
    from crawler.engine.secret_scrub import SecretScrub

    scrub = SecretScrub(Credentials(headers=(("X-Token", "s3cret-value"),)))
    outcome = PageOutcome(PageRecord(url="http://h/", depth=0),
                          links=["http://h/a", "http://h/?t=s3cret-value"],
                          fresh=["http://h/?t=s3cret-value"])
    assert scrub.scrub_outcome(outcome) == ["http://h/?t=s3cret-value"]
    assert outcome.links == ["http://h/a"] and outcome.fresh == []
