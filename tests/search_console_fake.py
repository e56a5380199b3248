"""A local stand-in for Google's OAuth token endpoint and the Search Console API, on
127.0.0.1:0, strict where Google is: the token is granted only for a JWT assertion
signed with the service account's key (RS256, checked with its public key), whose
claims name the account, the token endpoint and the Search Console scope, and
which is fresh; the API answers only that token. It records every call."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from siteserver import SHUTDOWN_POLL

SCOPE = "https://www.googleapis.com/auth/webmasters"
AUDIENCE = "https://oauth2.googleapis.com/token"
ACCOUNT = "crawler@sitemaps-project.iam.gserviceaccount.com"
KEY_ID = "5f1d0c3a9b8e7d6c5b4a39281706f5e4d3c2b1a0"


def _b64(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


@dataclass
class FakeSearchConsole:
    """What the fake holds and saw: the sites the account may use and every call."""

    sites: list[dict[str, str]] = field(default_factory=list)
    calls: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)  # why the token endpoint said no
    submitted: list[tuple[str, str]] = field(default_factory=list)  # (property, sitemap)
    port: int = 0

    def __post_init__(self) -> None:
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def key(self) -> dict[str, str]:
        """A service account key as Google Cloud gives it, whose token_uri is ours."""
        pem = self.private.private_bytes(serialization.Encoding.PEM,
                                         serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode()
        return {"type": "service_account", "project_id": "sitemaps-project",
                "private_key_id": KEY_ID, "private_key": pem, "client_email": ACCOUNT,
                "client_id": "104958230001", "token_uri": self.root + "/token",
                "auth_uri": "https://accounts.google.com/o/oauth2/auth"}

    def check_assertion(self, assertion: str) -> str | None:
        """Why the assertion is refused, or None."""
        try:
            head, claims, signature = assertion.split(".")
            header = json.loads(_b64(head))
            body = json.loads(_b64(claims))
        except ValueError:
            return "not a JWT"
        if header.get("alg") != "RS256" or header.get("kid") != KEY_ID:
            return f"header {header}"
        try:
            self.private.public_key().verify(_b64(signature), f"{head}.{claims}".encode(),
                                             padding.PKCS1v15(), hashes.SHA256())
        except Exception:
            return "bad signature"
        now = time.time()
        # the audience is Google's token endpoint, wherever the key's token_uri points
        # (as google-auth signs it and Google checks it)
        if body.get("iss") != ACCOUNT or body.get("aud") != AUDIENCE:
            return f"iss/aud {body.get('iss')} {body.get('aud')}"
        if SCOPE not in str(body.get("scope", "")).split():
            return f"scope {body.get('scope')}"
        if not (body.get("iat", 0) - 60 <= now <= body.get("exp", 0)) or (
                body["exp"] - body["iat"] > 3600):
            return "stale"
        return None


def _handler(fake: FakeSearchConsole) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, status: int, body: Any = None) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _record(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            fake.calls.append((self.command, self.path, dict(self.headers), body))
            return body

        def _authorised(self) -> bool:
            given = self.headers.get("Authorization", "")
            if not given.startswith("Bearer ") or given[7:] not in fake.tokens:
                self._answer(401, {"error": {"code": 401, "message": "Invalid Credentials"}})
                return False
            return True

        def do_POST(self) -> None:
            form = urllib.parse.parse_qs(self._record().decode())
            if self.path != "/token":
                self._answer(404)
                return
            grant = form.get("grant_type", [""])[0]
            why = ("grant_type " + grant
                   if grant != "urn:ietf:params:oauth:grant-type:jwt-bearer"
                   else fake.check_assertion(form.get("assertion", [""])[0]))
            if why is not None:
                fake.refusals.append(why)
                self._answer(400, {"error": "invalid_grant", "error_description": why})
                return
            token = f"ya29.fake-{len(fake.tokens)}-token"
            fake.tokens.append(token)
            self._answer(200, {"access_token": token, "expires_in": 3599,
                               "token_type": "Bearer"})

        def do_GET(self) -> None:
            self._record()
            if not self._authorised():
                return
            if self.path == "/webmasters/v3/sites":
                self._answer(200, {"siteEntry": fake.sites} if fake.sites else {})
                return
            self._answer(404)

        def do_PUT(self) -> None:
            self._record()
            if not self._authorised():
                return
            parts = self.path.split("/")
            # /webmasters/v3/sites/{site}/sitemaps/{feedpath}
            if len(parts) == 7 and parts[1:4] == ["webmasters", "v3", "sites"] and (
                    parts[5] == "sitemaps"):
                site = urllib.parse.unquote(parts[4])
                levels = {entry["siteUrl"]: entry["permissionLevel"] for entry in fake.sites}
                if levels.get(site) not in ("siteOwner", "siteFullUser"):
                    self._answer(403, {"error": {"code": 403, "message":
                                                 "User does not have sufficient permission"}})
                    return
                fake.submitted.append((site, urllib.parse.unquote(parts[6])))
                self._answer(204)
                return
            self._answer(404)

    return Handler


class RunningSearchConsole:
    """``with RunningSearchConsole(sites) as fake:`` serves it on 127.0.0.1:0."""

    def __init__(self, sites: list[dict[str, str]]) -> None:
        self.fake = FakeSearchConsole(sites=sites)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.fake))
        self.server.daemon_threads = True
        self.fake.port = self.server.server_address[1]

    def __enter__(self) -> FakeSearchConsole:
        threading.Thread(target=self.server.serve_forever, args=(SHUTDOWN_POLL,),
                         daemon=True).start()
        return self.fake

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()
