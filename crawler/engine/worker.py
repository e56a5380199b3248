"""A worker process: fetch and read the jobs the coordinator sends, until it closes
the socket. It keeps no crawl-wide state; the pacing gate and the cookie jar are
the coordinator's, asked and told over the socket."""

from __future__ import annotations

import os
import signal
import socket
from contextlib import suppress
from http.cookiejar import Cookie

import anyio
import anyio.to_thread
from anyio.abc import UNIXSocketStream

from crawler.config import CrawlConfig
from crawler.engine.page_fetcher import PageFetcher
from crawler.engine.worker_link import BEAT_SECONDS, OUTCOME_LINGER, Link, set_jar
from crawler.frontier.job import Job
from crawler.http.fetch import Fetcher, FetchOptions
from crawler.http.politeness import Gate
from crawler.page.wire import outcome_out
from crawler.urls.robots import RobotsPolicy


class _AskingGate(Gate):
    """A worker's gate: lets requests start freely while the coordinator's gate
    holds nothing back, and asks it for every start while it does."""

    def __init__(self, link: Link, holding: bool) -> None:
        super().__init__()
        self.link = link
        self.holding = holding
        self._grants: dict[int, anyio.Event] = {}
        self._asked = 0

    async def wait(self) -> None:
        if not self.holding:
            return
        self._asked += 1
        granted = self._grants[self._asked] = anyio.Event()
        self.link.post(("wait", self._asked), urgent=True)
        await granted.wait()

    def grant(self, ticket: int) -> None:
        event = self._grants.pop(ticket, None)
        if event is not None:
            event.set()

    def back_off(self, pause: float) -> None:
        self.holding = True  # at once here; the coordinator tells the others
        self.link.post(("back_off", pause), urgent=True)

    def recover(self) -> None:
        if self.holding:
            self.link.post(("recover",))


def serve(sock: socket.socket, config: CrawlConfig, holding: bool,
          cookies: list[Cookie], robots: RobotsPolicy | None = None,
          environ: dict[str, str] | None = None) -> None:
    """A worker process: fetch and read the jobs the coordinator sends until it
    closes the socket. Ctrl-C is the coordinator's to handle: ignored here.

    ``environ`` is the coordinator's environment as the pool started. A worker is
    forked from a fork server (``worker_pool._start_method``) that another crawl of
    this process may have started, before the environment changed (two crawls at
    once; or a Python where the server cannot be stopped between pools), and
    proxies and certificate stores are read from the environment."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if environ is not None and environ != os.environ:
        os.environ.clear()
        os.environ.update(environ)
    with suppress(BaseException):  # whatever happens here is reported on the socket
        anyio.run(_serve, sock, config, holding, cookies, robots)


async def _serve(sock: socket.socket, config: CrawlConfig, holding: bool,
                 cookies: list[Cookie], robots: RobotsPolicy | None) -> None:
    link = Link(await UNIXSocketStream.from_socket(sock), OUTCOME_LINGER)
    async with link.stream:
        try:
            await _work(link, config, holding, cookies, robots)
        except Exception as exc:  # a bug of ours: named to the coordinator, not printed
            while isinstance(exc, ExceptionGroup):  # raised in a task: name that error
                exc = exc.exceptions[0]
            await link.send_now([("failed", f"{type(exc).__name__}: {exc}")])


async def _work(link: Link, config: CrawlConfig, holding: bool,
                cookies: list[Cookie], robots: RobotsPolicy | None) -> None:
    async with Fetcher(FetchOptions.of(config)) as fetcher:
        gate = fetcher.gate = _AskingGate(link, holding)
        set_jar(fetcher, cookies)
        fetcher.on_cookies = lambda: link.post(("cookies", list(fetcher.cookies.jar)))
        # one parse child a worker: --workers auto counts a core for each worker and its child
        async with PageFetcher(config, fetcher, robots=robots, children=1) as pages:
            link.post(("ready",), urgent=True)
            jobs_tx, jobs_rx = anyio.create_memory_object_stream[tuple[Job, int]](float("inf"))

            async def work() -> None:
                # each link comes once (PageFetcher hands a link over the first time
                # only, unless the state or an audit keeps every link of every page)
                async for job, ticket in jobs_rx:
                    outcome = await pages.fetch(job)
                    link.post(("done", ticket, outcome_out(outcome)))

            async def beat() -> None:  # the coordinator kills a worker it stops hearing
                while True:
                    await anyio.sleep(BEAT_SECONDS)
                    link.post(("beat",))

            async with anyio.create_task_group() as group:
                group.start_soon(link.send_loop)
                group.start_soon(beat)
                for _ in range(config.concurrency):
                    group.start_soon(work)
                while (batch := await link.receive()) is not None:
                    for message in batch:
                        kind = message[0]
                        if kind == "job":
                            _, url, depth, validators, probe, ticket = message
                            jobs_tx.send_nowait((Job(url, depth, validators=validators,
                                                     probe=probe), ticket))
                        elif kind == "go":
                            gate.grant(message[1])
                        elif kind == "holding":
                            gate.holding = message[1]
                        elif kind == "cookies":
                            set_jar(fetcher, message[1])
                group.cancel_scope.cancel()  # the coordinator is done (or gone)
