"""A worker process that runs one task at a time and is killed when a task overruns.

Compiled (mypyc) loops never look at signals, so an alarm cannot stop a hanging
compile: the only real time limit is a separate process, killed from outside.
The worker's setup (loading a 128k vocabulary, say) is done once and not timed;
after a kill a fresh worker is started and set up again.
"""

from __future__ import annotations

import multiprocessing
import signal
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

SETUP_TIMEOUT_S = 600.0
TIMEOUT = "timeout"
CRASH = "crash"


def _serve(conn: Connection, setup: Callable[..., Any], run: Callable[[Any, Any], Any], args: tuple[Any, ...]) -> None:
    # Ctrl-C and a time limit's SIGTERM reach the whole process group: the parent
    # alone handles them (it keeps what is done and kills its workers)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    state = setup(*args)
    conn.send("ready")
    while True:
        try:
            task = conn.recv()
        except EOFError:  # the parent is gone
            return
        if task is None:
            return
        try:
            answer = ("ok", run(state, task))
        except Exception:  # noqa: BLE001 (reported to the parent as a crash of this task)
            answer = (CRASH, traceback.format_exc(limit=6))
        try:
            conn.send(answer)
        except OSError:  # the parent is gone
            return


class Worker:
    """``call(task, timeout)`` runs ``run(setup(*args), task)`` in the worker and
    returns ``("ok", result)``, ``("timeout", None)`` or ``("crash", message)``
    (an exception, or the process dying)."""

    def __init__(self, setup: Callable[..., Any], run: Callable[[Any, Any], Any], *args: Any) -> None:
        self.target = (setup, run, args)
        self.process: Any = None
        self.conn: Connection | None = None

    def _start(self) -> Connection:
        context = multiprocessing.get_context("spawn")  # nothing inherited from the parent's heap
        parent, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, *self.target), daemon=True)
        self.process.start()
        child.close()
        if not parent.poll(SETUP_TIMEOUT_S):
            self.close()
            raise RuntimeError("the conformance worker did not start")
        parent.recv()
        self.conn = parent
        return parent

    def call(self, task: Any, timeout_s: float) -> tuple[str, Any]:
        conn = self.conn or self._start()
        try:
            conn.send(task)
            if conn.poll(timeout_s):
                status, result = conn.recv()
                return status, result
        except (EOFError, OSError, BrokenPipeError):
            self.kill()
            return CRASH, "the worker process died"
        self.kill()
        return TIMEOUT, None

    def kill(self) -> None:
        # taken first: a run stopped from the main thread kills workers a thread may be killing too
        process, self.process, self.conn = self.process, None, None
        if process is not None:
            process.kill()
            process.join()

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send(None)
            except OSError:
                pass
        if self.process is not None:
            self.process.join(timeout=10)
        self.kill()
