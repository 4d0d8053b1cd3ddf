"""``GET /metrics``: counters, gauges and histograms in Prometheus' text format.

A few dozen lines instead of a client library: the server's metrics are known in
advance, and the format (``# HELP``, ``# TYPE``, one ``name{labels} value`` line
a sample, histograms as cumulative ``_bucket{le=...}`` lines plus ``_sum`` and
``_count``) is small. Updated from the event loop and the scheduler thread, so
every update takes a lock.
"""

from __future__ import annotations

import math
import threading
from typing import Callable

from structgen.compiled_budget import BUDGET

Labels = tuple[tuple[str, str], ...]


class _Metric:
    kind = ""

    def __init__(self, name: str, help: str) -> None:
        self.name = name
        self.help = help
        self._lock = threading.Lock()

    def lines(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}", *self.samples()]

    def samples(self) -> list[str]:
        raise NotImplementedError


class Counter(_Metric):
    kind = "counter"

    def __init__(self, name: str, help: str) -> None:
        super().__init__(name, help)
        self._values: dict[Labels, float] = {}

    def add(self, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def samples(self) -> list[str]:
        with self._lock:
            values = sorted(self._values.items())
        return [f"{self.name}{_labels(key)} {_number(value)}" for key, value in values] or [f"{self.name} 0"]


class Gauge(_Metric):
    """A value read when scraped."""

    kind = "gauge"

    def __init__(self, name: str, help: str, read: Callable[[], float]) -> None:
        super().__init__(name, help)
        self._read = read

    def samples(self) -> list[str]:
        return [f"{self.name} {_number(self._read())}"]


class Histogram(_Metric):
    kind = "histogram"

    def __init__(self, name: str, help: str, buckets: tuple[float, ...]) -> None:
        super().__init__(name, help)
        self.buckets = tuple(sorted(buckets))
        self._counts = [0] * (len(self.buckets) + 1)  # the last: above every bound
        self._sum = 0.0

    def observe(self, value: float) -> None:
        index = next((i for i, bound in enumerate(self.buckets) if value <= bound), len(self.buckets))
        with self._lock:
            self._counts[index] += 1
            self._sum += value

    def samples(self) -> list[str]:
        with self._lock:
            counts, total = list(self._counts), self._sum
        lines, running = [], 0
        for bound, count in zip((*self.buckets, math.inf), counts):
            running += count
            lines.append(f'{self.name}_bucket{{le="{_number(bound)}"}} {running}')
        return [*lines, f"{self.name}_sum {_number(total)}", f"{self.name}_count {running}"]


SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SIZES = (1, 2, 4, 8, 16, 32, 64, 128)


class ServerMetrics:
    """Everything ``/metrics`` reports."""

    def __init__(self, queued: Callable[[], float], running: Callable[[], float]) -> None:
        self.requests = Counter("structgen_requests_total", "HTTP requests answered, by endpoint and status code.")
        self.prompt_tokens = Counter("structgen_prompt_tokens_total", "Prompt tokens of finished generations.")
        self.completion_tokens = Counter("structgen_completion_tokens_total", "Tokens generated.")
        self.compile_seconds = Histogram(
            "structgen_compile_seconds", "Turning a request's constraints into compiled grammars.", SECONDS
        )
        self.mask_seconds = Histogram(
            "structgen_mask_seconds", "Computing one step's token masks for the whole batch.", SECONDS
        )
        self.step_seconds = Histogram("structgen_step_seconds", "One decoding step (forward pass and sampling).", SECONDS)
        self.batch_size = Histogram("structgen_batch_size", "Sequences decoded together in one step.", SIZES)
        self.queued = Gauge("structgen_queued_sequences", "Sequences waiting for a place in the batch.", queued)
        self.running = Gauge("structgen_running_sequences", "Sequences in the running batch.", running)
        self._compiling = 0
        self._compiling_lock = threading.Lock()
        self.compiling = Gauge(
            "structgen_compiling_requests",
            "Requests whose constraints are being compiled (a compile past its time limit stops at its next check).",
            lambda: self._compiling,
        )
        self.compiled_bytes = Gauge(
            "structgen_compiled_grammar_bytes",
            "Bytes the kept compiled grammars' tables hold (Limits.max_compiled_bytes bounds them).",
            BUDGET.kept_bytes,
        )
        self.compiled_grammars = Gauge(
            "structgen_compiled_grammars", "Compiled grammars kept for reuse (Limits.max_compiled_grammars).",
            lambda: len(BUDGET),
        )

    def compiling_changed(self, by: int) -> None:
        """A compile thread started (+1) or ended (-1)."""
        with self._compiling_lock:
            self._compiling += by

    def render(self) -> str:
        metrics: list[_Metric] = [
            self.requests,
            self.prompt_tokens,
            self.completion_tokens,
            self.compile_seconds,
            self.mask_seconds,
            self.step_seconds,
            self.batch_size,
            self.queued,
            self.running,
            self.compiling,
            self.compiled_bytes,
            self.compiled_grammars,
        ]
        return "\n".join(line for metric in metrics for line in metric.lines()) + "\n"


def _labels(key: Labels) -> str:
    if not key:
        return ""
    escaped = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") for _, value in key)
    return "{" + ",".join(f'{name}="{value}"' for (name, _), value in zip(key, escaped)) + "}"


def _number(value: float) -> str:
    if value == math.inf:
        return "+Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))
