"""The parse sandbox (crawler.engine.parse_sandbox) over its real child process: pages
in flight together each get their own outcome, a page that kills the child fails
alone, a page that overruns the budget is cut, and a new child reads the rest."""

from __future__ import annotations

import os
import pickle
import time
from datetime import UTC, datetime

import anyio
import pytest

from crawler.core.errors import ErrorKind
from crawler.core.response import Response
from crawler.engine.parse_sandbox import ParseSandbox, Reader
from crawler.engine.parse_wire import batch_frame, frames_in, pages_frame, pages_in, wire_of
from crawler.page.read import PageOutcome, read_page


def _read(response: Response, depth: int, now: datetime, rendered: bool,
          _probe: object = None) -> PageOutcome:
    if response.url.endswith("/crash"):
        os._exit(3)  # a parser dying under us (a segfault in C would look the same)
    if response.url.endswith("/slow"):
        time.sleep(30)
    return read_page(response, depth, "sitemap-crawler", now)


def _page(path: str) -> Response:
    body = f'<!doctype html><title>{path}</title><a href="{path}/next">next</a>'.encode()
    return Response(url="http://127.0.0.1:9" + path, status=200,
                    content_type="text/html; charset=utf-8", body=body)


def _read_together(read: Reader, paths: list[str]) -> tuple[dict[str, PageOutcome], int]:
    """Every page sent to one sandbox (1 s budget) at once: the outcomes, the restarts."""
    outcomes: dict[str, PageOutcome] = {}

    async def go() -> int:
        async with ParseSandbox(read, budget=1.0) as sandbox:
            async def one(path: str) -> None:
                outcomes[path] = await sandbox.read(_page(path), 1, datetime.now(UTC))

            async with anyio.create_task_group() as group:
                for path in paths:
                    group.start_soon(one, path)
            return sandbox.restarts

    return outcomes, anyio.run(go)


def test_pages_in_flight_survive_a_crash_and_an_overrun() -> None:
    paths = [f"/p{n}" for n in range(40)]
    paths[7], paths[23] = "/crash", "/slow"
    started = time.monotonic()
    outcomes, restarts = _read_together(_read, paths)
    assert time.monotonic() - started < 10  # the slow page was cut, not waited for
    assert restarts == 2
    assert outcomes["/crash"].record.error is ErrorKind.INTERNAL
    assert "died" in (outcomes["/crash"].record.detail or "")
    assert outcomes["/slow"].record.error is ErrorKind.PARSE_TIMEOUT
    for path in paths:
        if path not in ("/crash", "/slow"):
            record = outcomes[path].record
            assert record.error is None and record.url.endswith(path), record
            assert list(outcomes[path].links) == [
                f"http://127.0.0.1:9{path}/next"]


def _read_steadily(response: Response, depth: int, now: datetime,
                   rendered: bool, _probe: object = None) -> PageOutcome:
    time.sleep(0.4)  # each page well within the budget; all of them together, not
    return read_page(response, depth, "sitemap-crawler", now)


def test_each_page_has_the_budget_to_itself_however_many_wait() -> None:
    """The child reads the pages that arrived together before it answers; the budget
    is still each page's own, timed from when the child began it."""
    outcomes, restarts = _read_together(_read_steadily, [f"/p{n}" for n in range(6)])
    assert restarts == 0
    assert all(outcome.record.error is None for outcome in outcomes.values())
    assert len(outcomes) == 6


def test_frames_cut_anywhere_come_out_whole_and_in_order() -> None:
    """The socket hands over bytes as they come: a batch split at any byte is read
    once it is whole, nothing before it is lost, and the buffer can then be trimmed."""
    batches: list[list[object]] = [[1, "a"], ["x" * 300_000], [], [(2, b"\x00" * 5)]]
    stream = b"".join(batch_frame(batch) for batch in batches)
    for cut in (1, 3, 4, 5, 9, 300_000, len(stream) - 1):
        buffer = bytearray()
        got: list[object] = []
        for piece in (stream[:cut], stream[cut:]):
            buffer += piece
            frames, used = frames_in(buffer)
            del buffer[:used]  # no view of the buffer outlives the call
            got += [pickle.loads(frame) for frame in frames]
        assert got == batches and not buffer, cut


def test_pages_cross_with_their_bodies_after_the_pickle_each_body_its_own() -> None:
    """Bodies travel behind the pickle of the rest: a page without a body, one with an
    empty body, and two of different sizes each get their own back, in order,
    whatever byte the socket cuts the batch at, and every other field as sent."""
    now = datetime(2026, 11, 29, tzinfo=UTC)
    responses = [Response(url="http://a.test/none", status=304, etag='"e"'),
                 Response(url="http://a.test/empty", status=200, body=b""),
                 Response(url="http://a.test/big", status=200, content_type="text/html",
                          body=b"<p>" * 100_000, link=["<x>; rel=canonical"]),
                 Response(url="http://a.test/small", status=404, body=b"\x00gone")]
    pages = [(n, wire_of(r), r.body,
              n + 1, now, n == 2, None) for n, r in enumerate(responses)]
    stream = pages_frame(pages[:3]) + pages_frame(pages[3:])
    for cut in (1, 5, 9, len(stream) // 2, len(stream) - 1):
        buffer = bytearray()
        got = []
        for piece in (stream[:cut], stream[cut:]):
            buffer += piece
            frames, used = frames_in(buffer)
            del buffer[:used]
            got += [page for frame in frames for page in pages_in(frame)]
        assert [(t, d, w, r) for t, _resp, d, w, r, _p in got] == [
            (n, n + 1, now, n == 2) for n in range(4)], cut
        assert [response for _t, response, *_rest in got] == responses, cut
        assert not buffer


def _read_busy_or_waiting(response: Response, depth: int, now: datetime,
                          rendered: bool, _probe: object = None) -> PageOutcome:
    if response.url.endswith("/waits"):  # a child the machine gives no CPU for 2 s
        time.sleep(2.0)
    if response.url.endswith("/spins"):  # a page that costs the parser CPU without end
        ends = time.monotonic() + 30
        while time.monotonic() < ends:
            pass
    return read_page(response, depth, "sitemap-crawler", now)


@pytest.mark.slow(6)
def test_the_budget_is_the_childs_cpu_so_a_busy_machine_fails_no_page() -> None:
    """On a loaded machine the child gets a fraction of a core: a page it reads within
    its budget of CPU is read, however long the wall clock says it took (up to four
    budgets); a page that spends the budget on CPU is cut once it has (within four
    budgets of wall time: how soon depends on the CPU the machine gives it)."""
    started = time.monotonic()
    outcomes, restarts = _read_together(_read_busy_or_waiting, ["/waits", "/spins", "/p"])
    assert outcomes["/waits"].record.error is None
    assert outcomes["/spins"].record.error is ErrorKind.PARSE_TIMEOUT
    assert outcomes["/p"].record.error is None
    assert restarts == 1
    assert time.monotonic() - started < 25  # cut, not waited out (its spin lasts 30 s)
