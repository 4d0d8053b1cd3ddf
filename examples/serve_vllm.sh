#!/usr/bin/env bash
# `structgen serve --backend vllm` (docs/vllm.md): the OpenAI-compatible server on
# vLLM's engine, here on the CPU build with the bundled SmolLM2; then a forced tool
# call and a JSON answer through the official openai client.
#
#   make vllm-env vllm-model && examples/serve_vllm.sh
#
# On a GPU machine drop --dtype/--enforce-eager/--kv-cache-memory-bytes and add e.g.
# --tensor-parallel-size 4 --gpu-memory-utilization 0.9 (docs/vllm.md).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-vllm/bin/structgen ] || [ ! -f .cache/smollm2-135m-instruct-f32/structgen-source.json ]; then
    echo "first: make vllm-env vllm-model" >&2
    exit 1
fi
PORT="${PORT:-8001}"
.venv-vllm/bin/structgen serve --backend vllm --model .cache/smollm2-135m-instruct-f32 --model-id smollm2 \
    --port "$PORT" --dtype float32 --enforce-eager --max-model-len 2048 --kv-cache-memory-bytes $((1 << 30)) &
SERVER=$!
trap 'kill -INT $SERVER 2>/dev/null; wait $SERVER' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do
    kill -0 $SERVER 2>/dev/null || { echo "the server exited" >&2; exit 1; }
    sleep 2
done
PORT="$PORT" .venv-vllm/bin/python - <<'PY'
import os

import openai
from pydantic import BaseModel, Field


class GetWeather(BaseModel):
    """The current weather in a city."""

    city: str = Field(max_length=40)


class Answer(BaseModel):
    city: str = Field(max_length=40)
    warm: bool


client = openai.OpenAI(base_url=f"http://127.0.0.1:{os.environ['PORT']}/v1", api_key="unused")
ask = [{"role": "user", "content": "What is the weather in Paris?"}]
tools = [openai.pydantic_function_tool(GetWeather, name="get_weather")]
reply = client.chat.completions.create(model="smollm2", messages=ask, tools=tools, tool_choice="required", parallel_tool_calls=False, max_tokens=60)
call = reply.choices[0].message.tool_calls[0]
print(f"tool call: {call.function.name}({call.function.arguments})  finish_reason={reply.choices[0].finish_reason}")
parsed = client.chat.completions.parse(model="smollm2", messages=ask, response_format=Answer, max_tokens=60)
print(f"parsed:    {parsed.choices[0].message.parsed!r}")
PY
