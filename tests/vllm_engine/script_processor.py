"""The vLLM counterpart of tests/server/test_server.py's ``Script``: a logits processor
that makes the model prefer to write a given text (then stop), so that the same
test bodies drive a real model on vLLM. The grammar still decides what is allowed.

The text lives in the file named by ``STRUCTGEN_TEST_SCRIPT`` (no file: no bias),
read at every step, so a test in another process sets it; every request in the
batch is biased alike. At each biased step the processor notes how many tokens
the request has written (``ScriptFile.tokens_written``), so that a test counts
steps rather than seconds. vLLM loads the class by name in its engine process
(``structgen serve --backend vllm --logits-processors script_processor:ScriptProcessor``
with this folder on ``PYTHONPATH``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import torch
from vllm.v1.sample.logits_processor import AdapterLogitsProcessor

SCRIPT_FILE = "STRUCTGEN_TEST_SCRIPT"
BIAS = 1000.0
FAILING_REGEX = "injected-compile-failure"
"""A regex whose compile fails in the engine's workers (and only there): a fault
the server cannot see when it reads the request."""


class ScriptProcessor(AdapterLogitsProcessor):  # type: ignore[misc]
    def __init__(self, vllm_config: Any, device: torch.device, is_pin_memory: bool) -> None:
        super().__init__(vllm_config, device, is_pin_memory)
        from structgen.integrations.vllm import served_tokenizer

        self.tokenizer = served_tokenizer(vllm_config.model_config)
        self.path = Path(os.environ[SCRIPT_FILE])
        self.ends = self.tokenizer.eos_token_id
        _inject_a_compile_failure()

    def is_argmax_invariant(self) -> bool:
        return False

    def new_req_logits_processor(self, params: Any) -> Callable[[list[int], torch.Tensor], torch.Tensor]:
        def bias(output_ids: list[int], logits: torch.Tensor) -> torch.Tensor:
            try:
                text = self.path.read_text(encoding="utf-8")
            except FileNotFoundError:
                return logits
            ids = [t for t in output_ids if t >= 0]
            _note_tokens_written(self.path, len(ids))
            written = self.tokenizer.decode(ids)
            if text.startswith(written):
                rest = text[len(written) :]
                wanted = self.tokenizer.encode(rest, add_special_tokens=False)[0] if rest else self.ends
                logits[wanted] += BIAS
            return logits

        return bias


def _written_path(script: Path) -> Path:
    return script.with_name(script.name + ".written")


def _note_tokens_written(script: Path, count: int) -> None:
    written = _written_path(script)
    temporary = written.with_name(written.name + ".tmp")
    temporary.write_text(str(count), encoding="utf-8")
    temporary.replace(written)


def _inject_a_compile_failure() -> None:
    import structgen.integrations.vllm as integration

    compile_grammar = integration.compile
    if getattr(compile_grammar, "injected", False):
        return

    def compile_or_fail(grammar: Any, info: Any, **options: Any) -> Any:
        if getattr(grammar, "source", None) == ("regex", FAILING_REGEX):
            raise RuntimeError("injected compile failure")
        return compile_grammar(grammar, info, **options)

    compile_or_fail.injected = True  # type: ignore[attr-defined]
    integration.compile = compile_or_fail


class ScriptFile:
    """The test side: ``text`` set writes the file (atomically), None removes it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def text(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    @text.setter
    def text(self, value: str | None) -> None:
        _written_path(self.path).unlink(missing_ok=True)
        if value is None:
            self.path.unlink(missing_ok=True)
            return
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(value, encoding="utf-8")
        temporary.replace(self.path)

    @property
    def tokens_written(self) -> int | None:
        """How many tokens the request last biased had written at its latest step
        (None: no step biased since ``text`` was set)."""
        try:
            return int(_written_path(self.path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
