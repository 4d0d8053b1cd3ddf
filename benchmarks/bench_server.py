"""Load test of the OpenAI-compatible server on the bundled SmolLM2 (docs/server.md).

16 official ``openai`` clients send 10 requests each at once against a live
server (continuous batching: one shared decoding batch), then one client sends a
sample of the same requests one at a time. Every answer is checked against its
own request — a JSON answer valid for that request's schema, whose ``id`` is the
request's own; a tool call of that request's tool with valid arguments — so
nothing may be lost or mixed up. Reported: latency p50/p99 and throughput
(requests and generated tokens per second) both ways, and the batch sizes the
server decoded (from ``/metrics``).

Run: .venv/bin/python benchmarks/bench_server.py [--clients 16] [--requests 10] [--out benchmarks/server_results.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent

PARAGRAPHS = [
    "Maria Lopez is a 34-year-old software engineer on the payments team. She lives in Lisbon.",
    "Order 1042: three Aurora desk lamps at 49.90 each, in stock; contact sam@example.com.",
    "The design review is on 2025-03-14 in room 4; Ana, Bo and Chen will attend, Dee is optional.",
    "Flight LH 1234 from Frankfurt to Lisbon leaves at 09:40 from gate B12 and lands at 11:35.",
]

SAMPLING = {"temperature": 0, "max_tokens": 160, "extra_body": {"repetition_penalty": 1.3}}


def schema_for(request_id: str) -> dict[str, Any]:
    """The request's own schema: its ``id`` is a constant only this request has.
    No ``maxLength``: bounded strings take seconds to compile (a lexer state per
    character), and every request here brings a schema never seen before."""
    return {
        "type": "object",
        "properties": {
            "id": {"const": request_id},
            "title": {"type": "string"},
            "people": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
            "kind": {"enum": ["meeting", "order", "travel", "person"]},
            "count": {"type": "integer", "minimum": 0, "maximum": 1000},
        },
        "required": ["id", "title", "people", "kind", "count"],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Request:
    """One request of the workload: JSON whole, JSON streamed, or a named tool call."""

    client: int
    index: int

    @property
    def id(self) -> str:
        return f"c{self.client}-r{self.index}"

    @property
    def kind(self) -> str:
        return ("json", "stream", "tool")[(self.client + self.index) % 3]

    def messages(self) -> list[dict[str, str]]:
        paragraph = PARAGRAPHS[(self.client + self.index) % len(PARAGRAPHS)]
        return [{"role": "user", "content": f"Describe this as JSON with id {self.id}.\n{paragraph}"}]


@dataclass
class Answer:
    request: Request
    seconds: float
    completion_tokens: int
    value: Any  # the JSON answer or the call's arguments, parsed


def ask(client: Any, model: str, request: Request) -> Answer:
    """Send ``request``; its answer, checked against the request's own schema."""
    import jsonschema

    schema = schema_for(request.id)
    started = time.perf_counter()
    if request.kind == "tool":
        tool = {"type": "function", "function": {"name": "record", "parameters": schema}}
        reply = client.chat.completions.create(
            model=model, messages=request.messages(), tools=[tool], tool_choice={"type": "function", "function": {"name": "record"}}, **SAMPLING
        )
        [call] = reply.choices[0].message.tool_calls
        assert call.function.name == "record"
        text, tokens = call.function.arguments, reply.usage.completion_tokens
    else:
        response_format = {"type": "json_schema", "json_schema": {"name": "record", "schema": schema, "strict": True}}
        if request.kind == "stream":
            stream = client.chat.completions.create(
                model=model, messages=request.messages(), response_format=response_format, stream=True, stream_options={"include_usage": True}, **SAMPLING
            )
            text, tokens = "", 0
            for chunk in stream:
                if chunk.choices:
                    text += chunk.choices[0].delta.content or ""
                if chunk.usage is not None:
                    tokens = chunk.usage.completion_tokens
        else:
            reply = client.chat.completions.create(model=model, messages=request.messages(), response_format=response_format, **SAMPLING)
            text, tokens = reply.choices[0].message.content, reply.usage.completion_tokens
    seconds = time.perf_counter() - started
    value = json.loads(text)
    jsonschema.validate(value, schema)
    assert value["id"] == request.id, f"{request.id} got the answer of {value['id']}"
    return Answer(request, seconds, tokens, value)


def run(client: Any, model: str, requests: list[Request], concurrency: int) -> tuple[list[Answer], float]:
    """Each client's requests in order, ``concurrency`` clients at once."""
    by_client: dict[int, list[Request]] = {}
    for request in requests:
        by_client.setdefault(request.client, []).append(request)

    def one_client(own: list[Request]) -> list[Answer]:
        return [ask(client, model, request) for request in own]

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        answers = [a for batch in pool.map(one_client, by_client.values()) for a in batch]
    return answers, time.perf_counter() - started


def summary(answers: list[Answer], seconds: float) -> dict[str, Any]:
    latencies = sorted(a.seconds for a in answers)
    tokens = sum(a.completion_tokens for a in answers)
    return {
        "requests": len(answers),
        "seconds": round(seconds, 2),
        "completion_tokens": tokens,
        "requests_per_second": round(len(answers) / seconds, 3),
        "tokens_per_second": round(tokens / seconds, 1),
        "latency_p50_s": round(statistics.median(latencies), 3),
        "latency_p99_s": round(latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))], 3),
    }


def scrape(base: str) -> dict[str, float]:
    import httpx2

    samples = {}
    for line in httpx2.get(base.removesuffix("/v1") + "/metrics").text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def batch_sizes(before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    steps = after["structgen_batch_size_count"] - before["structgen_batch_size_count"]
    total = after["structgen_batch_size_sum"] - before["structgen_batch_size_sum"]
    return {"steps": int(steps), "mean_batch_size": round(total / steps, 2) if steps else 0.0}


@contextmanager
def serving(model_id: str, max_batch: int, max_requests: int, device: str, threads: int) -> Iterator[str]:
    """``structgen serve`` in its own process, as clients meet it (16 client threads
    in the server's process would contend for its GIL), with ``threads`` torch
    threads; yields its base URL."""
    import httpx2

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).with_name("structgen")), "serve", "--port", str(port), "--model-id", model_id]
    command += ["--max-batch", str(max_batch), "--max-requests", str(max_requests), "--device", device]
    environment = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    try:
        while True:
            assert server.poll() is None, "structgen serve exited"
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    break
            except httpx2.TransportError:
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=10, help="per client")
    parser.add_argument("--one-at-a-time", type=int, default=32, help="how many of the requests to also send one at a time")
    parser.add_argument("--max-batch", type=int, default=16)
    parser.add_argument("--device", default="auto")
    parser.add_argument(
        "--threads", type=int, default=1, help="the server's torch threads (1: on a shared CPU, OpenMP threads spin-waiting for a busy core make every step slow)"
    )
    parser.add_argument("--out", type=Path, default=HERE / "server_results.json")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning, module="structgen")
    os.environ.setdefault("TQDM_DISABLE", "1")
    import openai
    import torch

    import structgen

    name = "smollm2"
    with serving(name, args.max_batch, 4 * args.clients, args.device, args.threads) as base:
        client = openai.OpenAI(base_url=base, api_key="none", max_retries=0, timeout=1800)
        requests = [Request(c, i) for c in range(args.clients) for i in range(args.requests)]
        ask(client, name, Request(-1, 0))  # warm up
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        before = scrape(base)
        together, together_seconds = run(client, name, requests, args.clients)
        after = scrape(base)
        sample = requests[:: max(1, len(requests) // args.one_at_a_time)][: args.one_at_a_time]
        alone, alone_seconds = run(client, name, sample, 1)

    same = {a.request: a.value for a in together}
    concurrent = summary(together, together_seconds)
    sequential = summary(alone, alone_seconds)
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"server with {args.threads} torch thread(s), device {args.device}; load average {load} before the run (a shared machine)",
        "model": structgen.bundled_model_path().name,
        "workload": f"{args.clients} clients x {args.requests} requests (JSON whole, JSON streamed, named tool call in turn), "
        f"greedy, max_tokens {SAMPLING['max_tokens']}, max_batch {args.max_batch}",
        "checked": f"{len(together)} of {len(requests)} answers valid for their own request's schema and id",
        "concurrent": {**concurrent, **batch_sizes(before, after)},
        "one_at_a_time": sequential,
        "throughput_gain": round(concurrent["tokens_per_second"] / sequential["tokens_per_second"], 2),
        "same_answer_as_one_at_a_time": f"{sum(a.value == same[a.request] for a in alone)} of {len(alone)}",
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
