"""What a crawl is asked to do, validated once, before anything is fetched.

A bad value is refused here with a message that says how to fix it, so the
CLI can turn it into exit code 2 and nothing is requested or written.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from crawler.__version__ import __version__
from crawler.config.hints import OBSERVED, Hints, build_hints
from crawler.core.credentials import Credentials
from crawler.core.errors import ConfigError
from crawler.core.records import REPORT_COLUMNS
from crawler.page.custom_extract import Rule, parse_rule
from crawler.page.lastmod import LASTMOD_MODES
from crawler.page.soft_404 import ProbeAnswer
from crawler.urls.documents import parse_documents
from crawler.urls.filters import UrlFilters
from crawler.urls.normalize import normalize_url

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 30.0
DEFAULT_USER_AGENT = f"sitemap-crawler/{__version__}"
DEFAULT_INDEXNOW_ENDPOINT = "https://api.indexnow.org/indexnow"  # --indexnow-endpoint
DEFAULT_SEARCH_CONSOLE_ENDPOINT = "https://www.googleapis.com/webmasters/v3/"  # its API root
DEFAULT_MAX_PAGE_BYTES = 10 * 1024 * 1024
DEFAULT_RETRIES = 2
DEFAULT_MAX_RETRY_AFTER = 120.0
# A robots.txt Crawl-delay is obeyed up to this many seconds: 86400 would make a
# 31-page site a month-long crawl.
DEFAULT_MAX_CRAWL_DELAY = 30.0
DEFAULT_MAX_QUERY_VARIANTS = 1000
DEFAULT_MAX_REDIRECTS = 10
# A page not read within this is recorded as parse-timeout (crawler.engine.parse_sandbox):
# an ordinary 10 MB page reads in well under a second.
DEFAULT_MAX_PARSE_SECONDS = 5.0
AUTO_WORKERS = 0  # CrawlConfig.workers for --workers auto
# --check-external: requests a second to each other origin, seconds a check may take,
# how long a result kept in --state is trusted, and how many distinct URLs are checked
DEFAULT_EXTERNAL_RATE = 1.0  # at first: the pace adapts (crawler.http.external_pace)
DEFAULT_EXTERNAL_MAX_RATE = 10.0  # while an origin's answers stay fast
DEFAULT_EXTERNAL_TIMEOUT = 10.0
DEFAULT_EXTERNAL_CACHE_DAYS = 1.0
DEFAULT_MAX_EXTERNAL = 10_000
# --external-deadline: the whole external phase, in seconds (0: none); what is left
# then is reported not-checked. Ten minutes is ~600 links on one origin at the default
# --external-rate, thousands spread over many: a large site's audit ends within a
# coffee break however many links it has, and says what it did not get to.
DEFAULT_EXTERNAL_DEADLINE = 600.0
# an https origin whose certificate expires within this many days is reported
DEFAULT_CERT_WARN_DAYS = 14
# --render: whether pages are loaded in a browser before they are read (crawler.render)
RENDER_MODES = ("never", "auto", "always")
# a rendered page is read as it stands this many seconds after it began loading
DEFAULT_RENDER_TIMEOUT = 10.0
# pages rendered at once, shared among the workers' browsers: on the bench's SPA
# (bench/render.py, two cores) one browser rendered 11.7 pages/s with 4 tabs, 20.4 with 8
# and no more with 16 (its own threads are then the bound), while memory grows with each
# tab; two workers of 4 tabs each rendered 19.8 pages/s in 1,433 MB, of 8 each 19.1 in 1,544
DEFAULT_RENDER_CONCURRENCY = 8
# Orphans of a live sitemap fetched and listed per audit: the sitemap is the site's
# claim, and 60 files of 50,000 URLs no link reaches would be 3 million requests.
DEFAULT_MAX_ORPHANS = 1000
# sitemaps.org: a <loc> must be less than 2,048 characters; longer URLs are
# also the commonest symptom of a crawler trap.
MAX_URL_LENGTH = 2047
# A path segment seen more often than this in one URL marks a loop such as
# /a/b/a/b/a/b/a/b/ built from relative links.
MAX_SEGMENT_REPEATS = 3

def memory_limit(name: str, default: int) -> int:
    """A bounded-memory threshold: ``SITEMAP_CRAWLER_<name>`` from the environment
    if it is a whole number, else ``default``. The tests set them to 0 to run every
    crawl the way a site of a million pages runs."""
    value = os.environ.get(f"SITEMAP_CRAWLER_{name}", "")
    return int(value) if value.isdigit() else default


_TOKEN = re.compile(r"[A-Za-z_-]+")


def product_token(user_agent: str) -> str:
    """The robots.txt product token of a User-Agent (RFC 9309 §2.2.1).

    ``sitemap-crawler/0.1 (+url)`` → ``sitemap-crawler``: the leading run of
    letters, ``_`` and ``-``.
    """
    match = _TOKEN.match(user_agent.strip())
    return match.group(0).lower() if match else ""


@dataclass(frozen=True, kw_only=True, slots=True)
class CrawlConfig:
    """Every knob of a crawl. Build it with keywords; it checks itself."""

    start_url: str
    prefix: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    # processes fetching and reading pages (--workers; crawler.engine.worker_pool), or
    # AUTO_WORKERS: this one until the crawl is large and CPU-bound (adaptive_pages)
    workers: int = 1
    timeout: float = DEFAULT_TIMEOUT
    max_pages: int | None = None
    max_depth: int | None = None
    user_agent: str = DEFAULT_USER_AGENT
    ignore_robots: bool = False
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    retries: int = DEFAULT_RETRIES
    rate: float | None = None
    delay: float = 0.0
    max_retry_after: float = DEFAULT_MAX_RETRY_AFTER
    max_crawl_delay: float = DEFAULT_MAX_CRAWL_DELAY
    max_query_variants: int = DEFAULT_MAX_QUERY_VARIANTS
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    max_parse_seconds: float = DEFAULT_MAX_PARSE_SECONDS
    max_orphans: int = DEFAULT_MAX_ORPHANS  # --compare-sitemap: orphans fetched and listed
    state_path: str | None = None
    resume: bool = False
    lastmod: str = "auto"
    ignore_selectors: tuple[str, ...] = ()
    http2: bool = False
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    no_list: tuple[str, ...] = ()
    strip_params: tuple[str, ...] = ()
    images: bool = False  # read each page's images for the image sitemap extension
    hreflang: bool = True  # crawl in-scope hreflang alternates, so they can be verified
    changefreq: tuple[str, ...] = ()  # --changefreq rules (crawler.config.hints)
    priority: tuple[str, ...] = ()  # --priority rules
    documents: tuple[str, ...] = ()  # --documents extensions, e.g. ("pdf",)
    audit: bool = False  # who links where, anchor texts and fingerprints, for the report
    command: str = "crawl"  # which command runs it: a --resume must be of the same one
    # --compare-sitemap: "auto" (robots.txt, then the usual places) or a sitemap URL
    compare_sitemap: str | None = None
    # URLs given rather than found (crawler.engine.seeds): --urls FILE|-, --from-sitemap
    # auto|URL seed the crawl beside START_URL; --no-follow fetches only them (and
    # START_URL); --add-urls FILE: known pages fetched once the links are exhausted
    urls_file: str | None = None
    from_sitemap: str | None = None
    follow: bool = True
    add_urls_file: str | None = None
    links_path: str | None = None  # --links FILE.csv|FILE.parquet: the link graph
    news: bool = False  # --news: read when articles were published, for the News sitemap
    videos: bool = False  # --videos: read each page's videos for the video sitemap
    # --header, --cookie, --auth: sent to the crawl's origin only; never shown
    credentials: Credentials = field(default_factory=Credentials)
    render: str = "never"  # --render never|auto|always
    render_timeout: float = DEFAULT_RENDER_TIMEOUT
    render_concurrency: int = DEFAULT_RENDER_CONCURRENCY
    browser: str | None = None  # --browser: the Chromium to render with
    check_external: bool = False  # --check-external (crawler.http.external)
    check_fragments: bool = False  # --check-fragments: #anchor links against their targets
    # --soft-404 (on): pages that answer 200 but say "not found" are not listed; the
    # answers of the probes asked at start-up (crawler.engine.soft_404), once asked
    soft_404: bool = True
    soft_404_probes: tuple[ProbeAnswer, ...] = ()
    extract: tuple[str, ...] = ()  # --extract NAME=KIND:QUERY (crawler.page.custom_extract)
    external_rate: float = DEFAULT_EXTERNAL_RATE
    external_max_rate: float = DEFAULT_EXTERNAL_MAX_RATE
    external_timeout: float = DEFAULT_EXTERNAL_TIMEOUT
    external_cache_days: float = DEFAULT_EXTERNAL_CACHE_DAYS
    max_external: int = DEFAULT_MAX_EXTERNAL
    external_deadline: float = DEFAULT_EXTERNAL_DEADLINE
    # connect to private, loopback and link-local addresses whatever the start URL's
    # class (crawler.http.address_rule): off, so a public site cannot aim us inward
    allow_private_network: bool = False
    cert_warn_days: int = DEFAULT_CERT_WARN_DAYS

    def __post_init__(self) -> None:
        if normalize_url(self.start_url) is None:
            raise ConfigError(
                f"start URL {self.start_url!r} is not an absolute http:// or https:// URL "
                "(example: https://www.example.com/)"
            )
        if self.prefix is not None and not self.prefix.startswith("/"):
            raise ConfigError(f"--prefix {self.prefix!r} must be a path starting with '/'")
        self._check_finite()
        self._check_crawl_limits()
        self._check_render_and_external()
        self._check_politeness()
        self._check_state_and_patterns()
        self._check_sources_and_output()

    def _check_finite(self) -> None:
        """NaN compares false with everything: a limit given as NaN would be off."""
        for option, number in (("--timeout", self.timeout), ("--rate", self.rate),
                               ("--delay", self.delay), ("--max-retry-after",
                                                         self.max_retry_after),
                               ("--max-crawl-delay", self.max_crawl_delay),
                               ("--max-parse-seconds", self.max_parse_seconds),
                               ("--render-timeout", self.render_timeout),
                               ("--external-rate", self.external_rate),
                               ("--external-max-rate", self.external_max_rate),
                               ("--external-timeout", self.external_timeout),
                               ("--external-cache-days", self.external_cache_days),
                               ("--external-deadline", self.external_deadline)):
            if number is not None and not math.isfinite(number):
                # NaN compares false with everything: it would switch the limit off
                raise ConfigError(f"{option} must be a finite number (got {number})")

    def _check_crawl_limits(self) -> None:
        """Concurrency, workers and the per-request limits."""
        _positive("--concurrency", self.concurrency)
        if self.workers != AUTO_WORKERS:
            _positive("--workers", self.workers)
        if self.workers > self.concurrency:
            raise ConfigError(
                f"--workers {self.workers} needs --concurrency {self.workers} or more "
                f"(got {self.concurrency}): each worker keeps at least one request in flight")
        _positive("--timeout", self.timeout)
        _positive("--max-page-bytes", self.max_page_bytes)
        _positive("--max-query-variants", self.max_query_variants)
        _positive("--max-retry-after", self.max_retry_after)
        _positive("--max-parse-seconds", self.max_parse_seconds)

    def _check_render_and_external(self) -> None:
        """--render's and the external checks' options."""
        if self.render not in RENDER_MODES:
            raise ConfigError(f"--render must be one of {', '.join(RENDER_MODES)} "
                              f"(got {self.render!r})")
        _positive("--render-timeout", self.render_timeout)
        _positive("--render-concurrency", self.render_concurrency)
        _positive("--external-rate", self.external_rate)
        _positive("--external-max-rate", self.external_max_rate)
        _positive("--external-timeout", self.external_timeout)
        if (self.external_cache_days < 0 or self.max_external < 0 or self.cert_warn_days < 0
                or self.external_deadline < 0):
            raise ConfigError("--external-cache-days, --external-deadline, --max-external "
                              "and --cert-warn-days must be 0 or more")

    def _check_politeness(self) -> None:
        """Crawl-delay, page and depth caps, retries, rate and delay."""
        if self.max_crawl_delay < 0:
            raise ConfigError(f"--max-crawl-delay must be 0 or more seconds "
                              f"(got {self.max_crawl_delay})")
        if self.max_pages is not None:
            _positive("--max-pages", self.max_pages)
        if self.max_orphans < 0:
            raise ConfigError(f"--max-orphans must be 0 or more (got {self.max_orphans})")
        if self.max_depth is not None and self.max_depth < 0:
            raise ConfigError(f"--max-depth must be 0 or more (got {self.max_depth})")
        if self.retries < 0:
            raise ConfigError(f"--retries must be 0 or more (got {self.retries})")
        if self.rate is not None:
            _positive("--rate", self.rate)
        if self.delay < 0:
            raise ConfigError(f"--delay must be 0 or more seconds (got {self.delay})")
        if self.max_redirects < 0:
            raise ConfigError(f"max_redirects must be 0 or more (got {self.max_redirects})")

    def _check_state_and_patterns(self) -> None:
        """--resume, --lastmod, selectors, filters and --extract rules."""
        if self.resume and self.state_path is None:
            raise ConfigError("--resume needs --state FILE: the state is what is resumed")
        if self.lastmod not in LASTMOD_MODES:
            raise ConfigError(f"--lastmod must be one of {', '.join(LASTMOD_MODES)}")
        if self.ignore_selectors:  # lexbor is loaded only when a selector is given
            from crawler.page.fingerprint import check_selector
        for selector in self.ignore_selectors:
            if not check_selector(selector):
                raise ConfigError(f"--ignore-selector {selector!r} is not a valid CSS selector")
        self.filters()  # an invalid pattern is refused here, naming it
        self.extraction_rules()  # and so is an --extract rule

    def _check_sources_and_output(self) -> None:
        """Where URLs come from, --documents, --changefreq and the user agent."""
        if self.compare_sitemap not in (None, "auto") and normalize_url(
                self.compare_sitemap) is None:
            raise ConfigError(f"--compare-sitemap {self.compare_sitemap!r} must be 'auto', "
                              "'off' or an absolute http(s) URL of a sitemap")
        for option, path in (("--urls", self.urls_file), ("--add-urls", self.add_urls_file)):
            if path is not None and path != "-" and not os.path.isfile(path):
                raise ConfigError(f"{option} {path!r}: no such file (one URL a line, "
                                  "or - for standard input)")
        if self.urls_file == "-" and self.add_urls_file == "-":
            raise ConfigError("--urls and --add-urls cannot both read standard input")
        if self.from_sitemap not in (None, "auto") and normalize_url(self.from_sitemap) is None:
            raise ConfigError(f"--from-sitemap {self.from_sitemap!r} must be 'auto' or an "
                              "absolute http(s) URL of a sitemap")
        object.__setattr__(self, "documents", parse_documents(self.documents))
        if self.hints().observes and self.state_path is None:
            raise ConfigError("--changefreq observed needs --state FILE: the changes it "
                              "reports are the ones earlier runs saw")
        if not product_token(self.user_agent):
            raise ConfigError(
                f"--user-agent {self.user_agent!r} must start with a product token "
                "such as 'mybot/1.0'"
            )

    def run_settings(self) -> dict[str, object]:
        """What decides which pages a run fetches and what it does with them: a run
        kept in --state is resumed only with the same (crawler.store.state)."""
        return {"command": self.command, "--prefix": self.prefix,
                "--max-pages": self.max_pages, "--max-depth": self.max_depth,
                "--ignore-robots": self.ignore_robots, "--user-agent": self.robots_token,
                "--max-query-variants": self.max_query_variants,
                "--exclude": list(self.exclude), "--include": list(self.include),
                "--no-list": list(self.no_list), "--strip-param": list(self.strip_params),
                "--documents": list(self.documents), "--images": self.images,
                "--hreflang": self.hreflang, "--render": self.render}

    def extraction_rules(self) -> tuple[Rule, ...]:
        rules: list[Rule] = []
        for spec in self.extract:
            try:
                rules.append(parse_rule(spec, frozenset(REPORT_COLUMNS)
                                        | {rule.name for rule in rules}))
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
        return tuple(rules)

    @property
    def robots_token(self) -> str:
        return product_token(self.user_agent)

    def filters(self) -> UrlFilters:
        return UrlFilters(exclude=self.exclude, include=self.include, no_list=self.no_list,
                          strip_params=self.strip_params)

    def hints(self) -> Hints:
        return build_hints(self.changefreq, self.priority)

    @property
    def fingerprints(self) -> bool:
        """Content fingerprints are only worth their cost when a state keeps them, for
        lastmod or for observed changefreq."""
        return self.audit or (self.state_path is not None and (
            self.lastmod == "auto" or OBSERVED in self.changefreq))


def _positive(option: str, value: float) -> None:
    if not value > 0:
        raise ConfigError(f"{option} must be greater than 0 (got {value})")
