"""What a user gives to log in: ``--header``, ``--cookie``, ``--auth`` and their
``-env`` forms (``--header-env``, ``--cookie-env``, ``--auth-env``), which read the
value from an environment variable so it never shows in ``ps`` or a crontab.

Kept in one object whose ``repr`` shows no value, so a config printed in a
log, an exception or a traceback's locals cannot spill a password. The
values are checked here, and a bad one is refused *without* quoting it: the
usual mistake (``--header 'Authorization Bearer abc'``) is itself the secret.
They are sent to the crawl's origin only (``crawler.http.prebuilt``).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from crawler.core.errors import ConfigError

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 §5.6.2
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # controls; tab is allowed
# Headers the crawl itself must control, with the option to use instead.
_RESERVED = {
    "host": "the crawl's origin decides it",
    "content-length": "a GET has no body",
    "transfer-encoding": "a GET has no body",
    "connection": "the crawler manages its connections",
    "accept-encoding": "the crawler decodes gzip and deflate itself",
    "user-agent": "use --user-agent, which robots.txt rules match",
    "cookie": "use --cookie",
    "if-none-match": "--state sends validators",
    "if-modified-since": "--state sends validators",
}


REDACTED = "***"


@dataclass(frozen=True, slots=True)
class Credentials:
    """Extra request headers for the crawl's origin; never shown."""

    headers: tuple[tuple[str, str], ...] = field(default=())
    cookie: str | None = None  # the --cookie pairs as one Cookie header value

    def __repr__(self) -> str:
        names = ", ".join(name for name, _ in self.headers)
        return (f"Credentials(headers=[{names}] (values {REDACTED}), "
                f"cookie={REDACTED if self.cookie else None})")

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self.headers or self.cookie)

    @property
    def sends_authorization(self) -> bool:
        return any(name.lower() == "authorization" for name, _ in self.headers)

    def secrets(self) -> list[str]:
        """Every value that must never be printed (longest first, for redaction)."""
        values = [value for _, value in self.headers if value]
        for name, value in self.headers:
            if name.lower() == "authorization" and value.lower().startswith("basic "):
                try:  # the decoded "user:password", and the password alone
                    plain = base64.b64decode(value[6:], validate=True).decode("utf-8")
                except ValueError:
                    continue
                values.append(plain)
                password = plain.partition(":")[2]
                if len(password) >= 4:
                    values.append(password)
        if self.cookie:
            values.append(self.cookie)
            values.extend(pair.partition("=")[2] for pair in self.cookie.split("; ")
                          if len(pair.partition("=")[2]) >= 4)
        return sorted(set(values), key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets():
            text = text.replace(secret, REDACTED)
        return text


def parse_header(text: str, source: str = "--header") -> tuple[str, str]:
    """``'Name: value'`` → ``("Name", "value")``, refusing without quoting the value."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _TOKEN.fullmatch(name):
        raise ConfigError(f"{source} must read 'Name: value' with a header name before the "
                          "colon (the value given is not shown)")
    if _BAD_VALUE.search(value) or not _latin1(value):
        raise ConfigError(f"{source} {name}: the value holds control characters or "
                          "characters outside latin-1 (not shown)")
    why = _RESERVED.get(name.lower())
    if why is not None:
        raise ConfigError(f"{source} {name} cannot be set: {why}")
    return name, value


def parse_cookie(text: str, source: str = "--cookie") -> str:
    """``'name=value'`` checked as an RFC 6265 cookie pair."""
    name, equals, value = text.strip().partition("=")
    if not equals or not _TOKEN.fullmatch(name.strip()):
        raise ConfigError(f"{source} must read 'name=value' (the value given is not shown)")
    if any(char in value for char in ';,"\\') or _BAD_VALUE.search(value) or any(
            char.isspace() for char in value.strip()) or not value.isascii():
        raise ConfigError(f"{source} {name.strip()}: the value may not hold spaces, ';', ',', "
                          "'\"', '\\', controls or non-ASCII characters (not shown)")
    return f"{name.strip()}={value.strip()}"


def _from_environment(variable: str, option: str, environ: Mapping[str, str]) -> str:
    value = environ.get(variable)
    if not value:
        raise ConfigError(f"{option} {variable}: that environment variable is not set "
                          "or is empty")
    return value


def basic_authorization(user_password: str, source: str) -> tuple[str, str]:
    """``USER:PASSWORD`` → an HTTP Basic ``Authorization`` header (RFC 7617)."""
    user, colon, _password = user_password.partition(":")
    if not colon or not user:
        raise ConfigError(f"{source} must read USER:PASSWORD (the value given is not shown)")
    if _BAD_VALUE.search(user_password):
        raise ConfigError(f"{source} holds control characters (not shown)")
    token = base64.b64encode(user_password.encode("utf-8")).decode("ascii")
    return "Authorization", f"Basic {token}"


def build_credentials(
    *,
    headers: Iterable[str] = (),
    cookies: Iterable[str] = (),
    auth: str | None = None,
    auth_env: str | None = None,
    header_env: Iterable[str] = (),
    cookie_env: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Credentials:
    """The credentials of the options given; :class:`ConfigError` for a bad one.

    ``header_env`` and ``cookie_env`` name environment variables holding a
    ``Name: value`` header, or cookie pairs (``a=1; b=2``, as a Cookie header)."""
    environ = environ or {}
    parsed = [parse_header(text) for text in headers]
    for variable in header_env:
        parsed.append(parse_header(_from_environment(variable, "--header-env", environ),
                                   f"--header-env {variable}"))
    if auth is not None and auth_env is not None:
        raise ConfigError("give --auth or --auth-env, not both")
    if auth_env is not None:
        auth = _from_environment(auth_env, "--auth-env", environ)
        source = f"--auth-env {auth_env}"
    else:
        source = "--auth"
    if auth is not None:
        if any(name.lower() == "authorization" for name, _ in parsed):
            raise ConfigError(f"{source.split()[0]} and --header Authorization both set the "
                              "Authorization header: give one")
        parsed.append(basic_authorization(auth, source))
    pairs = [parse_cookie(text) for text in cookies]
    for variable in cookie_env:
        pairs.extend(parse_cookie(pair, f"--cookie-env {variable}") for pair in
                     _from_environment(variable, "--cookie-env", environ).split(";")
                     if pair.strip())
    return Credentials(tuple(parsed), "; ".join(pairs) if pairs else None)


def _latin1(value: str) -> bool:
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True
