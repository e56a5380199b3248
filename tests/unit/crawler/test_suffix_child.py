"""Our host's registered domain from a forked child: the answer tldextract gives
here, the child reaped, and the answer still right when the child is gone."""

from __future__ import annotations

import os
import signal

import pytest

from crawler.engine.suffix_child import RegisteredDomain
from crawler.urls.scope import registered_domain


@pytest.mark.parametrize("host", ["www.example.co.uk", "docs.python.org", "127.0.0.1",
                                  "a.b.github.io", "localhost"])
def test_the_child_answers_what_tldextract_answers(host: str) -> None:
    oracle = RegisteredDomain(host).start()
    pid = oracle._pid
    assert pid > 0
    assert oracle() == registered_domain(host)
    assert oracle._pid == 0
    with pytest.raises(ChildProcessError):  # reaped: no zombie left
        os.waitpid(pid, os.WNOHANG)
    assert oracle() == registered_domain(host)  # asked again: the same, from memory


def test_a_child_that_died_is_answered_here() -> None:
    oracle = RegisteredDomain("www.example.co.uk").start()
    os.kill(oracle._pid, signal.SIGKILL)
    assert oracle() == "example.co.uk"


def test_closing_before_asking_stops_the_child() -> None:
    oracle = RegisteredDomain("www.example.co.uk").start()
    pid = oracle._pid
    oracle.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert oracle() == "example.co.uk"
