"""The command line as a person may see it again: secrets hidden, ``--resume`` added.

Light on purpose (no third-party import): the launcher uses it before the
crawler is imported.
"""

from __future__ import annotations

import shlex

from crawler.core.credentials import REDACTED

# The command line as given, to print the exact command that resumes a run.
INVOCATION: list[str] = []

# Every option whose value is, or may hold, a secret: hidden wherever a command line
# is shown again (the resume hint, at any moment of a run). One list, which a test
# holds to the commands' options: an option with an ``-env`` twin, or whose help
# warns it is "visible in ps", must be here.
SECRET_OPTIONS = frozenset({"--header", "--cookie", "--auth", "--indexnow", "--redis"})


def redact_arguments(argv: list[str]) -> list[str]:
    """The command line with the values of the :data:`SECRET_OPTIONS` hidden."""
    shown: list[str] = []
    hide_next = False
    for word in argv:
        if hide_next:
            shown.append(REDACTED)
            hide_next = False
            continue
        name, equals, _value = word.partition("=")
        if name in SECRET_OPTIONS and word.startswith("--"):
            shown.append(f"{name}={REDACTED}" if equals else word)
            hide_next = not equals
        else:
            shown.append(word)
    return shown


def how_to_resume(argv: list[str]) -> str:
    """What to run to go on: the command with ``--resume``, where it keeps a state."""
    if not any(word == "--state" or word.startswith("--state=") for word in argv):
        return "--state FILE makes a crawl resumable"
    words = ["sitemap-crawler", *redact_arguments(argv)]
    command = shlex.join(words if "--resume" in words else [*words, "--resume"])
    if REDACTED in command:
        command += f" (with the secrets shown as {REDACTED} given again)"
    return "resume with: " + command
