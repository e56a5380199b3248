"""What decides which URLs of a site a crawl fetches, known before its first page."""

from __future__ import annotations

from dataclasses import dataclass

from crawler.config import CrawlConfig
from crawler.urls.filters import UrlFilters
from crawler.urls.robots import RobotsPolicy
from crawler.urls.scope import Scope


@dataclass(frozen=True, slots=True)
class SiteRules:
    """The crawl's configuration, its scope, the site's robots.txt and the URL filters
    (``--include``, ``--exclude``, ``--strip-param``): handed as one to the parts of the
    coordinator that judge URLs."""

    config: CrawlConfig
    scope: Scope
    policy: RobotsPolicy
    filters: UrlFilters | None = None
