"""A signal landing in importlib's module-lock callback is sent again, never raised there.

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


def test_in_importlibs_callback_the_signal_is_sent_again(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr("os.kill", lambda pid, signum: sent.append((pid, signum)))
    launch._stop(signal.SIGTERM, _frame_named("cb", "<frozen importlib._bootstrap>"))
    assert [signum for _pid, signum in sent] == [signal.SIGTERM]


def test_anywhere_else_it_stops_the_import_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.kill", lambda pid, signum: pytest.fail("sent again"))
    with pytest.raises(launch._Stopped):
        launch._stop(signal.SIGTERM, sys._getframe())
    with pytest.raises(launch._Stopped):  # a function of ours called cb is not importlib's
        launch._stop(signal.SIGTERM, _frame_named("cb", __file__))
