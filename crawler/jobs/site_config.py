"""What a job needs to know of a site, from its ``--config`` file.

A job is ``crawl --config FILE``: the file names the site (``start-url``), where
its sitemaps go (``out``) and its state (``state``), both on storage every
worker shares, since a job killed on one worker resumes on another from that
state. The ``[job]`` table holds what only the queue reads (the CLI ignores it):
``timeout``, the longest a run may take (``"6h"``, ``"90m"``, or seconds;
RQ's own default of 180 s would kill any real crawl), ``retries``, and
``retry-after``, the waits before each retry (``["10s", "1m", "5m"]``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from crawler.core.errors import ConfigError

DEFAULT_TIMEOUT = 24 * 3600
DEFAULT_RETRIES = 3
DEFAULT_RETRY_AFTER = (10, 60, 300)  # seconds before a failed job's 1st, 2nd, 3rd retry
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True, slots=True)
class SiteJob:
    config: Path  # absolute: the worker's working directory is not the caller's
    start_url: str
    out: Path
    state: Path
    timeout: int  # seconds
    retries: int
    retry_after: tuple[int, ...] = DEFAULT_RETRY_AFTER  # seconds before each retry


def read_site(path: str | Path) -> SiteJob:
    config = Path(path).resolve()
    where = f"{path}"
    try:
        document = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where}: cannot be read as TOML ({exc})") from None
    missing = [key for key in ("start-url", "out", "state") if not document.get(key)]
    if missing:
        raise ConfigError(f"{where}: a job needs {', '.join(missing)} in its config (out and "
                          "state on storage every worker shares)")
    job = document.get("job", {})
    if not isinstance(job, dict):
        raise ConfigError(f"{where}: [job] must be a table (timeout, retries, retry-after)")
    unknown = sorted(set(job) - {"timeout", "retries", "retry-after"})
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) in [job]: {', '.join(unknown)}")
    retries = job.get("retries", DEFAULT_RETRIES)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ConfigError(f"{where}: [job] retries must be 0 or more")
    waits = job.get("retry-after", list(DEFAULT_RETRY_AFTER))
    if not isinstance(waits, list) or not waits:
        raise ConfigError(f"{where}: [job] retry-after must be a list of durations "
                          "(the wait before each retry; the last one repeats)")
    return SiteJob(config, str(document["start-url"]),
                   out=(config.parent / str(document["out"])).resolve(),
                   state=(config.parent / str(document["state"])).resolve(),
                   timeout=seconds(job.get("timeout", DEFAULT_TIMEOUT), where),
                   retries=retries,
                   retry_after=tuple(seconds(wait, where, "retry-after") for wait in waits))


def seconds(value: object, where: str, key: str = "timeout") -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _DURATION.fullmatch(str(value).strip().lower()) if isinstance(value, str) else None
    if match is None or float(match[1]) <= 0:
        raise ConfigError(f"{where}: [job] {key} {value!r} must be seconds or a duration "
                          "such as \"90m\" or \"6h\"")
    return round(float(match[1]) * _UNIT[match[2]])
