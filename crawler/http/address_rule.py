"""Where the crawler may connect: the one rule every request passes.

A site decides what the crawler asks for (links, redirects, a rendered page's
scripts, ``Sitemap:`` lines), so without a rule a public page could aim an
audit at the machine running it: the cloud's metadata address, an admin panel
on 127.0.0.1, a printer on the office network. The rule: an address that is not
public (loopback, private, link-local, unspecified, multicast, reserved, or an
IPv6 form embedding one of these) may be connected to only when the start URL's
own host resolves into that same class. A staging site on 127.0.0.1 still
crawls itself and checks its links to other loopback ports; a public site
reaches nothing private. ``--allow-private-network`` lifts the rule.

It is decided on the address connected to, after DNS, never on a URL's
spelling: a name that resolves to 127.0.0.1, or that rebinds between two
look-ups, is caught because the address checked is the address dialled
(:meth:`NetworkRule.addresses` hands the connection its checked addresses).
Through a proxy the proxy dials, so a request is judged before it leaves by its
host: an address literal by its class, a name by what it resolves to here
(:meth:`NetworkRule.check_proxied`); a name this machine cannot resolve is left
to the proxy, which should refuse private ranges itself.
"""

from __future__ import annotations

import asyncio
import enum
import socket
from dataclasses import dataclass

import httpx

from crawler.config import CrawlConfig
from crawler.urls.normalize import host_of, normalize_url


class AddressClass(enum.Enum):
    """What an address reaches; every class but ``public`` stays off by default."""

    PUBLIC = "public"
    LOOPBACK = "loopback"
    PRIVATE = "private"  # RFC 1918, CGNAT (100.64/10), IPv6 unique-local and site-local
    LINK_LOCAL = "link-local"  # 169.254/16 (the cloud metadata address), fe80::/10
    UNSPECIFIED = "unspecified"  # 0.0.0.0/8, ::
    MULTICAST = "multicast"
    RESERVED = "reserved"  # 240/4 and the broadcast address, benchmarking 198.18/15


# Addresses are compared as integers, the networks as (first address, prefix length):
# the standard library's ipaddress module cost 8 ms at every start (its import and
# these networks' construction), on the way to a crawl's first request.
def _number(family: int, text: str) -> int:
    return int.from_bytes(socket.inet_pton(family, text), "big")


_V4_CLASSES = [(_number(socket.AF_INET, first), length, kind) for first, length, kind in (
    ("127.0.0.0", 8, AddressClass.LOOPBACK),
    ("0.0.0.0", 8, AddressClass.UNSPECIFIED),
    ("10.0.0.0", 8, AddressClass.PRIVATE),
    ("172.16.0.0", 12, AddressClass.PRIVATE),
    ("192.168.0.0", 16, AddressClass.PRIVATE),
    ("100.64.0.0", 10, AddressClass.PRIVATE),
    ("169.254.0.0", 16, AddressClass.LINK_LOCAL),
    ("224.0.0.0", 4, AddressClass.MULTICAST),
    ("240.0.0.0", 4, AddressClass.RESERVED),
    ("198.18.0.0", 15, AddressClass.RESERVED),
    ("192.0.0.0", 24, AddressClass.RESERVED),
)]
_V6_CLASSES = [(_number(socket.AF_INET6, first), length, kind) for first, length, kind in (
    ("::1", 128, AddressClass.LOOPBACK),
    ("::", 128, AddressClass.UNSPECIFIED),
    ("fc00::", 7, AddressClass.PRIVATE),
    ("fec0::", 10, AddressClass.PRIVATE),
    ("fe80::", 10, AddressClass.LINK_LOCAL),
    ("ff00::", 8, AddressClass.MULTICAST),
)]
# IPv6 prefixes that carry an IPv4 address: mapped (::ffff:0:0/96), translated
# (::ffff:0:0:0/96, RFC 2765), NAT64's well-known prefix (64:ff9b::/96) and
# compatible (::/96) in the last 32 bits, 6to4 (2002::/16) in bits 16-48, Teredo
# (2001::/32) the client's, inverted, last; local-use NAT64 (64:ff9b:1::/48, RFC
# 8215) in the last 32 bits or in RFC 6052's /48 layout (bits 48-63 and 72-87)
_MAPPED = 0xFFFF
_TRANSLATED = 0xFFFF0000
_NAT64 = _number(socket.AF_INET6, "64:ff9b::") >> 32
_LOCAL_NAT64 = _number(socket.AF_INET6, "64:ff9b:1::") >> 80
_SIXTOFOUR = 0x2002
_TEREDO = 0x20010000
_LOW32 = 0xFFFFFFFF


def _parsed(text: str) -> tuple[int, int] | None:
    """(4 or 6, the address as a number), if ``text`` is an address (no zone)."""
    text = text.partition("%")[0]
    for family, version in ((socket.AF_INET, 4), (socket.AF_INET6, 6)):
        try:
            return version, _number(family, text)
        except (OSError, ValueError):
            continue
    return None


def address_class(address: str) -> AddressClass:
    """The class of one address; IPv6 forms that embed an IPv4 address (mapped,
    compatible, NAT64, 6to4, Teredo) take the class of the address they embed."""
    parsed = _parsed(address)
    if parsed is None:
        raise ValueError(f"{address!r} is not an IP address")
    version, number = parsed
    if version == 6:
        if number >> 80 == _LOCAL_NAT64:
            return _class_of(4, _local_nat64(number))
        embedded = _embedded(number)
        if embedded is not None:
            version, number = 4, embedded
    return _class_of(version, number)


def _class_of(version: int, number: int) -> AddressClass:
    bits, table = (32, _V4_CLASSES) if version == 4 else (128, _V6_CLASSES)
    for first, length, kind in table:
        if number >> (bits - length) == first >> (bits - length):
            return kind
    return AddressClass.PUBLIC


def _local_nat64(number: int) -> int:
    """The IPv4 address in 64:ff9b:1::/48: the last 32 bits when bits 48-95 are
    zero (the /96 a NAT64 gateway uses), else RFC 6052's /48 layout."""
    if not number >> 32 & 0xFFFFFFFFFFFF:
        return number & _LOW32
    return (number >> 64 & 0xFFFF) << 16 | number >> 40 & 0xFFFF


def _embedded(number: int) -> int | None:
    high = number >> 32
    if high in (_MAPPED, _TRANSLATED, _NAT64) or (high == 0 and number > 1):
        return number & _LOW32
    if number >> 112 == _SIXTOFOUR:
        return (number >> 80) & _LOW32
    if number >> 96 == _TEREDO:
        return ~number & _LOW32
    return None


def literal(host: str) -> tuple[int, str] | None:
    """``host`` as (its socket family, the address), if it is an address (IPv6
    without brackets, no zone)."""
    parsed = _parsed(host)
    if parsed is None:
        return None
    family = socket.AF_INET if parsed[0] == 4 else socket.AF_INET6
    return family, socket.inet_ntop(family, parsed[1].to_bytes(4 if parsed[0] == 4 else 16,
                                                                "big"))


class PrivateAddress(httpx.ConnectError):
    """The request would reach an address the rule keeps closed: never sent."""


@dataclass(frozen=True, slots=True)
class NetworkRule:
    """The classes of address a crawl may connect to (``None``: every class)."""

    allowed: frozenset[AddressClass] | None

    @classmethod
    def open(cls) -> NetworkRule:
        return cls(None)

    @classmethod
    def for_classes(cls, start: set[AddressClass] | frozenset[AddressClass]) -> NetworkRule:
        return cls(frozenset({AddressClass.PUBLIC, *start}))

    def allows(self, address: str) -> bool:
        return self.allowed is None or address_class(address) in self.allowed

    def refusal(self, host: str, address: str) -> PrivateAddress:
        kind = address_class(address).value
        shown = host if host == address else f"{host} ({address})"
        return PrivateAddress(
            f"private-address: {shown} is a {kind} address, which this crawl may not "
            "reach from its start URL (--allow-private-network opens it)")

    async def addresses(self, host: str, port: int) -> list[tuple[int, str]]:
        """The addresses of ``host`` this crawl may dial, in the resolver's order:
        a connection must go to one of these and nowhere else. Raises
        :class:`PrivateAddress` when every address is closed, and
        ``httpx.ConnectError`` when the name does not resolve."""
        given = self._literal(host)
        if given is not None:
            return given
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise httpx.ConnectError(f"{host}: {exc}") from exc
        return self._keep(host, infos)

    def addresses_now(self, host: str, port: int) -> list[tuple[int, str]]:
        """:meth:`addresses`, for a caller with no event loop (IndexNow's client)."""
        given = self._literal(host)
        if given is not None:
            return given
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise httpx.ConnectError(f"{host}: {exc}") from exc
        return self._keep(host, infos)

    def _literal(self, host: str) -> list[tuple[int, str]] | None:
        """An address literal's one address, if the rule opens it (no look-up)."""
        found = literal(host)
        if found is None:
            return None
        if not self.allows(found[1]):
            raise self.refusal(host, found[1])
        return [found]

    def _keep(self, host: str, infos: list) -> list[tuple[int, str]]:  # type: ignore[type-arg]
        kept: list[tuple[int, str]] = []
        refused: str | None = None
        for family, _type, _proto, _name, sockaddr in infos:
            address = str(sockaddr[0]).partition("%")[0]
            if self.allows(address):
                if (family, address) not in kept:
                    kept.append((family, address))
            elif refused is None:
                refused = address
        if not kept:
            if refused is None:
                raise httpx.ConnectError(f"{host}: no address")
            raise self.refusal(host, refused)
        return kept

    async def check_proxied(self, host: str, port: int) -> None:
        """Judge a request a proxy will dial: an address literal by its class, a
        name by every address it resolves to here (any closed one refuses it: the
        proxy may pick that one); a name that does not resolve here is the proxy's."""
        if self.allowed is None or self._literal(host) is not None:
            return
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return
        self._judge_all(host, infos)

    def check_proxied_now(self, host: str, port: int) -> None:
        """:meth:`check_proxied`, for a caller with no event loop (IndexNow's client)."""
        if self.allowed is None or self._literal(host) is not None:
            return
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return
        self._judge_all(host, infos)

    def _judge_all(self, host: str, infos: list) -> None:  # type: ignore[type-arg]
        for *_rest, sockaddr in infos:
            address = str(sockaddr[0]).partition("%")[0]
            if not self.allows(address):
                raise self.refusal(host, address)


def start_classes(host: str) -> set[AddressClass]:
    """The class the start URL's host opens: the one class every one of its
    addresses is in. A host with addresses in two classes opens none (a public
    site must not open the auditor's loopback by adding one A record for
    127.0.0.1 to its own DNS); nor does one that does not resolve (such a crawl
    fails at its first request anyway)."""
    found = literal(host)
    if found is not None:
        return {address_class(found[1])}
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return set()
    classes = {address_class(str(info[4][0]).partition("%")[0]) for info in infos}
    return classes if len(classes) == 1 else set()


_RULES: dict[tuple[str, bool], NetworkRule] = {}


def rule_for(start_host: str, allow_private_network: bool) -> NetworkRule:
    """The rule of a crawl from ``start_host``, worked out once per process (one
    look-up of the start host; none for an address literal)."""
    if allow_private_network:
        return NetworkRule.open()
    key = (start_host.lower(), allow_private_network)
    rule = _RULES.get(key)
    if rule is None:
        rule = _RULES[key] = NetworkRule.for_classes(start_classes(start_host))
    return rule


def rule_for_config(config: CrawlConfig) -> NetworkRule:
    """The rule of the crawl ``config`` describes: its start URL's host decides which
    classes of address are open (``--allow-private-network``: all of them)."""
    start = normalize_url(config.start_url) or config.start_url
    return rule_for(host_of(start), config.allow_private_network)
