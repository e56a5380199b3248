"""Chromium's own cost of rendering, without the crawler: the bound ``--render`` works under.

    python bench/render_bare.py [--pages 1200] [--tabs 8] [--parallel 1]
                                [--restart none|browser|context] [--every 200]
                                [--tab-pages 0]

Loads the pages of ``render.py``'s SPA (served by the harness's nginx) in one headless
Chromium driven by Playwright, with the crawler's browser flags, its settle wait and
its request interception (the document and bundle answered from memory), but none of
its fetching, parsing or bookkeeping. It prints pages/s (start-up included), the CPU
of every process under it (``/proc``, sampled every 0.5 s) and each part's memory
when the whole was at its peak.

What it answered (bench/README.md, "Rendering"): how the CPU a page costs falls
with the tabs a browser keeps busy; what two browsers on two cores cost against one
(``--parallel 2``, each its own process and driver, as two workers are); what a
browser restart every N pages costs; and which part's memory grows with the pages a
tab has loaded (``--tab-pages K`` closes a tab after K pages).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from render import TICK, _kind, _tree, spa  # noqa: E402

from bench import Nginx  # noqa: E402
from crawler.render.flags import FLAGS  # noqa: E402
from crawler.render.settle import QUIET, TRACKER, WAIT_CALM  # noqa: E402


def _sample(pid: int) -> dict[int, tuple[str, float, int]]:
    """Per process under ``pid``: its part, CPU seconds so far, PSS in MB."""
    found = {}
    for each in _tree(pid):
        try:
            command = Path(f"/proc/{each}/cmdline").read_bytes().decode(errors="replace")
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            pss = next((int(line.split()[1]) // 1024 for line in
                        Path(f"/proc/{each}/smaps_rollup").read_text().splitlines()
                        if line.startswith("Pss:")), 0)
        except OSError:
            continue
        found[each] = (_kind(command), (int(fields[11]) + int(fields[12])) / TICK, pss)
    return found


async def _load(args: argparse.Namespace, origin: str, first: int) -> float:
    from playwright.async_api import BrowserContext, async_playwright

    shell = urllib.request.urlopen(origin + "/p/0/").read()
    bundle = urllib.request.urlopen(origin + "/app.js").read()

    async def answer(route) -> None:  # type: ignore[no-untyped-def]
        if route.request.url.endswith("/app.js"):
            await route.fulfill(status=200, body=bundle,
                                headers={"content-type": "text/javascript"})
        else:
            await route.fulfill(status=200, body=shell, headers={"content-type": "text/html"})

    async with async_playwright() as playwright:
        browser = context = None
        started = time.monotonic()
        every = args.every if args.restart != "none" else args.pages
        for start in range(first, first + args.pages, every):
            if browser is None or args.restart == "browser":
                if browser is not None:
                    await browser.close()
                browser = await playwright.chromium.launch(executable_path=args.browser,
                                                           args=FLAGS, headless=True)
            if context is not None:
                await context.close()
            context = await browser.new_context(viewport={"width": 1280, "height": 900})
            await context.add_init_script(TRACKER)
            await context.route("**/*", answer)
            todo = collections.deque(range(start, start + every))

            async def tab(context: BrowserContext, todo: collections.deque[int]) -> None:
                page, loaded = await context.new_page(), 0
                while todo:
                    number = todo.popleft()
                    if args.tab_pages and loaded == args.tab_pages:
                        await page.close()
                        page, loaded = await context.new_page(), 0
                    await page.goto(f"{origin}/p/{number}/", wait_until="domcontentloaded")
                    await page.evaluate(WAIT_CALM, [QUIET * 1000, 1000, 0])
                    loaded += 1

            await asyncio.gather(*(tab(context, todo) for _ in range(args.tabs)))
        elapsed = time.monotonic() - started
        assert browser is not None
        await browser.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1200)
    parser.add_argument("--tabs", type=int, default=8)
    parser.add_argument("--parallel", type=int, default=1,
                        help="browsers at once, each in its own process (as workers are)")
    parser.add_argument("--restart", choices=["none", "browser", "context"], default="none")
    parser.add_argument("--every", type=int, default=200)
    parser.add_argument("--tab-pages", type=int, default=0)
    parser.add_argument("--browser", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--origin", help=argparse.SUPPRESS)  # set for the --parallel copies
    parser.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.origin:  # one of --parallel's browsers
        asyncio.run(_load(args, args.origin, args.first))
        return
    with Nginx(spa(max(2000, args.pages * args.parallel)), 18433) as server:
        command = [sys.executable, __file__, "--origin", server.origin,
                   *[f"--{name.replace('_', '-')}={value}" for name, value in vars(args).items()
                     if name not in ("origin", "first", "parallel")]]
        started = time.monotonic()
        copies = [subprocess.Popen([*command, f"--first={n * args.pages}"])
                  for n in range(args.parallel)]
        seen: dict[int, tuple[str, float, int]] = {}
        peak: dict[str, int] = {}
        while any(copy.poll() is None for copy in copies):
            now: dict[int, tuple[str, float, int]] = {}
            for copy in copies:
                now.update(_sample(copy.pid))
            seen.update(now)
            memory: dict[str, int] = collections.Counter()
            for kind, _cpu, pss in now.values():
                memory[kind] += pss
            if sum(memory.values()) > sum(peak.values()):
                peak = memory
            time.sleep(0.5)
        wall = time.monotonic() - started
    cpu: dict[str, float] = collections.Counter()
    for kind, seconds, _pss in seen.values():
        cpu[kind] += seconds
    pages = args.pages * args.parallel
    print(f"{pages} pages, {args.parallel} browser(s) x {args.tabs} tabs, restart "
          f"{args.restart}/{args.every}, tab pages {args.tab_pages or 'unbounded'}: "
          f"{pages / wall:.1f} pages/s, {sum(cpu.values()) * 1000 / pages:.1f} ms CPU a page")
    print("  CPU (s): " + ", ".join(f"{kind} {seconds:.1f}" for kind, seconds in
                                     sorted(cpu.items(), key=lambda item: -item[1])))
    print(f"  peak memory {sum(peak.values())} MB (PSS): " + ", ".join(
        f"{kind} {mb}" for kind, mb in sorted(peak.items())))


if __name__ == "__main__":
    main()
