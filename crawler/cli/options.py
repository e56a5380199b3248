"""The options of the commands that crawl, in --help order, and the types that check
them: the reference in the manual is generated from these."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from crawler.cli.config_file import load_defaults
from crawler.config import (
    DEFAULT_CERT_WARN_DAYS,
    DEFAULT_CONCURRENCY,
    DEFAULT_EXTERNAL_CACHE_DAYS,
    DEFAULT_EXTERNAL_DEADLINE,
    DEFAULT_EXTERNAL_MAX_RATE,
    DEFAULT_EXTERNAL_RATE,
    DEFAULT_EXTERNAL_TIMEOUT,
    DEFAULT_INDEXNOW_ENDPOINT,
    DEFAULT_MAX_CRAWL_DELAY,
    DEFAULT_MAX_EXTERNAL,
    DEFAULT_MAX_PAGE_BYTES,
    DEFAULT_MAX_PARSE_SECONDS,
    DEFAULT_MAX_QUERY_VARIANTS,
    DEFAULT_MAX_RETRY_AFTER,
    DEFAULT_RENDER_CONCURRENCY,
    DEFAULT_RENDER_TIMEOUT,
    DEFAULT_RETRIES,
    DEFAULT_SEARCH_CONSOLE_ENDPOINT,
    DEFAULT_TIMEOUT,
    DEFAULT_USER_AGENT,
    RENDER_MODES,
)
from sitemap_writer import (
    MAX_SITEMAP_BYTES,
    MAX_URLS_PER_SITEMAP,
)


def _read_config(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    """Eager: the file's settings become this run's defaults before other options are read."""
    if value is not None:
        ctx.default_map = load_defaults(value, ctx.command)


class _Workers(click.ParamType):
    """``--workers``: a positive number or ``auto`` (an integer or a string in a
    --config file)."""

    name = "N|auto"
    int_or_word = True  # what crawler.cli.config_file accepts for it

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int | str:
        if value == "auto":
            return "auto"
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is neither a number nor auto", param, ctx)
        if number < 1 or isinstance(value, bool):
            self.fail(f"{value!r} must be 1 or more, or auto", param, ctx)
        return number


WORKERS = _Workers()


class _Finite(click.types.FloatParamType):
    """A number of seconds or a rate: ``nan`` and ``inf`` parse as floats, and would
    switch a limit off (every comparison with NaN is false) or wait forever."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


FINITE = _Finite()


# Options of every command that crawls (crawl and audit), in --help order.
CRAWL_OPTIONS = [
    click.option("--config", type=click.Path(dir_okay=False, path_type=Path), is_eager=True,
                  expose_value=False, callback=_read_config,
                  help="TOML file of options by their long names (max-pages = 5000, "
                  "exclude = [\"/cart/*\"]); the command line wins over it."),
    click.option("--prefix", help="Only crawl paths under this prefix "
                  "[default: START_URL's path up to its last '/']."),
    click.option("--concurrency", type=int, default=DEFAULT_CONCURRENCY, show_default=True,
                  help="Requests in flight at once (and the connection pool size)."),
    click.option("--workers", type=WORKERS, default="auto", show_default=True,
                  metavar="N|auto",
                  help="Processes fetching and reading pages. auto: this one, plus half "
                  "the cores of workers (none on two cores) once 2,000 pages are fetched, "
                  "2,000 more wait and this process is CPU-bound; N: exactly N from the "
                  "start. --concurrency, --rate and --delay still hold for the whole crawl."),
    click.option("--http2", is_flag=True,
                  help="Use HTTP/2 where an https site offers it: one connection carrying "
                  "--concurrency streams (plain http stays HTTP/1.1)."),
    click.option("--timeout", type=FINITE, default=DEFAULT_TIMEOUT, show_default=True,
                  help="Total seconds allowed per request, body included."),
    click.option("--max-pages", type=int, help="Fetch at most this many URLs."),
    click.option("--max-depth", type=int, help="Follow links at most this deep (start URL = 0)."),
    click.option("--user-agent", default=DEFAULT_USER_AGENT, show_default=True,
                  help="User-Agent header; its leading token is matched in robots.txt."),
    click.option("--ignore-robots", is_flag=True, help="Do not fetch or obey robots.txt."),
    click.option("--max-page-bytes", type=int, default=DEFAULT_MAX_PAGE_BYTES, show_default=True,
                  help="Larger pages (after decompression) are recorded as too large."),
    click.option("--max-parse-seconds", type=FINITE, default=DEFAULT_MAX_PARSE_SECONDS,
                  show_default=True, help="A page not read within this many seconds of "
                  "CPU (lexbor is quadratic on some broken HTML; at most four times as many "
                  "of wall time) is recorded as parse-timeout."),
    click.option("--retries", type=int, default=DEFAULT_RETRIES, show_default=True,
                  help="Retries for timeouts, connection errors, 429 and 5xx."),
    click.option("--rate", type=FINITE, help="At most this many requests per second."),
    click.option("--delay", type=FINITE, default=0.0, show_default=True,
                  help="At least this many seconds between request starts."),
    click.option("--max-retry-after", type=FINITE, default=DEFAULT_MAX_RETRY_AFTER,
                  show_default=True, help="Cap on a server's Retry-After, in seconds."),
    click.option("--max-crawl-delay", type=FINITE, default=DEFAULT_MAX_CRAWL_DELAY,
                  show_default=True, help="Cap on a robots.txt Crawl-delay, in seconds."),
    click.option("--max-query-variants", type=int, default=DEFAULT_MAX_QUERY_VARIANTS,
                  show_default=True, help="Distinct query strings crawled per path."),
    click.option("--state", "state_path", type=click.Path(dir_okay=False),
                  help="SQLite file that remembers validators, fingerprints and links "
                  "between runs."),
    click.option("--resume", is_flag=True, help="Continue the interrupted run kept in --state."),
    click.option("--keep-runs", type=int, default=100, show_default=True,
                  help="Runs the --state file keeps in its history ('sitemap-crawler "
                  "history STATE'); older ones are dropped."),
    click.option("--ignore-selector", "ignore_selectors", multiple=True, metavar="CSS",
                  help="Leave matching elements out of change detection (repeatable)."),
    click.option("--exclude", multiple=True, metavar="PATTERN",
                  help="Never request or list matching URLs (repeatable; PATTERN: see above)."),
    click.option("--include", multiple=True, metavar="PATTERN",
                  help="Request only matching URLs, and START_URL (repeatable)."),
    click.option("--no-list", multiple=True, metavar="PATTERN",
                  help="Request matching URLs and follow their links, but never list them "
                  "(repeatable)."),
    click.option("--strip-param", "strip_params", multiple=True, metavar="NAME",
                  help="Remove this query parameter (a glob: utm_*) from every URL before "
                  "de-duplication and before the request (repeatable)."),
    click.option("--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                  help="Send this header to the crawled site's origin only (repeatable; "
                  "visible in ps: prefer --header-env)."),
    click.option("--header-env", "header_env", multiple=True, metavar="VAR",
                  help="Read a 'NAME: VALUE' header from this environment variable "
                  "(repeatable)."),
    click.option("--cookie", "cookies", multiple=True, metavar="NAME=VALUE",
                  help="Send this cookie to the crawled site's origin only (repeatable; "
                  "visible in ps: prefer --cookie-env)."),
    click.option("--cookie-env", "cookie_env", multiple=True, metavar="VAR",
                  help="Read cookies ('NAME=VALUE', or several as 'a=1; b=2') from this "
                  "environment variable (repeatable)."),
    click.option("--auth", metavar="USER:PASSWORD",
                  help="HTTP Basic credentials for the crawled site's origin (visible in ps: "
                  "prefer --auth-env)."),
    click.option("--auth-env", metavar="VAR",
                  help="Read USER:PASSWORD for HTTP Basic from this environment variable."),
    click.option("--urls", "urls_file", metavar="FILE|-",
                  help="Also start from these URLs (one a line; - reads standard input); "
                  "with --no-follow, fetch only them."),
    click.option("--from-sitemap", metavar="auto|URL",
                  help="Also start from the URLs of the site's own sitemaps (auto: those "
                  "robots.txt names, else the usual places) or of this sitemap."),
    click.option("--follow/--no-follow", default=True, show_default=True,
                  help="Follow the links of the pages fetched; with --urls or "
                  "--from-sitemap, --no-follow fetches and judges that list only (list mode: "
                  "START_URL then gives the site, and is fetched only if listed)."),
    click.option("--add-urls", "add_urls_file", metavar="FILE|-",
                  help="Known URLs no link reaches (one a line): fetched once the links are "
                  "exhausted, listed if indexable, reported if refused; their links are "
                  "not followed."),
    click.option("--links", "links_path", metavar="FILE.csv|FILE.parquet",
                  help="Write the link graph: one row per link (source, target, anchor "
                  "text, rel nofollow/ugc/sponsored, in scope, the target's status); "
                  "Parquet needs the parquet extra."),
    click.option("--hreflang/--no-hreflang", default=True, show_default=True,
                  help="Read the hreflang alternates pages declare and verify them (listed "
                  "and reciprocal); crawl writes the verified ones into the sitemap."),
    click.option("--videos", is_flag=True,
                  help="List each page's videos (JSON-LD/Microdata VideoObject and <video> "
                  "elements) with the video sitemap extension; ones missing a thumbnail, "
                  "title, description or file are left out and reported."),
    click.option("--documents", multiple=True, metavar="EXT[,EXT…]",
                  help="List in-scope links to these document types (pdf, docx, …) when they "
                  "answer 200 with that content type; asked for with HEAD, never downloaded."),
    click.option("--render", type=click.Choice(RENDER_MODES), default="never",
                  show_default=True,
                  help="Load pages in headless Chromium and read the DOM JavaScript built: "
                  "auto renders only pages whose raw HTML shows client-side rendering "
                  "(needs the render extra: pip install 'sitemap-crawler[render]')."),
    click.option("--render-timeout", type=FINITE, default=DEFAULT_RENDER_TIMEOUT,
                  show_default=True, help="Seconds a rendered page may take to settle; "
                  "one still changing is read as it stands then, and reported."),
    click.option("--render-concurrency", type=int, default=DEFAULT_RENDER_CONCURRENCY,
                  show_default=True, help="Pages rendered at once in the whole crawl (with "
                  "--workers, shared among their browsers)."),
    click.option("--browser", metavar="PATH",
                  help="The Chromium to render with [default: $SITEMAP_CRAWLER_BROWSER, "
                  "Playwright's own, then chromium, chromium-browser, google-chrome on PATH]."),
    click.option("--extract", multiple=True, metavar="NAME=KIND:QUERY",
                  help="A report column from every page: NAME=css:SELECTOR (its text), "
                  "NAME=css:SELECTOR@ATTR, NAME=xpath:EXPR or NAME=regex:PATTERN; the first "
                  "match, or every one with NAME[]= (repeatable)."),
    click.option("--check-external/--no-check-external", default=None,
                  help="Check every out-of-scope link once (HEAD, then GET where HEAD is "
                  "refused; redirects followed; their robots.txt obeyed; one connection "
                  "per origin) and report broken and redirected ones and certificates "
                  "about to expire [default: on for audit, off for crawl]."),
    click.option("--check-fragments", is_flag=True,
                  help="Check links to #anchors against the ids of the page they point "
                  "into (in scope: as read; elsewhere, with --check-external: HTML pages "
                  "within --max-page-bytes, fetched once)."),
    click.option("--external-rate", type=FINITE, default=DEFAULT_EXTERNAL_RATE,
                  show_default=True, help="Requests a second to each other origin at "
                  "first; the pace rises while its answers stay fast and falls on 429, "
                  "503 or slow answers."),
    click.option("--external-max-rate", type=FINITE, default=DEFAULT_EXTERNAL_MAX_RATE,
                  show_default=True, help="The fastest pace for one other origin, in "
                  "requests a second (4 connections at most)."),
    click.option("--external-timeout", type=FINITE, default=DEFAULT_EXTERNAL_TIMEOUT,
                  show_default=True, help="Seconds allowed per request to another origin."),
    click.option("--external-cache-days", type=FINITE, default=DEFAULT_EXTERNAL_CACHE_DAYS,
                  show_default=True, help="With --state: reuse a check this recent instead "
                  "of asking again (0: always ask)."),
    click.option("--external-deadline", type=FINITE, default=DEFAULT_EXTERNAL_DEADLINE,
                  show_default=True, help="Seconds the whole external check may take; links "
                  "not checked by then are reported not-checked (0: no deadline)."),
    click.option("--max-external", type=int, default=DEFAULT_MAX_EXTERNAL, show_default=True,
                  help="Distinct external URLs checked; the rest are counted."),
    click.option("--soft-404/--no-soft-404", "soft_404", default=True, show_default=True,
                  help="Ask made-up URLs (4 before the first page, then one in each of "
                  "the first 16 directories), and never list a page that answers 200 but "
                  "is a \"not found\" page: its title or h1 says so, or it is nearly the "
                  "page those URLs showed."),
    click.option("--allow-private-network", is_flag=True,
                  help="Let links, redirects, sitemaps and rendered pages reach loopback, "
                  "private and link-local addresses (cloud metadata included) even when "
                  "the start URL is public. Off: only the start URL's own class of "
                  "address is open. Risky on a site you do not trust."),
    click.option("--cert-warn-days", type=int, default=DEFAULT_CERT_WARN_DAYS,
                  show_default=True, help="Report https origins (checked links) whose "
                  "certificate expires within this many days."),
    click.option("-q", "--quiet", is_flag=True, help="No progress and no summary."),
    click.option("-v", "--verbose", is_flag=True, help="Log every request (URL, status, time)."),
    click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors."),
]
# Options of the sitemaps crawl writes (audit refuses them: it writes none).
SITEMAP_OPTIONS = [
    click.option("--lastmod", type=click.Choice(["auto", "header", "none"]), default="auto",
                  show_default=True, help="auto: Last-Modified, else (with --state) when the "
                  "content last changed; header: Last-Modified only; none: no lastmod."),
    click.option("--images", is_flag=True,
                  help="List each page's images (img src, the largest srcset candidate, "
                  "picture sources) with the image sitemap extension."),
    click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path),
                  help="Directory to write the sitemaps, index and robots.txt into."),
    click.option("--base-url", help="Public URL where --out is served "
                  "[default: scheme://host[:port] + prefix]."),
    click.option("--max-urls-per-sitemap", type=int, default=MAX_URLS_PER_SITEMAP,
                  show_default=True, help="URLs per shard (1..50000)."),
    click.option("--max-bytes-per-sitemap", type=int, default=MAX_SITEMAP_BYTES,
                  show_default=True, help="Uncompressed bytes per shard (at most 52428800)."),
    click.option("--gzip/--no-gzip", "compressed", default=True, show_default=True,
                  help="Write shards as .xml.gz or plain .xml."),
    click.option("--hreflang-external", is_flag=True,
                  help="Also write alternates outside the crawl's scope, as pages declare them "
                  "(they cannot be verified)."),
    click.option("--changes", "changes_path", metavar="FILE.json|FILE.csv",
                  help="Write every URL this run added to or removed from the sitemap, and "
                  "(with --state) every page whose content changed or whose Last-Modified "
                  "misleads."),
    click.option("--html/--no-html", "html", default=True, show_default=True,
                  help="Also write sitemap.html and a page a shard: the sitemaps as a person "
                  "reads them, in any browser, from file:// or over HTTP, with no XSLT."),
    click.option("--stylesheet", metavar="URL|builtin",
                  help="Add <?xml-stylesheet?> for this XSL URL to every sitemap, or 'builtin' "
                  "to write our own sitemap.xsl beside them."),
    click.option("--changefreq", multiple=True, metavar="PATTERN=WORD|observed",
                  help="<changefreq> by rule, first match winning, or 'observed' (needs --state): "
                  "from the content changes seen across runs (repeatable)."),
    click.option("--priority", multiple=True, metavar="PATTERN=0.8|depth",
                  help="<priority> by rule, first match winning, or 'depth': 1.0 at START_URL, "
                  "0.1 less a level (repeatable)."),
    click.option("--news", metavar="NAME=LANG",
                  help="Also write sitemap-news.xml (named in the index): the listed articles "
                  "published in the last two days (article:published_time or JSON-LD "
                  "datePublished), for the publication NAME in language LANG."),
    click.option("--indexnow", "indexnow_key", metavar="KEY",
                  help="After the run, send the URLs added, changed (lastmod moved) or removed "
                  "since the last published sitemap to IndexNow with this key (needs --state; "
                  "visible in ps: prefer --indexnow-env)."),
    click.option("--indexnow-env", metavar="NAME",
                  help="Read the IndexNow key from this environment variable."),
    click.option("--indexnow-endpoint", default=DEFAULT_INDEXNOW_ENDPOINT, show_default=True,
                  metavar="URL", help="Where to send them (the shared endpoint passes them on "
                  "to every engine taking part)."),
    click.option("--indexnow-key-location", metavar="URL",
                  help="The key file's URL, when it is not /KEY.txt at the site's root."),
    click.option("--indexnow-all", is_flag=True,
                  help="On a first run (no sitemap in --out yet), send every URL."),
    click.option("--indexnow-dry-run", "--dry-run", "indexnow_dry_run", is_flag=True,
                  help="Print what IndexNow would be sent (one URL a line, with why) and "
                  "send nothing; the sitemaps are still written."),
    click.option("--search-console", "search_console_key", metavar="KEY.json",
                  type=click.Path(path_type=Path, dir_okay=False),
                  help="After publishing, submit the sitemap index to Google Search Console "
                  "with this service account key, on the property that owns it (the key is "
                  "written nowhere)."),
    click.option("--search-console-env", metavar="NAME",
                  help="Read the service account key's JSON from this environment variable."),
    click.option("--search-console-endpoint", default=DEFAULT_SEARCH_CONSOLE_ENDPOINT,
                  show_default=True, metavar="URL",
                  help="The Search Console API's root (another one for tests)."),
    click.option("--fail-on-submit", is_flag=True,
                  help="Exit 9 when the submission to Search Console fails (by default it "
                  "is a warning: the sitemaps are published either way)."),
    click.option("--drop-duplicates/--keep-duplicates", "drop_duplicates", default=None,
                  help="Pages with the same body at several URLs (/ and /index.html) are "
                  "listed once by default: the one with the fewest path segments, then "
                  "the shortest; the report names the others duplicate-of. "
                  "--drop-duplicates also compares meaningful content (text and links, "
                  "scripts and tokens aside); --keep-duplicates lists every URL."),
    click.option("--allow-shrink", is_flag=True,
                  help="Publish even if the new sitemap lists under half the URLs of the old one."),
]


# The sections of the sitemap (crawl) and of the report's counts (crawl --report, audit).
SECTION_OPTIONS = [
    click.option("--section", "section", multiple=True, metavar="NAME=PATTERN",
                  help="Split the site into sections: a URL goes to the first section whose "
                  "PATTERN (as --include's) matches, else to 'other'. crawl: each section "
                  "has sitemap shards of its own (sitemap-NAME-00001.xml.gz), all named in "
                  "the index; reports count pages and findings by section (repeatable)."),
    click.option("--sections", "sections_mode", type=click.Choice(["auto", "none"]),
                  default="none", show_default=True,
                  help="auto: one section per first path segment holding 1 % or more of the "
                  "listed pages, when there are two or more such segments."),
]


def sitemap_only() -> list[str]:
    """The long names of the options that only shape the written sitemap (and its
    notifications): what ``audit`` refuses. ``--drop-duplicates`` aside: an audit
    has ``--keep-duplicates`` of its own."""
    names: list[str] = []
    for option in SITEMAP_OPTIONS:
        decorated = option(lambda: None)
        for param in decorated.__click_params__:  # type: ignore[attr-defined]
            names += [name for name in (*param.opts, *param.secondary_opts)
                      if name.startswith("--") and name not in ("--drop-duplicates",
                                                                 "--keep-duplicates")]
    return names


def with_options(options: list[Any]) -> Any:
    """Apply click options in list order (decorators apply bottom-up)."""
    def decorate(function: Any) -> Any:
        for option in reversed(options):
            function = option(function)
        return function
    return decorate
