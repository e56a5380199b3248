"""``crawl --help`` and ``audit --help`` in groups, the options a person reaches for first.

Ninety options in one flat list put ``--max-pages`` at line 119 and ``--state`` at
144, after the IndexNow and Search Console ones. Each command's options are shown
here in groups (what it is for: scope, politeness, output, rendering, checks,
notifications), the most used first; the manual's reference builds its tables
from the same groups (``docs/hooks/option_groups.py``), so the two cannot drift.

``audit`` writes no sitemap: an option that only shapes the written sitemap is
refused there with one line saying so, rather than with click's "no such option".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import click

# (group title, long option names in the order shown); an option in no group of its
# command is shown last, under "Other" (a test keeps that group empty)
_COMMON_CRAWL = ("--out", "--report", "--max-pages", "--state", "--exclude", "--config",
                 "--changes")
_COMMON_AUDIT = ("--report", "--fail-on", "--max-pages", "--state", "--exclude", "--config")
_SCOPE = ("--prefix", "--max-depth", "--include", "--no-list", "--strip-param",
          "--max-query-variants", "--urls", "--from-sitemap", "--follow", "--add-urls",
          "--documents")
_POLITENESS = ("--concurrency", "--rate", "--delay", "--workers", "--timeout", "--retries",
               "--max-retry-after", "--max-crawl-delay", "--user-agent", "--ignore-robots",
               "--http2", "--max-page-bytes", "--max-parse-seconds", "--allow-private-network")
_ACCESS = ("--auth-env", "--auth", "--header-env", "--header", "--cookie-env", "--cookie")
_SITEMAP = ("--base-url", "--gzip", "--section", "--sections", "--lastmod", "--hreflang",
            "--hreflang-external", "--images", "--videos", "--news", "--changefreq",
            "--priority", "--html", "--stylesheet", "--max-urls-per-sitemap",
            "--max-bytes-per-sitemap", "--drop-duplicates", "--allow-shrink", "--soft-404",
            "--ignore-selector", "--links")
_RENDERING = ("--render", "--render-timeout", "--render-concurrency", "--browser")
_CHECKS = ("--compare-sitemap", "--max-orphans", "--check-external", "--check-fragments",
           "--max-external", "--external-deadline", "--external-timeout", "--external-rate",
           "--external-max-rate", "--external-cache-days", "--cert-warn-days", "--extract")
_NOTIFY = ("--indexnow-env", "--indexnow", "--indexnow-key-location", "--indexnow-endpoint",
           "--indexnow-all", "--indexnow-dry-run", "--search-console-env", "--search-console",
           "--search-console-endpoint", "--fail-on-submit")
_RUN = ("--resume", "--keep-runs", "--quiet", "--verbose", "--debug", "--help")

GROUPS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "crawl": (("Most used", _COMMON_CRAWL), ("Scope: what is crawled", _SCOPE),
              ("Politeness and speed", _POLITENESS), ("Logging in", _ACCESS),
              ("The sitemap written", _SITEMAP), ("Rendering JavaScript", _RENDERING),
              ("Report checks (with --report)", _CHECKS),
              ("Notifications: IndexNow, Search Console", _NOTIFY), ("The run", _RUN)),
    "audit": (("Most used", _COMMON_AUDIT), ("What the audit checks and compares", (
                  "--compare-with", "--keep-duplicates", "--section", "--sections",
                  "--hreflang", "--videos", "--soft-404", "--ignore-selector", "--links",
                  *_CHECKS)),
              ("Scope: what is crawled", _SCOPE), ("Politeness and speed", _POLITENESS),
              ("Logging in", _ACCESS), ("Rendering JavaScript", _RENDERING),
              ("The run", _RUN)),
}
OTHER = "Other"


def long_name(param: click.Parameter) -> str:
    """The option's long name as the groups name it (``--indexnow-dry-run``)."""
    names = [*param.opts, *getattr(param, "secondary_opts", [])]
    longs = [name for name in names if name.startswith("--") and not name.startswith("--no-")]
    return max(longs, key=len) if longs else names[0]


def grouped(command: click.Command, ctx: click.Context | None = None
            ) -> list[tuple[str, list[click.Option]]]:
    """The command's options in its groups, in their order; "Other" last, if any."""
    params = command.get_params(ctx) if ctx is not None else command.params
    options = {long_name(param): param for param in params
               if isinstance(param, click.Option) and not param.hidden}
    groups: list[tuple[str, list[click.Option]]] = []
    placed: set[str] = set()
    for title, names in GROUPS.get(command.name or "", ()):
        members = [options[name] for name in names if name in options and name not in placed]
        placed.update(long_name(option) for option in members)
        if members:
            groups.append((title, members))
    rest = [option for name, option in options.items() if name not in placed]
    if rest:
        groups.append((OTHER, rest))
    return groups


class GroupedCommand(click.Command):
    """A command whose help lists its options by group; ``refused`` names options of
    another command that this one turns away with a reason."""

    def __init__(self, *args: object, refused: dict[str, str] | None = None,
                 **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.refused = refused or {}

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """Arguments first, then the options in their groups' order (the manual's too)."""
        params = super().get_params(ctx)
        arguments = [param for param in params if not isinstance(param, click.Option)]
        ordered = [option for _title, options in grouped_params(self, params)
                   for option in options]
        hidden = [param for param in params if isinstance(param, click.Option) and param.hidden]
        return [*arguments, *ordered, *hidden]

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        for title, options in grouped(self, ctx):
            rows = [row for option in options if (row := option.get_help_record(ctx))]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for arg in args:
            if arg == "--":
                break
            name = arg.split("=", 1)[0]
            if name in self.refused:
                raise click.UsageError(f"{name}: {self.refused[name]}", ctx)
        return super().parse_args(ctx, args)


def grouped_params(command: click.Command, params: Sequence[click.Parameter]
                   ) -> list[tuple[str, list[click.Option]]]:
    """:func:`grouped` over given parameters (``get_params`` adds ``--help``)."""
    shadow = click.Command(command.name, params=list(params))
    return grouped(shadow)


def refusals(names: Iterable[str], why: str) -> dict[str, str]:
    """Each option (and its ``--no-`` form) refused with the same reason."""
    refused: dict[str, str] = {}
    for name in names:
        refused[name] = why
        refused["--no-" + name[2:]] = why
    return refused
