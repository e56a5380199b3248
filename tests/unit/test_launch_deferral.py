"""A signal landing in importlib's module-lock callback stops the run a moment later,
never by an exception raised there.

Seen under load (two busy loops beside the suite): a SIGTERM during the
launcher's imports landed in ``_get_module_lock.<locals>.cb``, a weakref callback,
where an exception is "ignored" — printed with a traceback under the one-line
message, then lost.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

import pytest

from crawler.cli import launch


def _frame_named(name: str, filename: str) -> FrameType:
    namespace: dict[str, object] = {}
    exec(compile(f"import sys\ndef {name}():\n    return sys._getframe()\n", filename, "exec"),
         namespace)
    return namespace[name]()  # type: ignore[operator]


def test_in_importlibs_callback_the_stop_comes_a_moment_later(monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    timers: list[float] = []
    handlers: list[object] = []
    monkeypatch.setattr("signal.setitimer", lambda _which, seconds: timers.append(seconds))
    monkeypatch.setattr("signal.signal", lambda signum, handler: handlers.append(handler))
    launch._stop(signal.SIGTERM, _frame_named("cb", "<frozen importlib._bootstrap>"))
    assert timers and 0 < timers[0] < 0.1  # the timer's signal raises the stop
    assert handlers == [launch._stop]
    with pytest.raises(launch._Stopped):  # and then, outside the callback, it does
        launch._stop(signal.SIGALRM, sys._getframe())


def test_anywhere_else_it_stops_the_import_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("signal.setitimer", lambda *_args: pytest.fail("deferred"))
    with pytest.raises(launch._Stopped):
        launch._stop(signal.SIGTERM, sys._getframe())
    with pytest.raises(launch._Stopped):  # a function of ours called cb is not importlib's
        launch._stop(signal.SIGTERM, _frame_named("cb", __file__))


def test_a_stop_inside_a_class_statement_is_still_the_interrupted_exit(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Seen in CI: the SIGTERM landed in a dataclass field's ``__set_name__``, which
    Python wraps: ``RuntimeError: Error calling __set_name__ ...`` from the stop. It
    must end as every stop during start-up does, exit 130 with its one line."""
    import crawler.cli.commands as commands

    class Stopping:
        def __set_name__(self, owner: type, name: str) -> None:
            raise launch._Stopped

    def run() -> None:
        type("SeedCounts", (), {"refused_examples": Stopping()})

    monkeypatch.setattr(commands, "main", run)
    monkeypatch.setattr(sys, "argv", ["sitemap-crawler", "crawl", "http://s.test/"])
    monkeypatch.setattr("signal.signal", lambda *_args: None)
    with pytest.raises(SystemExit) as ended:
        launch.main()
    assert ended.value.code == 130
    assert "interrupted before the crawl began" in capsys.readouterr().err
