"""structgen's masks inside vLLM: one batch, each request with its own constraint
(a Pydantic model, a JSON Schema, a regex, a lark grammar, a choice), and a
request without one beside them. Runs on the CPU with the bundled SmolLM2.

Run (after `make vllm-env`): .venv-vllm/bin/python examples/vllm_batch.py
docs/vllm.md says how to run the same on GPUs and several machines.
"""

from pydantic import BaseModel, Field
from vllm import LLM, SamplingParams

from structgen.integrations.vllm import StructgenLogitsProcessor, parse_output, structgen_args
from structgen.integrations.vllm_model import convert_bundled_model


class City(BaseModel):
    name: str = Field(max_length=30)
    country: str = Field(max_length=30)
    population: int = Field(ge=0, le=100_000_000)  # bounded: a small model may not stop writing digits


THREE_DICE = {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 6}, "minItems": 3, "maxItems": 3}


def main() -> None:
    model_dir = convert_bundled_model(".cache/smollm2-135m-instruct-f32")  # once; then cached
    llm = LLM(
        model=str(model_dir),
        dtype="float32",
        enforce_eager=True,
        logits_processors=[StructgenLogitsProcessor],
        max_model_len=1024,
        kv_cache_memory_bytes=1 << 30,  # on CPU, else vLLM claims most of the machine's memory
    )
    requests = [
        ("Describe Paris as JSON.", structgen_args(schema=City)),
        ("Roll three dice; reply with a JSON list.", structgen_args(schema=THREE_DICE)),
        ("A US phone number?", structgen_args(regex=r"\(\d{3}\) \d{3}-\d{4}")),
        ("Add two numbers.", structgen_args(grammar='start: NUMBER "+" NUMBER\nNUMBER: /[0-9]{1,4}/')),
        ("Is Paris in France?", structgen_args(choices=["yes", "no"])),
        ("Write a haiku about rain.", None),
    ]
    params = [SamplingParams(temperature=0, max_tokens=200 if args else 40, extra_args=args) for _, args in requests]
    outputs = llm.chat([[{"role": "user", "content": prompt}] for prompt, _ in requests], params)
    for (prompt, _), request_params, output in zip(requests, params, outputs):
        completion = output.outputs[0]
        print(f"{prompt}\n  {completion.text!r} ({completion.finish_reason})")
        if completion.finish_reason == "stop":  # complete: the grammar let it stop
            print(f"  -> {parse_output(request_params, completion.text)!r}")
    if outputs[0].outputs[0].finish_reason == "stop":
        print(City.model_validate_json(outputs[0].outputs[0].text))  # the Pydantic model itself


if __name__ == "__main__":  # vLLM starts its engine processes with spawn
    main()
