"""How the benchmark scripts report: one JSON object a line on stdout, and the same
lines appended to ``--results FILE`` when one is named (so runs accumulate)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping


def emit(rows: Iterable[Mapping[str, object]], results: str | None) -> None:
    lines = [json.dumps(row) for row in rows]
    for line in lines:
        print(line)
    if results:
        with open(results, "a") as handle:
            handle.writelines(line + "\n" for line in lines)
