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
import ipaddress
import socket
from dataclasses import dataclass

import httpx

from crawler.config import CrawlConfig
from crawler.urls.normalize import host_of, normalize_url

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressClass(enum.Enum):
    """What an address reaches; every class but ``public`` stays off by default."""

    PUBLIC = "public"
    LOOPBACK = "loopback"
    PRIVATE = "private"  # RFC 1918, CGNAT (100.64/10), IPv6 unique-local and site-local
    LINK_LOCAL = "link-local"  # 169.254/16 (the cloud metadata address), fe80::/10
    UNSPECIFIED = "unspecified"  # 0.0.0.0/8, ::
    MULTICAST = "multicast"
    RESERVED = "reserved"  # 240/4 and the broadcast address, benchmarking 198.18/15


_V4_CLASSES = [
    (ipaddress.ip_network("127.0.0.0/8"), AddressClass.LOOPBACK),
    (ipaddress.ip_network("0.0.0.0/8"), AddressClass.UNSPECIFIED),
    (ipaddress.ip_network("10.0.0.0/8"), AddressClass.PRIVATE),
    (ipaddress.ip_network("172.16.0.0/12"), AddressClass.PRIVATE),
    (ipaddress.ip_network("192.168.0.0/16"), AddressClass.PRIVATE),
    (ipaddress.ip_network("100.64.0.0/10"), AddressClass.PRIVATE),
    (ipaddress.ip_network("169.254.0.0/16"), AddressClass.LINK_LOCAL),
    (ipaddress.ip_network("224.0.0.0/4"), AddressClass.MULTICAST),
    (ipaddress.ip_network("240.0.0.0/4"), AddressClass.RESERVED),
    (ipaddress.ip_network("198.18.0.0/15"), AddressClass.RESERVED),
    (ipaddress.ip_network("192.0.0.0/24"), AddressClass.RESERVED),
]
_V6_CLASSES = [
    (ipaddress.ip_network("::1/128"), AddressClass.LOOPBACK),
    (ipaddress.ip_network("::/128"), AddressClass.UNSPECIFIED),
    (ipaddress.ip_network("fc00::/7"), AddressClass.PRIVATE),
    (ipaddress.ip_network("fec0::/10"), AddressClass.PRIVATE),
    (ipaddress.ip_network("fe80::/10"), AddressClass.LINK_LOCAL),
    (ipaddress.ip_network("ff00::/8"), AddressClass.MULTICAST),
]
# IPv6 prefixes that carry an IPv4 address in their last 32 bits: NAT64's well-known
# prefix and IPv4-compatible addresses (deprecated, still routed by some stacks)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_COMPAT = ipaddress.ip_network("::/96")


def address_class(address: str | IPAddress) -> AddressClass:
    """The class of one address; IPv6 forms that embed an IPv4 address (mapped,
    compatible, NAT64, 6to4, Teredo) take the class of the address they embed."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address):
        ip = ip.ipv4_mapped or _embedded(ip) or ip
    table = _V4_CLASSES if isinstance(ip, ipaddress.IPv4Address) else _V6_CLASSES
    for network, kind in table:
        if ip in network:
            return kind
    return AddressClass.PUBLIC


def _embedded(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client's address
    if ip in _NAT64 or (ip in _COMPAT and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def literal(host: str) -> IPAddress | None:
    """``host`` as an address, if it is one (IPv6 without brackets, no zone)."""
    try:
        return ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return None


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

    def allows(self, address: str | IPAddress) -> bool:
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
        if not self.allows(found):
            raise self.refusal(host, str(found))
        return [(socket.AF_INET6 if found.version == 6 else socket.AF_INET, str(found))]

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
        if self.allowed is None:
            return
        found = literal(host)
        if found is not None:
            if not self.allows(found):
                raise self.refusal(host, str(found))
            return
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return
        for *_rest, sockaddr in infos:
            address = str(sockaddr[0]).partition("%")[0]
            if not self.allows(address):
                raise self.refusal(host, address)


def start_classes(host: str) -> set[AddressClass]:
    """The classes the start URL's host resolves into (none when it does not
    resolve: such a crawl fails at its first request anyway)."""
    found = literal(host)
    if found is not None:
        return {address_class(found)}
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return set()
    return {address_class(str(info[4][0]).partition("%")[0]) for info in infos}


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
