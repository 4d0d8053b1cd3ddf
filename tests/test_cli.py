"""The ``structgen`` command, as a user runs it."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

COMMAND = str(Path(sys.executable).with_name("structgen"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([COMMAND, *args], capture_output=True, text=True, cwd="/")


def test_vocab_shows_the_bundled_models_vocabulary() -> None:
    result = run("vocab", "--text", "héllo 😀")
    assert result.returncode == 0, result.stderr
    assert "byte-level BPE, 49152 token ids" in result.stdout
    assert "stop ids:         0 <|endoftext|>, 2 <|im_end|>" in result.stdout
    assert "every byte has a single-byte token: no, missing [4, 6, 19, 20, 22, 29, 241, 242]" in result.stdout
    assert "their bytes join to the text's UTF-8: yes" in result.stdout


def test_vocab_with_a_missing_model_fails_cleanly() -> None:
    result = run("vocab", "--model", "/nonexistent/model.gguf")
    assert result.returncode == 1
    assert result.stderr.strip() == "structgen vocab: /nonexistent/model.gguf: not a model folder or a .gguf file"


def test_no_command_prints_help() -> None:
    result = run()
    assert result.returncode == 2
    assert "usage: structgen" in result.stdout


def test_serve_backend_vllm_without_vllm_names_make_vllm_env() -> None:
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here (tests/vllm_engine/test_server_vllm.py serves with it)")
    result = run("serve", "--backend", "vllm", "--model", "/nonexistent/model")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "needs vLLM" in result.stderr and "make vllm-env" in result.stderr


def test_vllm_options_need_backend_vllm() -> None:
    result = run("serve", "--tensor-parallel-size", "2")
    assert result.returncode == 2 and "--tensor-parallel-size is a vLLM option: add --backend vllm" in result.stderr


@pytest.mark.model  # `structgen serve` loads the bundled model before it would serve
def test_serve_freezes_what_it_loaded_before_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full collection during a decoding step would otherwise rescan the model,
    the tokenizer and every library serving loaded."""
    import uvicorn

    from structgen.cli import main

    frozen: list[int] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: frozen.append(gc.get_freeze_count()))
    try:
        assert main(["serve", "--port", "0"]) == 0
    finally:
        gc.unfreeze()
    assert len(frozen) == 1 and frozen[0] > 100_000


def test_the_tool_syntax_choices_are_the_servers_syntaxes() -> None:
    """``structgen serve --tool-syntax``'s choices name every syntax the server has."""
    from structgen.cli import TOOL_SYNTAXES
    from structgen.server.syntax_choice import SYNTAXES

    assert sorted(TOOL_SYNTAXES) == sorted(SYNTAXES)
