"""What the user sees while a crawl runs: rich progress, ``-v`` request lines, the summary.

All of it goes to stderr, so stdout stays clean for cron and pipes; the
live display appears only when stderr is a terminal, and rich is imported only
then (25 ms of every start under cron or in a pipe): elsewhere the lines are
written as they are, by :class:`PlainConsole`.

Never silent: on a terminal the line is redrawn four times a second whether or
not a page arrived, so its clock ticks through every phase (pages, the live
sitemap, external links, the reports), each naming itself with its own counts
and an estimate of the time left. Piped (a log, cron, CI), the same line is
written every :data:`PIPED_EVERY` seconds (``SITEMAP_CRAWLER_PROGRESS_EVERY``; 0:
none), and a line as each phase gives way to the next; ``--quiet`` writes none.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.live import Live

from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord
from crawler.engine.result import CrawlResult

REFRESH_SECONDS = 0.1
REFRESHES_A_SECOND = 4  # the terminal's redraws while nothing arrives: the clock ticks
PIPED_EVERY = 10.0  # seconds between two progress lines into a pipe or a log


class TextConsole(Protocol):
    """What the display needs of a console: rich's, or :class:`PlainConsole`."""

    is_terminal: bool

    def print(self, *objects: Any, markup: bool | None = None) -> None: ...


class PlainConsole:
    """Lines to stderr as they are, for a stderr that is not a terminal. Control
    characters a page or a server put into a message are shown escaped, never
    sent to whatever reads the log."""

    is_terminal = False

    def print(self, *objects: Any, markup: bool | None = None) -> None:
        text = " ".join(str(item) for item in objects)
        sys.stderr.write(text.translate(_CONTROLS) + "\n")
        sys.stderr.flush()


_CONTROLS = {code: f"\\x{code:02x}" for code in [*range(32), 127] if code not in (9, 10)}


def _console(quiet: bool) -> TextConsole:
    if quiet or not sys.stderr.isatty():
        return PlainConsole()
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


class CrawlDisplay:
    """The ``on_record`` callback of :func:`crawler.crawl`, plus its screen."""

    def __init__(self, *, quiet: bool, verbose: bool, concurrency: int = 1,
                 max_pages: int | None = None, console: TextConsole | None = None) -> None:
        self.concurrency = concurrency
        self.max_pages = max_pages
        self.console = console or _console(quiet)
        self.verbose = verbose and not quiet
        self.quiet = quiet
        self.live_enabled = not quiet and self.console.is_terminal and sys.stderr.isatty()
        self._live: Live | None = None
        self._last_draw = 0.0
        self.latest: CrawlResult | None = None
        self.began = time.monotonic()
        self.phase: str | None = None  # the CLI's own phase after the crawl ("reports")
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self.piped_every = piped_every()
        self.rendered: int | None = None  # --render: pages a browser rendered so far

    def line(self) -> str:
        """The progress line as it stands now."""
        result = self.latest
        if result is None:
            return f"{clock(time.monotonic() - self.began)} · starting: robots.txt and the " \
                   "first page…"
        return status_line(result, self.concurrency, self.max_pages, self.phase, self.rendered)

    def __rich__(self) -> Any:
        from rich.text import Text

        return Text(self.line())

    def __enter__(self) -> CrawlDisplay:
        """Starts a thread (rich's refresher, or the piped ticker) with Ctrl-C and SIGTERM
        blocked in it, as threads inherit their maker's mask: the kernel then hands the
        signals to the main thread alone, which holds them while the event loop is made
        (``crawler.cli.signals.signals_held``). A thread open to them took a SIGTERM
        there, and its handler ran in the half-made loop."""
        from crawler.cli.signals import signals_held

        if self.live_enabled:
            from rich.live import Live

            self._live = Live(self, console=self.console,  # type: ignore[arg-type]
                              transient=True, auto_refresh=True,
                              refresh_per_second=REFRESHES_A_SECOND)
            with signals_held():
                self._live.__enter__()
        elif not self.quiet and self.piped_every > 0:
            self._ticker = threading.Thread(target=self._write_now_and_then, daemon=True,
                                            name="progress")
            with signals_held():
                self._ticker.start()
        return self

    def phase_ended(self, ended: str, begun: str) -> None:
        """Piped: a phase's end, as it comes (the event loop's thread calls it)."""
        if self.latest is not None:  # set with the first page, which comes first
            self.console.print(phase_line(self.latest, ended, begun), markup=False)

    def _write_now_and_then(self) -> None:
        """Piped: the progress line once every ``piped_every`` seconds, so a log shows
        the run is alive without a line a page."""
        while not self._stop.wait(self.piped_every):
            self.console.print(self.line(), markup=False)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1)
            self._ticker = None
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)
            self._live = None

    def __call__(self, record: PageRecord, result: CrawlResult) -> None:
        if self.latest is None and self._ticker is not None:  # piped: say each phase's end
            result.on_phase = self.phase_ended
        self.latest = result
        if record.render_why is not None:  # rendering is asked: say how it goes
            self.rendered = (self.rendered or 0) + record.rendered
        if record.error is ErrorKind.INTERNAL and not self.quiet:  # a bug of ours: say where
            self.console.print(f"sitemap-crawler: warning: {record.url}: {record.detail} "
                               "(recorded as internal-error; please report it)", markup=False)
        if self.verbose:
            outcome = str(record.status) if record.error is None else record.error.value
            self.console.print(
                f"GET {record.url} {outcome} {record.elapsed * 1000:.0f}ms", markup=False
            )
        now = time.monotonic()
        if self._live is not None and now - self._last_draw >= REFRESH_SECONDS:
            self._last_draw = now
            self._live.refresh()


def piped_every() -> float:
    """Seconds between two piped progress lines: :data:`PIPED_EVERY`, or what
    ``SITEMAP_CRAWLER_PROGRESS_EVERY`` says (0: no piped progress at all)."""
    try:
        every = float(os.environ.get("SITEMAP_CRAWLER_PROGRESS_EVERY", PIPED_EVERY))
    except ValueError:
        return PIPED_EVERY
    return every if every >= 0 else PIPED_EVERY


def phase_line(result: CrawlResult, ended: str, begun: str) -> str:
    """What a log is told as a phase gives way to the next: its end, and the counts."""
    stats = result.stats
    elapsed = time.monotonic() - stats.started if stats.started else 0.0
    return (f"{clock(elapsed)} · {ended} done, {begun} next · pages {stats.fetched:,} "
            f"fetched · listed {stats.listed:,} · errors {stats.errors:,}")


def status_line(result: CrawlResult, concurrency: int, max_pages: int | None = None,
                phase: str | None = None, rendered: int | None = None) -> str:
    """One line of counters a person can read at a glance: how long, what phase, how
    far, how long still.

    In the pages phase: "known" is every URL the crawl will request as far as it
    knows now (done, queued, in flight; at most ``--max-pages``), so the share
    grows as the crawl discovers the site and is honest about it; jobs beyond
    ``concurrency`` wait at a worker, not on the wire. In the external phase: links
    checked of those to check, and the origin whose links left take longest at its
    pace, which is the phase's estimate."""
    stats = result.stats
    elapsed = max(time.monotonic() - stats.started, 1e-6) if stats.started else 0.0
    rate = stats.fetched / elapsed if elapsed else 0.0
    known = stats.fetched + stats.queued + stats.in_flight
    if max_pages is not None:
        known = min(known, max_pages)
    share = 100 * stats.fetched // known if known else 0
    pages = f"pages {stats.fetched:,} of {known:,} known ({share}%)"
    current = phase or result.phase
    if current == "external links" and result.external_progress is not None:
        checked, total, origin, left, eta = result.external_progress
        slowest = f" · slowest {origin}: {left:,} left" if origin and left else ""
        return (f"{clock(elapsed)} · external links {checked:,} of {total:,} checked"
                f"{slowest} · about {clock(eta)} left · {pages}")
    if current != "pages":
        return f"{clock(elapsed)} · {current}… · {pages} · listed {stats.listed:,}"
    left = (known - stats.fetched) / rate if rate and stats.fetched >= 20 else None
    return (
        f"{clock(elapsed)} · {pages} · "
        f"queued {stats.queued:,} · in flight {min(stats.in_flight, concurrency):,} · "
        f"listed {stats.listed:,} · errors {stats.errors:,} · {rate:,.0f} pages/s"
        + (f" · rendered {rendered:,}" if rendered is not None else "")
        + (f" · about {clock(left)} left" if left is not None else "")
    )


def clock(seconds: float) -> str:
    """``125`` → ``2:05``, ``3725`` → ``1:02:05``."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
