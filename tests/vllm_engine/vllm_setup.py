"""What the vLLM tests set up alike: an offline ``vllm.LLM`` with structgen's
processor, and a server started in its own process (loopback only)."""

from __future__ import annotations

import socket
import subprocess
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from waiting import wait_until

if TYPE_CHECKING:
    from vllm import LLM

STARTUP_SECONDS = 300


def structgen_llm(model_dir: Path, **settings: Any) -> LLM:
    """A ``vllm.LLM`` on the converted bundled model (float32, eager, seed 0) with
    structgen's logits processor; ``settings`` are the test's own engine arguments."""
    from vllm import LLM

    from structgen.integrations.vllm import StructgenLogitsProcessor

    return LLM(
        model=str(model_dir),
        dtype="float32",
        enforce_eager=True,
        logits_processors=[StructgenLogitsProcessor],
        seed=0,
        **settings,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(process: subprocess.Popen[Any], base: str, name: str, log: str, pause: float) -> None:
    """Until ``base``'s ``/health`` answers, asked every ``pause`` seconds, at most
    ``STARTUP_SECONDS / pause`` times; fails when the server (``name``, writing to
    ``log``) exits or has not answered by then."""

    def up() -> bool:
        assert process.poll() is None, f"{name} exited; see {log}"
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5):
                return True
        except OSError:
            return False

    wait_until(up, f"{name} answering /health (see {log})", tries=int(STARTUP_SECONDS / pause), pause=pause)
