"""``POST /v1/completions``: text after a raw prompt (no chat template), whole or streamed.

A prompt is text or token ids, or a list of them; each gets ``n`` choices,
numbered prompt by prompt (OpenAI's order). The content constraints are the
chat endpoint's (``response_format``, ``guided_*``). No tools here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, AsyncIterator

from structgen.decoding import Sequence

from structgen.server.engine import Engine, Handle
from structgen.server.errors import bad_request
from structgen.server.grammars import OutputPlan
from structgen.server.metrics import ServerMetrics
from structgen.server.output import Reading, check_output
from structgen.server.protocol import Completion, CompletionChoice, CompletionRequest, Usage
from structgen.server.serving import Updates
from structgen.server.sse import event, guarded
from structgen.server.tool_syntax import hold_back

DEFAULT_MAX_TOKENS = 16
"""OpenAI's default for text completions (chat's is the model's room)."""


def prompt_ids(request: CompletionRequest, tokenizer: Any, vocab_size: int) -> list[list[int]]:
    """Each prompt's token ids (text is tokenized as the model's tokenizer does by default)."""
    for field, given in (("echo", request.echo), ("suffix", request.suffix), ("logprobs", request.logprobs)):
        if given:
            raise bad_request(f"{field} is not supported", field)
    if request.best_of is not None and request.best_of != request.n:
        raise bad_request("best_of is not supported (other than equal to n)", "best_of")
    prompts = request.prompts()
    if not prompts:
        raise bad_request("prompt must not be empty", "prompt")
    out = []
    for index, prompt in enumerate(prompts):
        ids = [int(i) for i in tokenizer(prompt)["input_ids"]] if isinstance(prompt, str) else prompt
        if not ids:
            raise bad_request(f"prompt {index} is empty", "prompt")
        if not all(0 <= i < vocab_size for i in ids):
            raise bad_request(f"prompt {index} has token ids outside the vocabulary (0 to {vocab_size - 1})", "prompt")
        out.append(ids)
    return out


@dataclass
class CompletionReply:
    id: str
    created: int
    model: str
    engine: Engine
    plan: OutputPlan
    stops: tuple[str, ...]
    n: int
    metrics: ServerMetrics

    def completion(self, sequences: list[Sequence]) -> Completion:
        choices = [
            CompletionChoice(index=index, text=self._text(sequence), finish_reason=_reason(sequence))
            for index, sequence in enumerate(sequences)
        ]
        return Completion(id=self.id, created=self.created, model=self.model, choices=choices, usage=self._usage(sequences))

    def events(self, handle: Handle, updates: Updates, include_usage: bool) -> AsyncIterator[str]:
        """The stream of chunks, ended and guarded as every stream is (``sse.guarded``)."""
        return guarded(self.id, self._chunks(handle, updates, include_usage), handle.cancel)

    async def _chunks(self, handle: Handle, updates: Updates, include_usage: bool) -> AsyncIterator[str]:
        sent = [0] * len(handle.job.sequences)
        async for texts in updates:
            for index, text in enumerate(texts):
                settled = hold_back(text, self.stops)  # what may still become a stop string waits
                if len(settled) > sent[index]:
                    yield self._chunk(index, settled[sent[index] :], None)
                    sent[index] = len(settled)
        sequences = await handle.result()
        for index, sequence in enumerate(sequences):
            text = self._text(sequence)
            yield self._chunk(index, text[sent[index] :], _reason(sequence))
        usage = self._usage(sequences)
        if include_usage:
            yield event(Completion(id=self.id, created=self.created, model=self.model, choices=[], usage=usage))

    def _text(self, sequence: Sequence) -> str:
        text = sequence.text(self.engine.info)
        check_output(self.plan, Reading(text, []))
        return text

    def _chunk(self, index: int, text: str, reason: str | None) -> str:
        choice = CompletionChoice(index=index, text=text, finish_reason=reason)
        return event(Completion(id=self.id, created=self.created, model=self.model, choices=[choice]))

    def _usage(self, sequences: list[Sequence]) -> Usage:
        prompt = sum(len(s.prompt_ids) for s in sequences[:: self.n])
        completion = sum(len(s.output) for s in sequences)
        self.metrics.prompt_tokens.add(prompt)
        self.metrics.completion_tokens.add(completion)
        return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


def _reason(sequence: Sequence) -> str:
    return "length" if sequence.finish_reason == "length" else "stop"
