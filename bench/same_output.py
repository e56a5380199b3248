"""Do two commits write the same sitemaps and reports? Every fixture site, both CLIs.

    python bench/same_output.py --baseline 2128544

A refactoring (moving modules into layers, splitting the coordinator) must not
change what a user gets. Each fixture site under ``fixtures/sites/`` is served on
loopback by the tests' own server, and crawled by the baseline commit's CLI and
by this checkout's, with the same options: a crawl writing sitemaps and three
reports, and an audit. The sitemaps, index and robots.txt must be equal byte for
byte; the JSON and CSV reports equal once the timings (response times, elapsed
seconds) are taken out. It prints each difference and exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from siteserver import FIXTURES, RunningServer  # noqa: E402

from bench import baseline_crawler  # noqa: E402

RUNS = {
    "crawl": ["crawl", "{url}", "--out", "{out}", "--report", "{out}/../r.json",
              "--report", "{out}/../r.csv", "--max-pages", "300", "--concurrency", "1"],
    "crawl-extensions": ["crawl", "{url}", "--out", "{out}", "--images", "--documents", "pdf",
                         "--report", "{out}/../r.json", "--max-pages", "300", "--concurrency", "1"],
    "audit": ["audit", "{url}", "--report", "{out}/../r.json", "--report", "{out}/../r.csv",
              "--max-pages", "300", "--concurrency", "1"],
}


def _steady_json(text: str) -> Any:
    document = json.loads(text)
    document.get("totals", {}).pop("elapsed_seconds", None)
    for row in document.get("urls", []):
        row.pop("response_ms", None)
    return document


def _steady_csv(text: str) -> list[dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        row.pop("response_ms", None)
    return rows


def _outputs(cli: str, run: list[str], url: str, where: Path) -> dict[str, Any]:
    out = where / "out"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    words = [word.format(url=url, out=out) for word in run]
    done = subprocess.run([cli, *words, "-q"], capture_output=True, text=True, timeout=300)
    found: dict[str, Any] = {"exit": done.returncode}
    for path in sorted(out.rglob("*")) if out.exists() else []:
        if path.is_file():
            found[f"out/{path.relative_to(out)}"] = path.read_bytes()
    for name, read in (("r.json", _steady_json), ("r.csv", _steady_csv)):
        if (where / name).exists():
            found[name] = read((where / name).read_text())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="the commit to compare against")
    parser.add_argument("--crawler", default=str(Path(sys.executable).parent / "sitemap-crawler"))
    args = parser.parse_args()
    sides = {"baseline": baseline_crawler(args.baseline), "this": args.crawler}
    differences = 0
    compared = 0
    with tempfile.TemporaryDirectory(prefix="same-output-") as scratch:
        for site in sorted(path.name for path in FIXTURES.iterdir() if path.is_dir()):
            with RunningServer(site) as server:
                for name, run in RUNS.items():
                    results = {side: _outputs(cli, run, server.url + "/",
                                              Path(scratch) / side)
                               for side, cli in sides.items()}
                    before, after = results["baseline"], results["this"]
                    compared += 1
                    for key in sorted(set(before) | set(after)):
                        if before.get(key) != after.get(key):
                            differences += 1
                            print(f"{site} {name}: {key} differs")
    print(f"{compared} runs compared on both sides: {differences} differences")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
