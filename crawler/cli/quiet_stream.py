"""stderr that can fail without failing the crawl.

Messages go to stderr, and stderr is not always there to take them: ``-v 2>&1 |
head -2`` closes the pipe after two lines, ``2>/dev/full`` or a full disk under
a log file fail every write. A progress line that cannot be shown must never
cost the sitemaps, so every write to stderr goes through :class:`Forgiving`,
which drops what cannot be written (and everything after it: a closed pipe
stays closed), and the run ends with the exit code it would have had.
"""

from __future__ import annotations

import io
import sys
from typing import TextIO


class Forgiving(io.TextIOBase):
    """A text stream that passes writes to ``inner`` until one fails, then drops
    them. It has no ``buffer`` on purpose: click and rich then write through it
    rather than around it, to the binary buffer underneath."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner
        self.failed = False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.inner, "errors", None)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        try:
            return not self.failed and self.inner.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        return self.inner.fileno()

    def write(self, text: str) -> int:
        if not self.failed:
            try:
                self.inner.write(text)
            except (OSError, ValueError):  # a closed pipe, a full disk, a closed file
                self.failed = True
        return len(text)

    def flush(self) -> None:
        if not self.failed:
            try:
                self.inner.flush()
            except (OSError, ValueError):
                self.failed = True


def forgive_stderr() -> None:
    """Route this process's stderr through :class:`Forgiving` (once)."""
    if not isinstance(sys.stderr, Forgiving) and sys.stderr is not None:
        sys.stderr = Forgiving(sys.stderr)
