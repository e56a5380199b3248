"""``--changefreq`` and ``--priority``: sitemap hints that must mean something.

Google ignores both; other engines and people's own tools read them, so when a
user asks for them they are derived from facts, never invented:

* ``--changefreq observed`` (needs ``--state``) gives a page the protocol word
  nearest the median interval between the content changes the state saw
  across runs, and only after two changes: one change says when, not how
  often. ``never`` is never guessed.
* ``--changefreq 'PATTERN=WORD'`` and ``--priority 'PATTERN=0.8'`` are rules,
  the first match winning (PATTERN as for ``--exclude``; ``=`` splits at its
  last occurrence, since a pattern may hold one); ``--priority depth`` is 1.0
  at START_URL, 0.1 less a link level, at least 0.1. ``observed`` and
  ``depth`` are rules too, in their place in the list.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from crawler.core.errors import ConfigError
from crawler.core.records import PageRecord
from crawler.urls.filters import Pattern, compile_pattern, path_and_query

# sitemaps.org: the seven valid <changefreq> values
CHANGEFREQ_WORDS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
OBSERVED, DEPTH = "observed", "depth"
_HOUR, _DAY = 3600.0, 86400.0
# what each observable word means, in seconds; "always" and "never" are not observed
_OBSERVED_WORDS = (("hourly", _HOUR), ("daily", _DAY), ("weekly", 7 * _DAY),
                   ("monthly", 30 * _DAY), ("yearly", 365 * _DAY))


def observed_word(seconds: float) -> str:
    """The word nearest ``seconds`` on a log scale (a change every 3 days: daily; every
    12: weekly), so each word covers the intervals it describes best."""
    return min(_OBSERVED_WORDS, key=lambda pair: abs(math.log(max(seconds, 1.0) / pair[1])))[0]


@dataclass(frozen=True, slots=True)
class Hints:
    """The changefreq and priority rules of one run; pure."""

    changefreq_rules: tuple[tuple[Pattern | None, str], ...] = ()
    priority_rules: tuple[tuple[Pattern | None, float], ...] = ()

    @property
    def observes(self) -> bool:
        return any(pattern is None for pattern, _word in self.changefreq_rules)

    def changefreq(self, record: PageRecord) -> str | None:
        if not self.changefreq_rules:  # the usual run: nothing to match each page against
            return None
        target = path_and_query(record.url)
        for pattern, word in self.changefreq_rules:
            if pattern is None:
                if record.change_interval is not None:
                    return observed_word(record.change_interval)
            elif pattern.matches(target):
                return word
        return None

    def priority(self, record: PageRecord) -> float | None:
        if not self.priority_rules:
            return None
        target = path_and_query(record.url)
        for pattern, value in self.priority_rules:
            if pattern is None:
                return max(0.1, round(1.0 - 0.1 * record.depth, 1))
            if pattern.matches(target):
                return value
        return None


def build_hints(changefreq: Iterable[str] = (), priority: Iterable[str] = ()) -> Hints:
    """Parse the options; :class:`ConfigError` names a bad one."""
    frequency_rules: list[tuple[Pattern | None, str]] = []
    for text in changefreq:
        if text == OBSERVED:
            frequency_rules.append((None, OBSERVED))
            continue
        pattern, word = _rule(text, "--changefreq", "'/news/*=daily' or observed")
        if word not in CHANGEFREQ_WORDS:
            raise ConfigError(f"--changefreq {text!r}: {word!r} is not one of "
                              f"{', '.join(CHANGEFREQ_WORDS)}")
        frequency_rules.append((pattern, word))
    priority_rules: list[tuple[Pattern | None, float]] = []
    for text in priority:
        if text == DEPTH:
            priority_rules.append((None, 0.0))
            continue
        pattern, value = _rule(text, "--priority", "'/products/*=0.8' or depth")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not (0.0 <= number <= 1.0 and len(value.partition(".")[2]) <= 1
                and value.replace(".", "", 1).isdigit()):
            raise ConfigError(f"--priority {text!r}: {value!r} must be 0.0 to 1.0 with one "
                              "decimal")
        priority_rules.append((pattern, round(number, 1)))
    return Hints(tuple(frequency_rules), tuple(priority_rules))


def _rule(text: str, option: str, example: str) -> tuple[Pattern, str]:
    pattern, equals, value = text.rpartition("=")
    if not equals or not pattern:
        raise ConfigError(f"{option} {text!r} must read PATTERN=VALUE ({example})")
    return compile_pattern(pattern, option), value.strip()
