"""A mkdocs hook: ``<!-- option-groups: crawl -->`` in a page becomes that command's
options, one table a group, in the groups and order ``--help`` shows them
(crawler.cli.help_groups): the manual's reference cannot drift from the command."""

from __future__ import annotations

import re
from typing import Any

_MARKER = re.compile(r"<!-- option-groups: (\w+) -->")


def on_page_markdown(markdown: str, **_kwargs: Any) -> str:
    return _MARKER.sub(lambda match: _tables(match.group(1)), markdown)


def _tables(name: str) -> str:
    import click

    from crawler.cli.commands import cli
    from crawler.cli.help_groups import grouped

    command = cli.commands[name]
    ctx = click.Context(command, info_name=name)
    lines = []
    for title, options in grouped(command, ctx):
        lines += [f"#### {title}", "", "| Option | What it does | Default |", "| --- | --- | --- |"]
        for option in options:
            names = ", ".join(f"`{opt}`" for opt in option.opts)
            if option.secondary_opts:
                names += " / " + ", ".join(f"`{opt}`" for opt in option.secondary_opts)
            default = option.default
            shown = "" if default in (None, (), False) or (option.is_flag and not default) \
                else f"`{default}`"
            text = " ".join((option.help or "").split()).replace("|", "\\|")
            lines.append(f"| {names} | {text} | {shown} |")
        lines.append("")
    return "\n".join(lines)
