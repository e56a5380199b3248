"""Keeping the user's secrets out of what the site echoes back.

A site may put a credential it was sent into what it answers: a session id in
every link (``?sid=…``, ``;jsessionid=…``), the Authorization value in a title
or a link. Those URLs and texts would reach the sitemap, the reports, the state
file and the ``-v`` log. :class:`SecretScrub` finds every given secret in any
form a page can spell it — as it is, percent-encoded (either case of hex, ``+``
for spaces) — so the coordinator can refuse such a URL (it is never listed,
fetched or stored: it is skipped as ``secret-in-url``, shown redacted) and
redact such text. Values under 4 characters are not looked for: they would
match everywhere and hide nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, unquote_plus

from crawler.core.credentials import REDACTED, Credentials

if TYPE_CHECKING:
    from crawler.page.read import PageOutcome

MIN_SECRET_CHARS = 4


class SecretScrub:
    """The secrets of one crawl, and how to find and hide them."""

    def __init__(self, credentials: Credentials) -> None:
        secrets = [value for value in credentials.secrets() if len(value) >= MIN_SECRET_CHARS]
        self.secrets = secrets
        # the spellings a page may use, longest first so a longer one is hidden whole
        forms = set(secrets)
        for value in secrets:
            for safe in ("", "/", "/:@!$&'()*+,;="):
                encoded = quote(value, safe=safe)
                forms.update((encoded, _lower_hex(encoded), encoded.replace("%20", "+")))
        self.forms = sorted(forms, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def carries(self, text: str) -> bool:
        """Does ``text`` hold a secret, in any spelling (decoded once or twice)?"""
        if any(form in text for form in self.forms):
            return True
        if "%" not in text and "+" not in text:
            return False
        for decoded in (unquote(text), unquote_plus(text), unquote(unquote(text))):
            if any(secret in decoded for secret in self.secrets):
                return True
        return False

    def redact(self, text: str) -> str:
        """``text`` with every spelling of every secret shown as ``***``; one that
        still carries a secret (spelt some other way) is shown decoded and redacted."""
        for form in self.forms:
            text = text.replace(form, REDACTED)
        if self.carries(text):
            text = unquote_plus(unquote(text))
            for secret in self.secrets:
                text = text.replace(secret, REDACTED)
        return text

    def redact_or_none(self, text: str | None) -> str | None:
        return None if text is None else self.redact(text)


    def scrub_outcome(self, outcome: PageOutcome) -> list[str]:
        """Take the secrets out of what a page sent back, before anything is kept:
        texts and targets redacted, and the links carrying one taken out and
        returned (the crawl skips them, shown redacted)."""
        record = outcome.record
        carried = [link for link in outcome.links if self.carries(link)]
        if carried:
            gone = set(carried)
            outcome.links = [link for link in outcome.links if link not in gone]
            if outcome.fresh is not None:
                outcome.fresh = [link for link in outcome.fresh if link not in gone]
        outcome.anchors = {link: self.redact(text) for link, text in outcome.anchors.items()
                           if not self.carries(link)}
        outcome.edges = [(target, self.redact(text), rel) for target, text, rel in outcome.edges
                         if not self.carries(target)]
        for name in ("title", "detail", "canonical", "redirect_to", "refresh_to"):
            value = getattr(record, name)
            if value is not None and self.carries(value):
                setattr(record, name, self.redact(value))
        record.alternates = tuple(pair for pair in record.alternates
                                  if not self.carries(pair[1]))
        if record.images:
            record.images = tuple(image for image in record.images if not self.carries(image))
        return carried


def _lower_hex(encoded: str) -> str:
    parts = encoded.split("%")
    return parts[0] + "".join("%" + part[:2].lower() + part[2:] for part in parts[1:])
