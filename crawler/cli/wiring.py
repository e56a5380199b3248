"""How the command's options become the crawl's inputs: its configuration (with the
credentials read and remembered for redaction), the live-sitemap reader handed
to the crawl, and the findings ``--fail-on`` names."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crawler.audit.names import CHANGES, FINDINGS
from crawler.cli import failure
from crawler.cli.failure import (
    EXIT_USAGE,
    Failure,
)
from crawler.config import (
    AUTO_WORKERS,
    CrawlConfig,
)
from crawler.core.credentials import build_credentials
from crawler.core.errors import ConfigError
from crawler.engine.coordinator import LiveSitemapReader
from crawler.engine.cores import worker_count
from crawler.http.fetch import Fetcher
from crawler.urls.scope import Scope

if TYPE_CHECKING:
    from crawler.store.live_sitemap import LiveSitemap


def live_reader(config: CrawlConfig, asked: str | None = "") -> LiveSitemapReader | None:
    """--compare-sitemap (or, with ``asked``, --from-sitemap): the audit's reader, with
    the writer's XML parser."""
    if asked == "":
        asked = config.compare_sitemap
    if asked is None:
        return None

    async def read(fetcher: Fetcher, scope: Scope, robots_txt: bytes | None,
                   clean: Callable[[str], str],
                   secret: Callable[[str], bool] | None) -> LiveSitemap:
        # imported here: a crawl without --compare-sitemap never needs the reader
        from crawler.audit.live_sitemap import read_live_sitemap
        from sitemap_writer import read_sitemap

        return await read_live_sitemap(fetcher, asked, scope, robots_txt=robots_txt,
                                       parse=read_sitemap, clean=clean, secret=secret)
    return read


def findings_named(fail_on: str | None) -> list[str]:
    names = [name.strip() for name in (fail_on or "").split(",") if name.strip()]
    unknown = [name for name in names if name not in FINDINGS and name not in CHANGES]
    if unknown:
        raise Failure(f"--fail-on {', '.join(unknown)}: not a finding (one of "
                      f"{', '.join(FINDINGS)}; or, since the last audit, added-pages, "
                      "removed-pages, changed, new-FINDING, fixed-FINDING)", EXIT_USAGE)
    return names


def crawl_config(start_url: str, options: dict[str, Any]) -> CrawlConfig:
    for name in ("ignore_selectors", "exclude", "include", "no_list", "strip_params",
                 "changefreq", "priority", "documents", "extract"):
        options[name] = tuple(options.get(name, ()))
    if "workers" in options:
        options["workers"] = (AUTO_WORKERS if options["workers"] == "auto" else
                              worker_count(options["workers"], options.get("concurrency") or 1))
    if options.get("check_external") is None:  # on in audits, off in crawls (--report too)
        options["check_external"] = options.get("command") == "audit"
    if options.get("compare_sitemap") in ("off", ""):
        options["compare_sitemap"] = None
    try:
        credentials = build_credentials(
            headers=options.pop("headers", ()), cookies=options.pop("cookies", ()),
            auth=options.pop("auth", None), auth_env=options.pop("auth_env", None),
            header_env=options.pop("header_env", ()), cookie_env=options.pop("cookie_env", ()),
            environ=os.environ)
        failure.SECRETS.append(credentials)
        return CrawlConfig(start_url=start_url, credentials=credentials, **options)
    except ConfigError as exc:
        raise Failure(str(exc), EXIT_USAGE) from None
