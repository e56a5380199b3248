"""Our host's registered domain, worked out in a forked child while the crawl starts.

The crawl needs the public-suffix list for one question, once: which domain is
our host registered under (so that a link to ``docs.example.com`` from
``www.example.com`` is reported as another host of the site, not an external
link)? tldextract answers it, but importing it (it brings ``requests``) and
parsing its suffix list took ~100 ms of CPU: in this process that was 100 ms
before the first request, or, in a thread, a GIL shared with the start of the
crawl and a wait at the end of a small one. A child forked at the start (a fork
of a process that has everything else imported takes a few milliseconds)
works it out on another core and leaves the answer on a socket; the crawl reads
it when the first link to another host needs it, by then long written.
"""

from __future__ import annotations

import contextlib
import os
import socket

from crawler.engine.forked_child import become_child, kill_and_reap
from crawler.urls.scope import is_own_domain, registered_domain

_MAX_ANSWER = 4096


class RegisteredDomain:
    """``registered_domain(host)``, asked of a child at :meth:`start`, read by
    :meth:`__call__`; where there is no ``fork``, worked out here when asked."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._answer: str | None = None
        self._pid = 0
        self._sock: socket.socket | None = None

    def start(self) -> RegisteredDomain:
        if not hasattr(os, "fork") or is_own_domain(self.host):
            return self  # worked out here when asked (at once, for an address)
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            ours.close()
            _child(theirs, self.host)
        theirs.close()
        self._pid, self._sock = pid, ours
        return self

    def __call__(self) -> str:
        if self._answer is None:
            answer = ""
            if self._sock is not None:
                with contextlib.suppress(OSError):
                    answer = _read_all(self._sock).decode("utf-8", "replace")
            self.close()
            self._answer = answer or registered_domain(self.host)  # the child failed
        return self._answer

    def close(self) -> None:
        """Stop the child if it still works, and reap it."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._pid:
            kill_and_reap(self._pid)
            self._pid = 0


def _read_all(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while sum(map(len, chunks)) < _MAX_ANSWER:
        chunk = sock.recv(_MAX_ANSWER)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _child(sock: socket.socket, host: str) -> None:
    code = 0
    try:
        become_child(sock, cap_memory=False)
        sock.sendall(registered_domain(host).encode())
    except BaseException:
        code = 1
    finally:
        os._exit(code)
