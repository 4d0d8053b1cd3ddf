"""`structgen serve --backend vllm`: the same OpenAI-compatible server on vLLM's engine,
through the official ``openai`` client, with tests/server/test_server.py's own test bodies.

One server for the module, started the way docs/vllm.md says (the bundled SmolLM2
converted by `make vllm-model`, on the CPU build of vLLM), served as tests/server/test_server.py's
``tiny`` model with its API key, so that its tests run unchanged. Where a body needs the
model to want something, ``script_processor.ScriptProcessor`` (a vLLM logits
processor, loaded with ``--logits-processors``) biases it as test_server's ``Script``
does; the grammar still decides what is allowed. Loopback only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import openai
import pytest

import test_server
from script_processor import FAILING_REGEX, SCRIPT_FILE, ScriptFile
from test_server import (  # noqa: F401 - collected here, against this module's fixtures
    ASK,
    KEY,
    MODEL,
    test_an_output_failing_the_after_check_is_an_error_not_a_200,
    test_auto_cannot_call_an_unknown_tool,
    test_auto_text_only,
    test_auto_text_then_call,
    test_bad_completions_are_400,
    test_bad_requests_are_400,
    test_chat_without_tools,
    test_concurrent_requests_are_not_mixed_up,
    test_guided_aliases,
    test_hostile_arguments_streamed_and_whole,
    test_invalid_json_body_is_400,
    test_models_and_health,
    test_parallel_calls,
    test_parallel_tool_calls_false_gives_one_call,
    test_parse_with_a_pydantic_model,
    test_response_format_json_schema,
    test_response_format_with_tools_is_an_answer_or_calls,
    test_stop_and_length,
    test_stream_holds_back_a_stop_string,
    test_stream_shape_for_tool_calls,
    test_stream_text_without_usage,
    test_streamed_choices,
    test_tool_choice_named,
    test_tool_choice_none_writes_text,
    test_tool_choice_required,
    test_tool_round_trip,
    wait_for_idle,
)
from test_server import client, script  # noqa: F401 - fixtures, on this module's ``live``
from test_server_responses import (  # noqa: F401 - /v1/responses: the same bodies, on this module's ``live``
    test_a_malformed_request_is_a_400_naming_the_field,
    test_a_required_function_call_and_its_round_trip,
    test_a_string_input_answers_a_message,
    test_allowed_tools_limit_the_calls,
    test_auto_text_then_a_call_and_a_named_choice,
    test_keys_models_and_unknown_ids,
    test_max_output_tokens_makes_it_incomplete,
    test_parse_with_a_pydantic_model,
    test_streamed_calls_and_parsed_output,
    test_streamed_text_events_in_order,
    test_the_format_holds_whatever_the_model_prefers,
    test_the_store_keeps_answers_for_get_and_previous_response_id,
)
from vllm_setup import free_port, wait_until_up
from waiting import wait_until

pytestmark = [pytest.mark.server, pytest.mark.model]

HERE = Path(__file__).resolve().parent


def serve_command(model_dir: Path, port: int, *extra: str) -> list[str]:
    """`structgen serve --backend vllm` on the converted bundled model, as docs/vllm.md runs it."""
    return [
        sys.executable, "-m", "structgen", "serve", "--backend", "vllm", "--model", str(model_dir.resolve()),
        "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32", "--enforce-eager", "--max-model-len", "2048",
        "--kv-cache-memory-bytes", str(1 << 30), *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def live(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[openai.OpenAI, ScriptFile, str]]:
    folder = tmp_path_factory.mktemp("serve-vllm")
    script = ScriptFile(folder / "script.txt")
    port = free_port()
    command = serve_command(
        model_dir, port, "--model-id", MODEL, "--api-key", KEY, "--logits-processors", "script_processor:ScriptProcessor"
    )
    # the engine's processes import the script processor by name: this folder on their path
    env = {**os.environ, SCRIPT_FILE: str(script.path), "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    log = (folder / "server.log").open("w")
    # from elsewhere than the checkout: `-m structgen` imports the installed package
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=folder, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(process, base, "structgen serve", log.name, pause=1)
        yield openai.OpenAI(base_url=f"{base}/v1", api_key=KEY, max_retries=0, timeout=120), script, f"{base}/v1"
    finally:
        process.send_signal(signal.SIGINT)  # uvicorn's shutdown: the app's lifespan stops vLLM
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def test_the_test_bodies_are_test_servers() -> None:
    assert test_chat_without_tools is test_server.test_chat_without_tools


def test_metrics_on_vllm(live: tuple[openai.OpenAI, ScriptFile, str]) -> None:
    """The request and token counters and the compile time; the batch and step
    histograms are the transformers backend's (vLLM steps its own batch)."""
    before, after = test_server.one_counted_request(live)
    assert after["structgen_compile_seconds_count"] == before["structgen_compile_seconds_count"] + 1
    assert after["structgen_queued_sequences"] == after["structgen_running_sequences"] == 0


def test_concurrent_schemas_on_vllm(live: tuple[openai.OpenAI, ScriptFile, str]) -> None:
    """Eight clients, each its own schema, whole and streamed at once: every answer
    valid and its own (test_server's schemas)."""
    from concurrent.futures import ThreadPoolExecutor

    import jsonschema

    client, _, _ = live

    def ask(index: int) -> None:
        schema = test_server.own_schema(index)
        for stream in (False, True):
            fields = {"response_format": {"type": "json_schema", "json_schema": {"name": f"c{index}", "schema": schema}}}
            reply = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=200, stream=stream, **fields)
            if stream:
                text = "".join(chunk.choices[0].delta.content or "" for chunk in reply if chunk.choices)
            else:
                text = reply.choices[0].message.content
            value = json.loads(text)
            jsonschema.validate(value, schema)
            assert value["id"] == f"client {index}"

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(ask, range(8)))


def test_text_completions_on_vllm(live: tuple[openai.OpenAI, ScriptFile, str], script: ScriptFile) -> None:
    """test_server's ``test_text_completions``, but with an enum of strings in the
    schema: SmolLM2, unlike the random tiny model, writes digits (``10.000...``)
    until ``max_tokens``."""
    test_server.check_text_completions(live, script, {"enum": ["one", "two"]})


@pytest.mark.parametrize("stream", [True, False])
def test_disconnect_aborts_the_vllm_request(live: tuple[openai.OpenAI, ScriptFile, str], script: ScriptFile, stream: bool) -> None:
    """A client gone mid-decode aborts its vLLM request: it leaves the batch long
    before its 400 tokens (the script processor counts the tokens at each step)."""
    client, _, base = live
    script.text = "word " * 400
    body = {"model": MODEL, "messages": ASK, "max_tokens": 400, "stream": stream}
    headers = {"Authorization": f"Bearer {KEY}"}
    try:
        if stream:
            test_server.hang_up_after_the_first_chunk(base, body, headers)
        else:  # the request, then a hang-up once a few tokens are written
            host, port = base.removeprefix("http://").removesuffix("/v1").split(":")
            payload = json.dumps(body).encode()
            with socket.create_connection((host, int(port))) as raw:
                raw.sendall(
                    f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {KEY}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n".encode() + payload
                )
                wait_until(lambda: (script.tokens_written or 0) >= 3, "the decode running")
        wait_for_idle(base)  # the cancelled request left vLLM's batch
        written = script.tokens_written
    finally:
        script.text = None
    assert written is not None and written < 300, written  # not decoded to its end
    assert client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=1).choices[0].finish_reason == "length"


def test_a_grammar_that_does_not_compile_is_a_400(client: openai.OpenAI) -> None:
    """A compile that fails in vLLM's workers (injected by the script processor) is
    the request's 400, before it reaches the engine, which goes on serving."""
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=5, extra_body={"guided_regex": FAILING_REGEX})
    assert isinstance(raised.value.body, dict) and "injected compile failure" in raised.value.body["message"]
    assert client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=1).choices[0].finish_reason == "length"


def test_a_structural_tag_is_a_400_on_vllm(client: openai.OpenAI) -> None:
    """The vLLM backend does not follow structural tags yet: a 400 naming the
    field, never a constraint dropped; the engine goes on serving."""
    tags = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<a>"], "tags": [
        {"begin": "<a>", "content": {"type": "json_schema", "json_schema": {"type": "integer"}}, "end": "</a>"}]}}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=5, response_format=tags)  # type: ignore[arg-type]
    assert isinstance(raised.value.body, dict) and raised.value.body["param"] == "response_format"
    assert "vLLM" in raised.value.body["message"]
    assert client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=1).choices[0].finish_reason == "length"


def test_serve_without_a_model_names_make_vllm_model(capsys: pytest.CaptureFixture[str]) -> None:
    from structgen.cli import main

    assert main(["serve", "--backend", "vllm"]) == 2
    assert "make vllm-model" in capsys.readouterr().err


def test_the_served_name_of_a_hub_model_is_its_full_id(tmp_path: Path) -> None:
    """Clients send the id they know: "org/name" stays whole; a local folder is named by its name."""
    from structgen.cli import _vllm_model_name

    assert _vllm_model_name("HuggingFaceTB/SmolLM2-135M-Instruct") == "HuggingFaceTB/SmolLM2-135M-Instruct"
    (tmp_path / "org" / "local-model").mkdir(parents=True)
    assert _vllm_model_name(str(tmp_path / "org" / "local-model")) == "local-model"
    assert _vllm_model_name(str(tmp_path / "org" / "local-model") + "/") == "local-model"
