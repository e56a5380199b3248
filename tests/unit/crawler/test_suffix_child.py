"""Our host's registered domain from a forked child: the answer tldextract gives
here, the child reaped, and the answer still right when the child is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from crawler.engine.suffix_child import RegisteredDomain
from crawler.urls.scope import registered_domain


@pytest.mark.parametrize("host", ["www.example.co.uk", "docs.python.org", "a.b.github.io",
                                  "localhost.", "1.2.3", "com."])
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


OWN_DOMAINS = ["127.0.0.1", "10.1.2.3", "[::1]", "[2001:db8::1]", "[::ffff:10.0.0.1]",
               "localhost", "intranet", "com", "xn--p1ai"]


@pytest.mark.parametrize("host", OWN_DOMAINS)
def test_an_address_or_a_one_label_name_is_its_own_domain_without_a_child(host: str) -> None:
    # no public suffix makes an IP address or a one-label name part of a larger
    # domain: every crawl of 127.0.0.1 forked a child to parse the list for that
    oracle = RegisteredDomain(host).start()
    assert oracle._pid == 0
    assert oracle() == host


def test_those_hosts_never_load_the_suffix_list_and_it_agrees() -> None:
    script = ("import sys; from crawler.urls.scope import registered_domain\n"
              f"answers = [registered_domain(host) for host in {OWN_DOMAINS!r}]\n"
              "print('tldextract' in sys.modules, answers == " + repr(OWN_DOMAINS) + ")")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
    # what the list itself answers for them
    import tldextract

    extract = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
    assert [extract(host).top_domain_under_public_suffix or host
            for host in OWN_DOMAINS] == OWN_DOMAINS
