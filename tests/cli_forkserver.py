"""A fork server for the tests' CLI runs: ``python -m crawler`` in a process of its own,
without paying Python's imports for every run.

Importing the crawler costs about 0.35 s of CPU, and the suite runs the CLI about a
thousand times: most of its time on two cores. This process imports the modules once,
then forks a child per run; the child takes the run's arguments, environment, working
directory and files for stdin, stdout and stderr, and runs ``crawler.__main__`` as
``python -m crawler`` does, ending as that process would (``sys.exit`` codes, atexit
handlers, non-daemon threads joined, death by SIGINT after an unhandled Ctrl-C). What
depends on a fresh interpreter (start-up imports, signals during them) is tested with
plain subprocesses elsewhere (tests/e2e/test_startup.py, test_signals*).

Protocol, one JSON object a line: in, ``{"id", "args", "env", "cwd", "stdout",
"stderr"}``; out, ``{"id", "pid"}`` when the child is forked and ``{"id", "code"}``
when it has ended (``code`` as ``Popen.returncode``: ``-N`` for signal N).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import runpy
import selectors
import signal
import sys
import threading
import traceback

# The libraries a run loads lazily (every module of ours is imported by _preload).
PRELOAD = (
    "httpx", "aiohttp", "anyio", "anyio._backends._asyncio", "anyio.streams.memory",
    "anyio.streams.tls", "selectolax.lexbor", "rich.console", "rich.live", "protego",
    "tldextract", "lxml.etree", "ctypes",
)


def _child(request: dict, control: list[int]) -> None:
    """In the forked child: become ``python -m crawler ARGS`` and never return."""
    code: int = 1
    try:
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGALRM):
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in control:  # the requests and replies (0 and 1) are replaced below
            if fd > 2:
                os.close(fd)
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            target = os.open(path, flags, 0o600)
            if target != fd:
                os.dup2(target, fd)
                os.close(target)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [os.path.join(request["cwd"], "crawler", "__main__.py"), *request["args"]]
        try:
            runpy.run_module("crawler", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as stop:
            if stop.code is None:
                code = 0
            elif isinstance(stop.code, int):
                code = stop.code
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            traceback.print_exc()
            _flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:
            traceback.print_exc()
            code = 1
        with contextlib.suppress(BaseException):
            threading._shutdown()  # type: ignore[attr-defined]  # as the interpreter does
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        _flush()
    finally:
        os._exit(code & 0xFF if code >= 0 else 1)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _preload() -> None:
    """Every module of ours (a run imports most of them lazily: 70 ms a run that each
    child would pay again), and the libraries above; not pyarrow, whose
    import starts threads (a process forked after that may inherit a held lock)."""
    import pkgutil

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    for package in ("crawler", "sitemap_writer"):
        root = importlib.import_module(package)
        for found in pkgutil.walk_packages(root.__path__, package + "."):
            if found.name.endswith("__main__"):
                continue
            with contextlib.suppress(Exception):
                importlib.import_module(found.name)
    assert threading.active_count() == 1, "a preloaded module started a thread"


def main() -> None:
    # as ``python -m crawler`` run in the checkout: its modules before any installed copy
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    _preload()
    requests_in, replies_out = sys.stdin.buffer, sys.stdout.buffer
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    running: dict[int, str] = {}  # pid -> request id
    selector = selectors.DefaultSelector()
    selector.register(requests_in, selectors.EVENT_READ, "request")
    selector.register(wake_read, selectors.EVENT_READ, "child")

    def reply(message: dict) -> None:
        replies_out.write(json.dumps(message).encode() + b"\n")
        replies_out.flush()

    while True:
        for key, _events in selector.select():
            if key.data == "request":
                line = requests_in.readline()
                if not line:
                    return
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(request, [0, 1, wake_read, wake_write])
                running[pid] = request["id"]
                reply({"id": request["id"], "pid": pid})
            else:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_read, 512)
            while running:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                ended = running.pop(pid, None)
                if ended is not None:
                    reply({"id": ended, "code": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    main()
