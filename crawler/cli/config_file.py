"""``--config FILE``: a command's options kept in a TOML file, for cron lines of one option.

Keys are the long option names without their dashes (``max-pages = 5000``,
``exclude = ["/cart/*"]``, ``gzip = false``), plus ``start-url``. The file's
values become click's *defaults* for this run (a ``[job]`` table is for
``enqueue`` and is skipped here), so whatever the command line
says wins over them. Every key and type is checked before anything runs: a
typo in a nightly job must fail loudly, not crawl without the filter meant.
Relative paths in the file are relative to the file, not to cron's working
directory.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

# click's parameter types, as the TOML types they accept
_TYPE_WORDS = {int: "an integer", float: "a finite number", str: "a string", bool: "true or false"}


def option_keys(command: click.Command) -> dict[str, click.Parameter]:
    """The file keys of ``command``: each long option's name, and its arguments'."""
    keys: dict[str, click.Parameter] = {}
    for param in command.params:
        if isinstance(param, click.Argument):
            keys[(param.name or "").replace("_", "-")] = param
            continue
        for opt in param.opts:
            if opt.startswith("--"):
                keys[opt[2:]] = param
        # a --flag/--no-flag pair is one key, true or false
        for opt in getattr(param, "secondary_opts", ()):
            keys.pop(opt[2:], None)
    keys.pop("config", None)
    keys.pop("help", None)
    keys.pop("version", None)
    return keys


def load_defaults(path: Path, command: click.Command) -> dict[str, Any]:
    """The file's settings as click's ``default_map`` (parameter name → value)."""
    import tomllib  # only with --config: not on a plain crawl's way to its first request

    where = f"--config {path}"
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except FileNotFoundError:
        raise click.UsageError(f"{where}: no such file") from None
    except OSError as exc:
        raise click.UsageError(f"{where}: cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise click.UsageError(f"{where}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise click.UsageError(f"{where}: not UTF-8 text, as TOML must be (byte "
                               f"{exc.start})") from None
    except RecursionError:
        raise click.UsageError(f"{where}: nested too deeply to be a config file") from None
    keys = option_keys(command)
    defaults: dict[str, Any] = {}
    document.pop("job", None)  # [job]: what the RQ queue reads (crawler.jobs.site_config)
    for key, value in document.items():
        param = keys.get(key)
        if param is None:
            import difflib  # for this message only

            close = difflib.get_close_matches(key, list(keys), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise click.UsageError(f"{where}: unknown key {key!r}{hint}")
        defaults[param.name or key] = _checked(key, value, param, path.parent, where)
    return defaults


def _checked(key: str, value: Any, param: click.Parameter, base: Path, where: str) -> Any:
    multiple = getattr(param, "multiple", False)
    if multiple:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise click.UsageError(f"{where}: {key} must be a string or a list of strings")
        if isinstance(param.type, click.Path):
            return [_relative_to(base, item) for item in items]
        return items
    if getattr(param.type, "int_or_word", False):  # --workers: 2 or "auto"
        if isinstance(value, int | str) and not isinstance(value, bool):
            return value
        raise click.UsageError(f"{where}: {key} must be an integer or a string "
                               f"(got {_toml_type(value)})")
    expected = _expected(param)
    if expected is bool:
        ok = isinstance(value, bool)
    elif expected is float:  # nan and inf are TOML floats, and would switch limits off
        ok = (isinstance(value, int | float) and not isinstance(value, bool)
              and math.isfinite(value))
    else:
        ok = isinstance(value, expected) and not isinstance(value, bool)
    if not ok:
        # the value itself is not quoted: it may be a password (auth = ...)
        raise click.UsageError(f"{where}: {key} must be {_TYPE_WORDS[expected]} "
                               f"(got {_toml_type(value)})")
    if isinstance(param.type, click.Choice) and value not in param.type.choices:
        raise click.UsageError(f"{where}: {key} must be one of "
                               f"{', '.join(map(str, param.type.choices))}")
    if isinstance(param.type, click.Path) and isinstance(value, str):
        return _relative_to(base, value)
    return value


def _relative_to(base: Path, value: str) -> str:
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def _expected(param: click.Parameter) -> type:
    if getattr(param, "is_flag", False) and not getattr(param, "count", False):
        return bool
    kind = param.type
    if isinstance(kind, click.types.IntParamType):
        return int
    if isinstance(kind, click.types.FloatParamType):
        return float
    if isinstance(kind, click.types.BoolParamType):
        return bool
    return str


def _toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string",
             list: "an array", dict: "a table"}
    return next((word for kind, word in names.items() if isinstance(value, kind)),
                type(value).__name__)
