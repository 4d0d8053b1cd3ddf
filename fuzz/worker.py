"""A worker process per fuzzer, killed from outside when a case overruns.

Compiled (mypyc) loops never look at signals and schema translation checks no
deadline, so the only sure time limit on one case is a separate process: the
parent waits ``timeout`` seconds for the answer, then kills the worker (a *hang*)
and starts a fresh one for the next case. A worker that dies (a segfault, the
memory limit) is a *crash*. The worker's setup (a tokenizer, a live server) is
done once, outside any case's time.
"""

from __future__ import annotations

import faulthandler
import importlib
import multiprocessing
import os
import re
import signal
import tempfile
import time
import sys
import traceback
import warnings
from multiprocessing.connection import Connection
from typing import Any

SETUP_SECONDS = 300.0
MEMORY_LIMIT = 8 << 30
"""Address space of a worker that loads no model: a case past it is a
``MemoryError`` (a failure) rather than the machine's memory gone."""


_STACKS: Any = None  # the file faulthandler writes this worker's stack to (kept open)


def _serve(conn: Connection, name: str, path: list[str], stacks: str) -> None:
    global _STACKS
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it kills its workers
    _STACKS = open(stacks, "w", encoding="utf-8")  # noqa: SIM115 (open for the process's life)
    faulthandler.enable(_STACKS)  # a crash writes where it was
    faulthandler.register(signal.SIGUSR1, _STACKS, all_threads=True)  # so does a hang, asked before the kill
    sys.path[:0] = [p for p in path if p not in sys.path]
    warnings.simplefilter("ignore")
    from common import Failure, Slow

    module = importlib.import_module(f"{name}_fuzz")
    if not getattr(module, "LOADS_MODEL", False):
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        except (ImportError, ValueError, OSError):
            pass
    try:
        state = module.setup()
    except Exception:  # noqa: BLE001 (reported to the parent, which gives up this fuzzer)
        conn.send(("setup-failed", traceback.format_exc()))
        return
    conn.send(("ready", None))
    while True:
        try:
            case = conn.recv()
        except EOFError:
            return
        if case is None:
            break
        try:
            answer: tuple[str, Any] = ("ok", module.check(state, case) or {})
        except Slow as exc:
            answer = ("slow", str(exc))
        except Failure as exc:
            detail = exc.detail if isinstance(exc.detail, dict) else {"detail": exc.detail}
            answer = ("fail", {"kind": exc.kind, "key": exc.key, "message": exc.message,
                               "traceback": detail.pop("traceback", None) or traceback.format_exc(), "detail": detail})
        except BaseException as exc:  # noqa: BLE001 (an exception no check caught: the fuzzer's or the library's)
            answer = ("fail", {"kind": "exception", "message": f"{type(exc).__name__}: {exc}"[:2000],
                               "traceback": traceback.format_exc(), "detail": {}})
        try:
            conn.send(answer)
        except (OSError, TypeError, ValueError):
            conn.send(("fail", {"kind": "harness", "message": "the check's answer could not be sent",
                                "traceback": traceback.format_exc(), "detail": {}}))
    teardown = getattr(module, "teardown", None)
    if teardown is not None:
        teardown(state)


class Worker:
    """``call(case, timeout)`` runs ``<name>_fuzz.check(setup(), case)`` in the
    worker: ``(status, payload)`` with status ``ok``, ``slow``, ``fail``,
    ``hang`` (no answer in time: the worker killed) or ``crash`` (it died)."""

    def __init__(self, name: str, path: list[str]) -> None:
        self.name = name
        self.path = path
        self.process: Any = None
        self.conn: Connection | None = None
        handle, self.stacks = tempfile.mkstemp(prefix=f"structgen-fuzz-{name}-", suffix=".txt")
        os.close(handle)

    def start(self) -> None:
        context = multiprocessing.get_context("spawn")  # nothing inherited from the parent's heap
        parent, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, self.name, self.path, self.stacks), daemon=True)
        self.process.start()
        child.close()
        if not parent.poll(SETUP_SECONDS):
            self.kill()
            raise RuntimeError(f"the {self.name} fuzzer's worker did not start in {SETUP_SECONDS:g} s")
        try:
            status, payload = parent.recv()
        except EOFError:
            self.kill()
            raise RuntimeError(f"the {self.name} fuzzer's worker died while starting") from None
        if status != "ready":
            self.kill()
            raise RuntimeError(f"the {self.name} fuzzer's setup failed:\n{payload}")
        self.conn = parent

    def call(self, case: dict[str, Any], timeout: float) -> tuple[str, Any]:
        if self.conn is None:
            self.start()
        conn = self.conn
        assert conn is not None
        try:
            conn.send(case)
            if conn.poll(timeout):
                return conn.recv()
        except (EOFError, OSError):
            if self.process is not None:
                self.process.join(5)
            code = self.process.exitcode if self.process is not None else None
            self.kill()
            return "crash", {"kind": "crash", "message": f"the worker process died (exit code {code})",
                             "traceback": self._stack(), "detail": {}}
        if self.process is not None and self.process.pid is not None:
            try:
                os.kill(self.process.pid, signal.SIGUSR1)  # faulthandler writes the stack it is stuck in
                time.sleep(1.0)
            except OSError:
                pass
        self.kill()
        return "hang", {"kind": "hang", "message": f"no answer in {timeout:g} s: the worker was killed",
                        "traceback": self._stack(), "detail": {}}

    def _stack(self) -> str:
        """The worker's last stack as faulthandler wrote it, as a traceback reads
        (most recent call last): the thread that was running, or the first one."""
        try:
            with open(self.stacks, encoding="utf-8", errors="replace") as dumped:
                text = dumped.read()
        except OSError:
            return ""
        blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", text.strip())
        block = next((b for b in reversed(blocks) if b.startswith("Current thread")), blocks[-1] if blocks else "")
        frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', block)
        lines = [f'  File "{path}", line {line}, in {func}' for path, line, func in reversed(frames)]
        return "Traceback of the worker when it stopped (most recent call last):\n" + "\n".join(lines) + "\n"

    def kill(self) -> None:
        """Kill the worker; the next call starts a fresh one (with an empty stack file)."""
        if self.process is not None and self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        if self.conn is not None:
            self.conn.close()
        self.process, self.conn = None, None

    def close(self) -> None:
        """Let the worker end on its own (its teardown: a server stopped), then kill."""
        if self.conn is not None and self.process is not None:
            try:
                self.conn.send(None)
                self.process.join(15)
            except (OSError, BrokenPipeError):
                pass
        self.kill()
        try:
            os.unlink(self.stacks)
        except OSError:
            pass
