"""The vLLM example and benchmark scripts start (their imports resolve) without
running a model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]


def test_the_benchmark_finds_its_requests() -> None:
    # run from elsewhere: the script must find tests/vllm_engine/schema_requests.py itself
    done = subprocess.run(
        [sys.executable, str(CHECKOUT / "benchmarks" / "bench_vllm.py"), "--help"],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--repeats" in done.stdout


def test_the_serve_example_is_valid_bash() -> None:
    done = subprocess.run(["bash", "-n", str(CHECKOUT / "examples" / "serve_vllm.sh")], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
