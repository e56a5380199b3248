"""Google Search Console: handing the published sitemap index to Google after a run.

Since Google retired the sitemap ping (2023), its Search Console API is the one
way to say a sitemap changed: ``sitemaps.submit`` on the property that owns the
sitemap's URL. The property is found with ``sites.list``: a URL-prefix property
(``https://example.com/``) that the index URL starts with, else a Domain property
(``sc-domain:example.com``) of its host or a parent of it; the most specific wins,
among those the account may write to (owner or full user).

The credential is a service account's key. google-auth signs the JWT and reads
the token answer; every request, the token's included, is sent by us through the
crawl's network rule (:class:`_ThroughTheDoor`), so a key file cannot aim the
crawler at a private address. The key is sent nowhere: only the assertion it
signs goes to the key's ``token_uri``, and the token it buys only to the API.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from crawler.http.address_rule import NetworkRule, PrivateAddress
from crawler.http.guarded import guarded_sync_client
from crawler.http.transports import proxy_for

SCOPE = "https://www.googleapis.com/auth/webmasters"
WRITERS = ("siteOwner", "siteFullUser")  # the permissions that may submit a sitemap
TIMEOUT = 30.0
_NEEDED = ("client_email", "private_key", "token_uri")


class BadKey(ValueError):
    """The key is not a service account key google-auth can sign with."""


class NotSubmitted(Exception):
    """Why the sitemap was not submitted, phrased for the one line the user reads."""


@dataclass(frozen=True, slots=True)
class ServiceAccount:
    credentials: Any  # google-auth's, which sign the assertion and keep the token
    token_uri: str
    email: str


@dataclass(frozen=True, slots=True)
class Submitted:
    property: str
    sitemap: str


def service_account(text: str) -> ServiceAccount:
    """google-auth's credentials from a key's JSON text (checked before any request)."""
    try:
        info = json.loads(text)
    except ValueError:
        raise BadKey("not JSON: a service account key is the JSON file Google Cloud "
                        "gives for a key") from None
    if not isinstance(info, dict) or info.get("type") != "service_account":
        raise BadKey('not a service account key (its "type" must be "service_account")')
    missing = [name for name in _NEEDED if not isinstance(info.get(name), str)]
    if missing:
        raise BadKey("the key has no " + ", ".join(missing))
    if urllib.parse.urlsplit(info["token_uri"]).scheme not in ("http", "https"):
        raise BadKey("the key's token_uri is not an http(s) URL")
    from google.oauth2 import service_account as accounts

    try:
        credentials = accounts.Credentials.from_service_account_info(info, scopes=[SCOPE])
    except (ValueError, TypeError):
        raise BadKey("its private key cannot be read") from None
    return ServiceAccount(credentials, info["token_uri"], info["client_email"])


def submit_index(account: ServiceAccount, index_url: str, endpoint: str, user_agent: str,
                 rule: NetworkRule | None = None) -> Submitted:
    """Submit ``index_url`` to the property that owns it; :class:`NotSubmitted` says why not."""
    rule = rule or NetworkRule.open()
    endpoint = endpoint if endpoint.endswith("/") else endpoint + "/"
    _reachable(index_url, user_agent, rule)
    credentials = account.credentials
    with _client(account.token_uri, user_agent, rule) as token_client:
        from google.auth.exceptions import RefreshError, TransportError

        try:
            credentials.refresh(_ThroughTheDoor(token_client))
        except (RefreshError, TransportError) as exc:
            raise NotSubmitted(f"the token endpoint refused the key ({_first_line(exc)})"
                               ) from None
    bearer = {"Authorization": f"Bearer {credentials.token}"}
    with _client(endpoint, user_agent, rule) as client:
        sites = _call(client, "GET", endpoint + "sites", bearer, "listing its properties")
        entries = sites.json().get("siteEntry", []) if sites.content else []
        chosen = choose_property(entries, index_url, account.email)
        path = (f"sites/{urllib.parse.quote(chosen, safe='')}/sitemaps/"
                f"{urllib.parse.quote(index_url, safe='')}")
        _call(client, "PUT", endpoint + path, bearer, f"submitting to {chosen}")
    return Submitted(chosen, index_url)


def choose_property(entries: list[Mapping[str, Any]], url: str, account: str) -> str:
    """The most specific property owning ``url`` the account may write to."""
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    owning: list[tuple[int, str, str]] = []
    for entry in entries:
        site = str(entry.get("siteUrl", ""))
        level = str(entry.get("permissionLevel", ""))
        if site.startswith("sc-domain:"):
            domain = site[len("sc-domain:"):].lower().rstrip(".")
            if host == domain or host.endswith("." + domain):
                owning.append((len(domain), site, level))
        elif url.startswith(site) and site.endswith("/"):
            owning.append((1000 + len(site), site, level))  # a URL prefix: more specific
    owning.sort(reverse=True)
    for _rank, site, level in owning:
        if level in WRITERS:
            return site
    if owning:
        _rank, site, level = owning[0]
        raise NotSubmitted(f"no access to submit to {site}: {account} is {level or 'not a user'}"
                           " there (make it an owner or full user)")
    raise NotSubmitted(f"no Search Console property of {account} owns {url} (add it as a "
                       "full user of the URL-prefix or Domain property)")


class _ThroughTheDoor:
    """google-auth's transport interface, served by our guarded client."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def __call__(self, url: str, method: str = "GET", body: bytes | None = None,
                 headers: Mapping[str, str] | None = None, timeout: float | None = None,
                 **_kwargs: Any) -> Any:
        from google.auth.exceptions import TransportError

        try:
            answer = self.client.request(method, url, content=body, headers=headers)
        except PrivateAddress as exc:
            raise TransportError(str(exc)) from None
        except httpx.HTTPError as exc:
            raise TransportError(f"{type(exc).__name__}") from None
        return _Answer(answer.status_code, dict(answer.headers), answer.content)


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    headers: dict[str, str]
    data: bytes


def _client(url: str, user_agent: str, rule: NetworkRule) -> httpx.Client:
    return guarded_sync_client(rule, proxy=proxy_for(url), timeout=TIMEOUT,
                               follow_redirects=False, headers={"User-Agent": user_agent})


def _reachable(index_url: str, user_agent: str, rule: NetworkRule) -> None:
    """Google reads the index at its public URL: an index it cannot fetch is not sent."""
    try:
        with _client(index_url, user_agent, rule) as client:
            answer = client.get(index_url)
    except PrivateAddress as exc:
        raise NotSubmitted(f"the index {index_url} is not reachable: {exc}") from None
    except httpx.HTTPError as exc:
        raise NotSubmitted(f"the index {index_url} is not reachable ({type(exc).__name__})"
                           ) from None
    if answer.status_code != 200:
        raise NotSubmitted(f"the index {index_url} answered HTTP {answer.status_code}, "
                           "not the sitemap index: is --out served at --base-url?")
    if b"<sitemapindex" not in answer.content[:4096]:
        raise NotSubmitted(f"the index {index_url} answered with something other than a "
                           "sitemap index: is --out served at --base-url?")


def _call(client: httpx.Client, method: str, url: str, headers: dict[str, str],
          doing: str) -> httpx.Response:
    try:
        answer = client.request(method, url, headers=headers)
    except PrivateAddress as exc:
        raise NotSubmitted(f"the API is not reachable: {exc}") from None
    except httpx.HTTPError as exc:
        raise NotSubmitted(f"the API is not reachable ({type(exc).__name__})") from None
    if answer.status_code >= 300:
        raise NotSubmitted(f"the API answered HTTP {answer.status_code} {doing}"
                           + _api_message(answer))
    return answer


def _api_message(answer: httpx.Response) -> str:
    try:
        message = answer.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return ""
    return f": {' '.join(str(message).split())[:200]}"


def _first_line(exc: BaseException) -> str:
    text = str(exc.args[0] if exc.args else exc)
    return " ".join(text.split())[:200]
