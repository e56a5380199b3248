"""The network rule (crawler.http.address_rule): which addresses a crawl may dial.

The classes are checked against a table of spellings; the decision is then
proven on real sockets: a listener on 127.0.0.1 that a crawl from a public
start must never reach, by any transport, by address or by a name that resolves
there (including one that resolves elsewhere first: the address dialled is the
address checked).
"""

from __future__ import annotations

import asyncio
import socket
import threading

import anyio
import httpx
import pytest

from crawler.config import CrawlConfig
from crawler.core.errors import ErrorKind
from crawler.http.address_rule import (
    AddressClass,
    NetworkRule,
    PrivateAddress,
    address_class,
    rule_for_config,
)
from crawler.http.fetch import Fetcher, FetchOptions
from crawler.http.guarded import guarded_client, guarded_sync_client
from crawler.http.h1_transport import H1Transport
from crawler.http.transports import tls_context

pytestmark = pytest.mark.timeout(30)

PUBLIC_ONLY = NetworkRule.for_classes(set())


@pytest.mark.parametrize(("address", "kind"), [
    ("127.0.0.1", AddressClass.LOOPBACK), ("127.255.0.9", AddressClass.LOOPBACK),
    ("::1", AddressClass.LOOPBACK), ("::ffff:127.0.0.1", AddressClass.LOOPBACK),
    ("::127.0.0.1", AddressClass.LOOPBACK), ("64:ff9b::7f00:1", AddressClass.LOOPBACK),
    ("2002:7f00:1::", AddressClass.LOOPBACK),
    ("10.1.2.3", AddressClass.PRIVATE), ("172.16.0.1", AddressClass.PRIVATE),
    ("172.31.255.255", AddressClass.PRIVATE), ("192.168.1.1", AddressClass.PRIVATE),
    ("100.64.0.1", AddressClass.PRIVATE), ("fd00::1", AddressClass.PRIVATE),
    ("::ffff:10.0.0.1", AddressClass.PRIVATE),
    ("169.254.169.254", AddressClass.LINK_LOCAL), ("fe80::1", AddressClass.LINK_LOCAL),
    ("::ffff:169.254.169.254", AddressClass.LINK_LOCAL),
    ("0.0.0.0", AddressClass.UNSPECIFIED), ("::", AddressClass.UNSPECIFIED),
    ("224.0.0.1", AddressClass.MULTICAST), ("ff02::1", AddressClass.MULTICAST),
    ("255.255.255.255", AddressClass.RESERVED), ("240.0.0.1", AddressClass.RESERVED),
    ("93.184.216.34", AddressClass.PUBLIC), ("172.32.0.1", AddressClass.PUBLIC),
    ("2606:2800:220:1::1", AddressClass.PUBLIC), ("::ffff:8.8.8.8", AddressClass.PUBLIC),
    # IPv4-translated (RFC 2765) and local-use NAT64 (RFC 8215): the class they carry
    ("::ffff:0:127.0.0.1", AddressClass.LOOPBACK), ("::ffff:0:10.0.0.1", AddressClass.PRIVATE),
    ("::ffff:0:8.8.8.8", AddressClass.PUBLIC),
    ("64:ff9b:1::7f00:1", AddressClass.LOOPBACK), ("64:ff9b:1::a9fe:a9fe", AddressClass.LINK_LOCAL),
    ("64:ff9b:1:7f00:0:100::", AddressClass.LOOPBACK),  # the /48 layout of RFC 6052
    ("64:ff9b:1::808:808", AddressClass.PUBLIC),
])
def test_each_spelling_has_the_class_of_the_address_it_reaches(
        address: str, kind: AddressClass) -> None:
    assert address_class(address) is kind


def test_the_start_urls_own_class_is_open_and_no_other() -> None:
    loopback = rule_for_config(CrawlConfig(start_url="http://127.0.0.1:8/"))
    assert loopback.allows("127.0.0.2") and loopback.allows("::1")
    assert loopback.allows("93.184.216.34")
    assert not loopback.allows("10.0.0.1") and not loopback.allows("169.254.169.254")
    private = rule_for_config(CrawlConfig(start_url="http://10.9.8.7/"))
    assert private.allows("192.168.0.1") and not private.allows("127.0.0.1")
    assert rule_for_config(CrawlConfig(start_url="http://10.9.8.7/",
                                       allow_private_network=True)).allows("127.0.0.1")
    assert PUBLIC_ONLY.allows("8.8.8.8") and not PUBLIC_ONLY.allows("::ffff:127.0.0.1")


def _start_host_resolving_to(monkeypatch: pytest.MonkeyPatch, *addresses: str) -> None:
    """The start host's look-up (made once, without an event loop) answers these."""
    def getaddrinfo(host: str, port: object, *args: object, **kwargs: object
                    ) -> list[tuple[object, ...]]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, 0))
                for address in addresses]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_start_host_with_one_loopback_address_among_public_ones_opens_nothing(
        listener: _Listener, monkeypatch: pytest.MonkeyPatch) -> None:
    """A site that adds one A record for 127.0.0.1 to its own DNS must not open the
    auditor's loopback: a class opens only when every address of the start host is
    in it. (198.51.100.7 is only a resolver's answer here: nothing dials it.)"""
    _start_host_resolving_to(monkeypatch, "127.0.0.1", "198.51.100.7")
    mixed = rule_for_config(CrawlConfig(start_url="http://dual-start.test/links"))
    assert not mixed.allows("127.0.0.1") and not mixed.allows("::1")
    assert mixed.allows("198.51.100.7")

    async def go() -> None:
        transport = H1Transport(ssl_context=tls_context("http"), max_connections=2,
                                keepalive_expiry=5, max_header_bytes=65536, max_headers=100,
                                rule=mixed)
        with pytest.raises(PrivateAddress):
            await transport.handle_async_request(
                httpx.Request("GET", f"http://127.0.0.1:{listener.port}/"))
        await transport.aclose()

    anyio.run(go)
    assert listener.accepted == 0
    _start_host_resolving_to(monkeypatch, "127.0.0.1", "127.0.0.2")  # all loopback: open
    assert rule_for_config(CrawlConfig(start_url="http://all-loopback.test/")).allows("::1")


class _Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret")
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener() -> _Listener:
    found = _Listener()
    yield found  # type: ignore[misc]
    found.close()


def _resolving_to(monkeypatch: pytest.MonkeyPatch, address: str) -> list[str]:
    """Every name resolves to ``address`` (as a rebinding name's second answer does);
    returns the names looked up. No test dials anything outside 127.0.0.0/8."""
    asked: list[str] = []

    async def getaddrinfo(self: object, host: str, port: object, *args: object,
                          **kwargs: object) -> list[tuple[object, ...]]:
        asked.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)
    return asked


def test_our_transport_dials_no_refused_address(listener: _Listener,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _resolving_to(monkeypatch, "127.0.0.1")

    async def go() -> list[str]:
        transport = H1Transport(ssl_context=tls_context("http"), max_connections=2,
                                keepalive_expiry=5, max_header_bytes=65536, max_headers=100,
                                rule=PUBLIC_ONLY)
        errors = []
        for url in (f"http://127.0.0.1:{listener.port}/", f"http://[::1]:{listener.port}/",
                    f"http://rebinding.test:{listener.port}/"):
            with pytest.raises(PrivateAddress) as caught:
                await transport.handle_async_request(httpx.Request("GET", url))
            errors.append(str(caught.value))
        await transport.aclose()
        return errors

    errors = anyio.run(go)
    assert listener.accepted == 0
    assert all(error.startswith("private-address: ") for error in errors)
    assert "rebinding.test (127.0.0.1) is a loopback address" in errors[2]
    assert asked == ["rebinding.test"]  # one look-up: the address checked is the one dialled


def test_httpx_transports_pass_the_same_rule(listener: _Listener,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _resolving_to(monkeypatch, "127.0.0.1")

    async def go() -> None:
        async with guarded_client(PUBLIC_ONLY, verify=tls_context("http"), proxy=None,
                                  limits=httpx.Limits(max_connections=1)) as client:
            for url in (f"http://127.0.0.1:{listener.port}/",
                        f"http://name.test:{listener.port}/"):
                with pytest.raises(PrivateAddress):
                    await client.get(url)

    anyio.run(go)
    with guarded_sync_client(PUBLIC_ONLY) as client, pytest.raises(PrivateAddress):
        client.get(f"http://127.0.0.1:{listener.port}/")
    assert listener.accepted == 0
    # and an open rule does reach it: the listener is really there
    with guarded_sync_client(NetworkRule.open()) as client:
        assert client.get(f"http://127.0.0.1:{listener.port}/").text == "secret"
    assert listener.accepted == 1


@pytest.mark.parametrize("http2", [False, True])
def test_a_refused_page_is_a_private_address_row_never_requested(
        listener: _Listener, http2: bool) -> None:
    """The crawl's own fetcher, both transports: a start on a public name (its rule
    worked out from that) asking for a loopback URL gets ``private-address``."""
    config = CrawlConfig(start_url="http://93.184.216.34/", retries=2, http2=http2)

    async def go() -> tuple[ErrorKind | None, int]:
        async with Fetcher(FetchOptions.of(config)) as fetcher:
            answer = await fetcher.fetch(f"http://127.0.0.1:{listener.port}/",
                                         want_body=lambda _status, _type: True)
        return answer.error, answer.attempts

    error, attempts = anyio.run(go)
    assert error is ErrorKind.PRIVATE_ADDRESS
    assert attempts == 1  # refused, not retried
    assert listener.accepted == 0
