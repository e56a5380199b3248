"""What rendering changed, from the records' render notes (``--render``) — pure.

* ``rendered-links``: pages whose in-scope links appear only once JavaScript has
  run (count and the first few), and pages whose rendered DOM lost links the raw
  HTML had;
* ``render-changes``: canonical, meta robots, title or hreflang that differ
  between raw and rendered HTML, both values side by side (a noindex only in the
  raw HTML named as such: search engines do not render such a page, so the
  JavaScript that removes it is never run for them);
* ``render-errors``: pages that did not settle, uncaught JavaScript errors,
  requests robots.txt disallowed (first: a page whose script search engines may
  not fetch cannot render for them either), failed requests, browser crashes.
"""

from __future__ import annotations

from typing import Any

from crawler.core.records import PageRecord

# the order render-errors are listed in: what blocks search engines first
_ERROR_ORDER = {"robots-blocked": 0, "crash": 1, "timeout": 2, "js-error": 3,
                "request-failed": 4, "navigation": 5,
                # refused by the network rule (crawler.http.address_rule), and WebSockets,
                # which a rendered page never opens
                "private-address": 6, "websocket-refused": 7}


class RenderFindings:
    """Collects the three findings as the audit reads the records (once, in crawl
    order: on a large site they are on disk), plus the report's render summary:
    pages rendered, the third-party origins pages contacted, requests robots.txt
    blocked."""

    def __init__(self) -> None:
        self.links: list[dict[str, Any]] = []
        self.changes: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.origins: set[str] = set()
        self.asked = self.rendered = self.blocked = 0

    def add(self, record: PageRecord) -> None:
        if record.render_why is None:
            return
        self.asked += 1
        self.rendered += record.rendered
        url = record.url
        added: list[str] = []
        lost: list[str] = []
        for note in record.render_notes:
            kind = note[0]
            if kind == "links-added":
                added = [note[1], *note[2:]]
            elif kind == "links-lost":
                lost = [note[1], *note[2:]]
            elif kind == "change":
                self.changes.append({"url": url, "what": note[1], "raw": note[2],
                                     "rendered": note[3]})
            elif kind == "third-party":
                self.origins.add(note[1])
            elif kind in _ERROR_ORDER:
                self.blocked += kind == "robots-blocked"
                self.errors.append({"url": url, "error": _error_name(note),
                                    "detail": " ".join(note[1:] if kind not in (
                                        "robots-blocked", "private-address") else note[2:])})
        if added or lost:
            self.links.append({"url": url, "added": int(added[0]) if added else 0,
                               "first_added": added[1:], "lost": int(lost[0]) if lost else 0,
                               "first_lost": lost[1:], "raw_links": record.raw_links,
                               "rendered_links": record.links_found})

    def findings(self) -> dict[str, list[dict[str, Any]]]:
        errors = sorted(self.errors, key=lambda item: (
            _ERROR_ORDER.get(item["error"].split(":")[0], 9),
            item["error"] != "robots-blocked:script", item["url"]))
        return {"rendered-links": sorted(self.links, key=lambda item: item["url"]),
                "render-changes": sorted(self.changes, key=lambda item: item["url"]),
                "render-errors": errors}

    def summary(self) -> dict[str, Any]:
        return {"pages_asked": self.asked, "pages_rendered": self.rendered,
                "third_party_origins": sorted(self.origins),
                "robots_blocked_requests": self.blocked}


def _error_name(note: tuple[str, ...]) -> str:
    if note[0] in ("robots-blocked", "private-address"):
        return f"{note[0]}:{note[1]}"  # robots-blocked:script first of all
    return note[0]
