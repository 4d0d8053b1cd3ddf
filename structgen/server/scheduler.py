"""Continuous batching: one thread owns the model and one running batch.

Requests come as jobs (a request's sequences: ``n`` choices, or one per prompt)
and wait in a queue; between two decoding steps, waiting jobs join the batch as
long as it holds at most ``max_batch`` sequences, and sequences that finished —
or whose client went away — leave it. A job resolves its future once all its
sequences finished. The decoder computes the whole batch's masks on its mask
worker while the forward pass runs.

A failure that is one sequence's own (its mask, its token, its jump-forward: the
decoder ends that sequence with ``Sequence.error``) fails its job alone; the
other jobs go on in the same batch. Only a step that fails as a whole (the
forward pass) fails every job in it.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

from structgen.decoding import Batch, Decoder, Sequence, StepStats

log = logging.getLogger("structgen.server")


@dataclass(eq=False)
class Job:
    """One request's sequences, decoded together in the shared batch."""

    sequences: list[Sequence]
    on_step: Callable[[list[Sequence]], None] | None = None  # after each step, on the scheduler thread
    cancel: threading.Event = field(default_factory=threading.Event)
    done: Future[list[Sequence]] = field(default_factory=Future)

    @property
    def finished(self) -> bool:
        return all(s.done for s in self.sequences)

    @property
    def error(self) -> Exception | None:
        """Why one of the job's sequences failed (the decoder ended it alone), if one did."""
        return next((s.error for s in self.sequences if s.error is not None), None)


class Scheduler:
    """Steps the running batch on its own thread; jobs join and leave between steps."""

    def __init__(self, decoder: Decoder, max_batch: int, observe: Callable[[StepStats], None] | None = None) -> None:
        """``observe`` sees each step's numbers (for metrics), on the scheduler thread."""
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        self.decoder = decoder
        self.max_batch = max_batch
        self._observe = observe
        self._waiting: deque[Job] = deque()
        self._running: list[Job] = []
        self._batch = Batch()
        self._wake = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="structgen-scheduler", daemon=True)
        self._thread.start()

    @property
    def queued(self) -> int:
        """Sequences waiting for a place in the batch."""
        with self._wake:
            return sum(len(job.sequences) for job in self._waiting)

    @property
    def running(self) -> int:
        """Sequences in the batch (finished ones leave at the next step)."""
        with self._wake:
            return sum(sum(not s.done for s in job.sequences) for job in self._running)

    def submit(self, job: Job) -> None:
        if len(job.sequences) > self.max_batch:
            raise ValueError(f"{len(job.sequences)} sequences do not fit a batch of at most {self.max_batch}")
        with self._wake:
            self._waiting.append(job)
            self._wake.notify()

    def cancel(self, job: Job) -> None:
        """Stop ``job``: its sequences leave the batch before the next forward pass."""
        job.cancel.set()
        with self._wake:
            self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._stopping and not self._waiting and not self._running:
                    self._wake.wait()
                if self._stopping:
                    self._fail_all(RuntimeError("the server is shutting down"))
                    return
                joining = self._admit()
            try:
                self._step(joining)
            except Exception as exc:  # the batch is lost: every job in it fails
                log.exception("a decoding step failed")
                for job in list(self._running):
                    self._fail(job, exc)
                self._batch = Batch()

    def _admit(self) -> list[Job]:
        """Cancelled waiting jobs end here; then jobs join in order while the batch has
        room (and only an empty batch when its cache's layout cannot take more rows:
        ``Decoder.can_join``)."""
        for job in [j for j in self._waiting if j.cancel.is_set()]:
            self._waiting.remove(job)
            for sequence in job.sequences:
                sequence.finish_reason = "cancelled"
            job.done.set_result(job.sequences)
        joining: list[Job] = []
        if not self.decoder.can_join(self._batch):
            return joining  # the batch's cache cannot take more rows: wait until it drains
        room = self.max_batch - sum(sum(not s.done for s in job.sequences) for job in self._running)
        while self._waiting and len(self._waiting[0].sequences) <= room:
            job = self._waiting.popleft()
            room -= len(job.sequences)
            joining.append(job)
        self._running.extend(joining)
        return joining

    def _step(self, joining: list[Job]) -> None:
        for job in self._running:
            if job.cancel.is_set():
                for sequence in job.sequences:
                    if not sequence.done:
                        sequence.finish_reason = "cancelled"
        stats = self.decoder.step(self._batch, [s for job in joining for s in job.sequences])
        if stats is not None and self._observe is not None:
            self._observe(stats)
        for job in list(self._running):
            error = job.error
            if error is not None:  # one of its sequences failed: this job alone fails
                log.error("a sequence failed; its request fails alone", exc_info=error)
                self._fail(job, error)
                continue
            if job.on_step is not None and not job.cancel.is_set():
                try:
                    job.on_step(job.sequences)
                except Exception as exc:  # the job's own listener failed: only the job fails
                    log.exception("a stream update failed")
                    self._fail(job, exc)
                    continue
            if job.finished:
                self._finish(job)

    def _finish(self, job: Job) -> None:
        with self._wake:
            self._running.remove(job)
        job.done.set_result(job.sequences)

    def _fail(self, job: Job, exc: Exception) -> None:
        for sequence in job.sequences:
            if not sequence.done:
                sequence.finish_reason = "cancelled"
        with self._wake:
            self._running.remove(job)
        job.done.set_exception(exc)

    def _fail_all(self, exc: Exception) -> None:
        """Every job, queued or running, fails (called holding the lock)."""
        for job in [*self._waiting, *self._running]:
            if not job.done.done():
                job.done.set_exception(exc)
        self._waiting.clear()
        self._running.clear()
