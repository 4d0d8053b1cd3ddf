"""Sections around a constrained answer: what a reasoning section and a structural
tag cost per step, against the same answer's own matcher.

On one vocabulary (DeepSeek's 128k by default), one thread:

- **reasoning**: ``ReasoningMatcher`` (``<think>`` opened by the prompt) over a
  JSON-Schema answer follows a text of about 200 tokens of thoughts, the end tag,
  ``"\\n\\n"`` and the answer; the answer alone follows the same answer with a plain
  ``Matcher``. The first mask builds the section's shared rows.
- **tagged calls**: ``auto`` tool calls as a structural tag (the server's
  ``grammars.tagged_calls``, Hermes envelope, two BFCL-like tools) follows text,
  a call, text and another call; the calls alone follow the same calls with the
  server's calls grammar (``calls_constraint``).

A step is a mask plus its token's accept. For each: the time to build the
matcher's shared tables (the rows its first steps need, with the section
grammars compiled; once per grammar and vocabulary, the vocabulary's own index
once per process), the first mask, then step p50 / p99 / max over the rest, per
part of the output.

Writes ``benchmarks/sections_results.json`` and ``benchmarks/SECTIONS.md``:
``python benchmarks/bench_sections.py [--vocab deepseek]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402  (puts tests/ on the path)
from bench_masks import machine  # noqa: E402

import structgen  # noqa: E402
from structgen.bitmask import allocate_token_bitmask  # noqa: E402
from structgen.generate import tokenizer_info_for  # noqa: E402
from structgen.matcher import Matcher  # noqa: E402
from structgen.reasoning import Reasoning  # noqa: E402
from structgen.reasoning_matcher import ReasoningMatcher  # noqa: E402
from structgen.tagged_matcher import TaggedMatcher  # noqa: E402
from structgen.tool_calls import ToolSet  # noqa: E402

ANSWER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40}, "days": {"type": "integer", "minimum": 1},
                                           "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city", "days", "unit"]}
ANSWER_TEXT = '{"city":"Paris","days":3,"unit":"celsius"}'
THOUGHTS = ("The user asks about the weather. I should look at which city is meant, how many days they want, "
            "and which unit fits a European user. Paris is the obvious reading; three days is what they said; "
            "celsius is the usual unit there. Let me also check that nothing else in the question changes this. ") * 2
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {
        "zone": {"type": "string", "enum": ["UTC", "CET", "PST"]}}, "required": ["zone"]}}},
]
CALL = '<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris","days":3}}\n</tool_call>'
CALL_2 = '<tool_call>\n{"name":"get_time","arguments":{"zone":"CET"}}\n</tool_call>'


def follow(matcher: Any, tokens: list[int], parts: list[str], size: int) -> dict[str, Any]:
    """Mask then accept each token; the seconds of each step, labelled by part."""
    bitmask = allocate_token_bitmask(1, size)
    times: dict[str, list[float]] = {}
    first = None
    for token_id, part in zip(tokens, parts):
        began = time.perf_counter()
        matcher.fill_next_token_bitmask(bitmask)
        if not matcher.accept_token(token_id):
            raise RuntimeError(f"token {token_id} refused in {part}")
        seconds = time.perf_counter() - began
        if first is None:
            first = seconds
            continue
        times.setdefault(part, []).append(seconds)
    row: dict[str, Any] = {"first_mask_ms": round(first * 1e3, 2) if first is not None else None}
    for part, values in times.items():
        row[part] = {"steps": len(values), "p50_us": round(statistics.median(values) * 1e6, 1),
                     "p99_us": round(float(np.percentile(values, 99)) * 1e6, 1), "max_us": round(max(values) * 1e6, 1)}
    return row


def labelled(tokenizer: Any, pieces: list[tuple[str, str]], vocab: list[bytes]) -> tuple[list[int], list[str]]:
    """The tokens of the pieces' text (tokenized whole), each labelled by the piece its first byte is in."""
    text = "".join(piece for piece, _ in pieces)
    ids = [int(i) for i in tokenizer.encode(text, add_special_tokens=False)]
    bounds, at = [], 0
    for piece, label in pieces:
        bounds.append((at, at + len(piece.encode()), label))
        at += len(piece.encode())
    labels, offset = [], 0
    for token_id in ids:
        labels.append(next(label for lo, hi, label in bounds if lo <= offset < hi))
        offset += len(vocab[token_id])
    return ids, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", default="deepseek", choices=["smollm2", "deepseek"])
    args = parser.parse_args()
    tokenizer = workloads.load_vocab(args.vocab, Path("/tmp"))
    info = tokenizer_info_for(tokenizer)
    began = time.perf_counter()
    results: dict[str, Any] = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "vocab": args.vocab,
                               "vocab_size": info.vocab_size, "command": " ".join(["python benchmarks/bench_sections.py"] + sys.argv[1:]),
                               "machine": machine()}

    answer = structgen.compile(structgen.Grammar.from_json_schema(ANSWER, whitespace="compact", closed_objects=True), info)
    ids, labels = labelled(tokenizer, [(THOUGHTS, "thinking"), ("</think>\n\n", "end tag"), (ANSWER_TEXT, "answer")],
                           info.decoded_vocab)
    built = time.perf_counter()
    reasoning = ReasoningMatcher(Reasoning(opened=True), Matcher(answer), info)
    results["reasoning"] = {"tables_ms": round((time.perf_counter() - built) * 1e3, 1)}
    results["reasoning"].update(follow(reasoning, ids, labels, info.vocab_size))
    alone, alone_labels = labelled(tokenizer, [(ANSWER_TEXT, "answer")], info.decoded_vocab)
    results["answer_alone"] = follow(Matcher(answer), alone, alone_labels, info.vocab_size)

    from structgen.server.grammars import calls_constraint, tagged_calls
    from structgen.server.tool_syntax import HERMES

    tools = list(ToolSet.read(TOOLS).tools.values())
    tagged = tagged_calls(HERMES, tools, True)
    assert tagged is not None and tagged.tags is not None
    ids, labels = labelled(tokenizer, [("Let me look that up for you.\n", "text"), (CALL, "call"),
                                       ("\nAnd the time there:\n", "text"), (CALL_2, "call")], info.decoded_vocab)
    built = time.perf_counter()
    matcher = TaggedMatcher(tagged.tags, info)
    results["tagged_calls"] = {"tables_ms": round((time.perf_counter() - built) * 1e3, 1)}
    results["tagged_calls"].update(follow(matcher, ids, labels, info.vocab_size))
    calls = calls_constraint(HERMES, tools, True)
    assert calls.grammar is not None
    ids, labels = labelled(tokenizer, [(CALL, "call")], info.decoded_vocab)
    results["calls_alone"] = follow(Matcher(structgen.compile(calls.grammar, info)), ids, labels, info.vocab_size)
    results["wall_s"] = round(time.perf_counter() - began, 1)
    (HERE / "sections_results.json").write_text(json.dumps(results, indent=2) + "\n")
    (HERE / "SECTIONS.md").write_text(markdown(results))
    print(markdown(results))


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        "# Sections benchmark: reasoning and structural tags",
        "",
        f"- date: {results['date']}; wall time {results['wall_s']} s",
        f"- command: `{results['command']}`",
        f"- machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}; structgen {m['structgen_commit']}",
        f"- vocabulary: {results['vocab']} ({results['vocab_size']} tokens)",
        "",
        "| matcher | tables (ms) | first mask (ms) | part | steps | p50 (µs) | p99 (µs) | max (µs) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in ("reasoning", "answer_alone", "tagged_calls", "calls_alone"):
        row = results[name]
        parts = [(k, v) for k, v in row.items() if isinstance(v, dict)]
        for index, (part, values) in enumerate(parts):
            first = row["first_mask_ms"] if index == 0 else ""
            tables = row.get("tables_ms", "") if index == 0 else ""
            lines.append(f"| {name if index == 0 else ''} | {tables} | {first} | {part} | {values['steps']} | {values['p50_us']} | "
                         f"{values['p99_us']} | {values['max_us']} |")
    lines += ["", "A step is a mask plus its token's accept. The tables are built when the matcher is made (in the server, while",
              "the request's grammars compile, before it joins the batch); the first mask is apart.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
