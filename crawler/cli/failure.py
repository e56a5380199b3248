"""A failure already phrased for the user, and the exit codes the command documents
(the table is in ``crawler.cli.commands``)."""

from __future__ import annotations

EXIT_OK, EXIT_UNEXPECTED, EXIT_USAGE, EXIT_START_URL, EXIT_OUTPUT, EXIT_SHRINK = 0, 1, 2, 3, 4, 5
EXIT_FINDINGS = 6
EXIT_INTERRUPTED = 130


class Failure(Exception):
    """A failure already phrased for the user, with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code
