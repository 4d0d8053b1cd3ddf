"""A chat completion's answer, whole or as a stream of ``chat.completion.chunk``s."""

from __future__ import annotations

from typing import AsyncIterator

from structgen.decoding import Sequence

from structgen.server.engine import Engine, Handle
from structgen.server.grammars import OutputPlan
from structgen.server.metrics import ServerMetrics
from structgen.server.output import ChoiceStream, check_output, finish_reason, message, read_output, reasoning_tokens
from structgen.server.protocol import ChatCompletion, ChatCompletionChunk, Choice, ChunkChoice, CompletionTokensDetails, Usage
from structgen.server.serving import Updates
from structgen.server.sse import event, guarded
from structgen.server.tool_syntax import ToolSyntax


class ChatReply:
    """One request's answer: its choices read from the finished sequences."""

    def __init__(
        self,
        id: str,
        created: int,
        model: str,
        engine: Engine,
        plan: OutputPlan,
        syntax: ToolSyntax,
        stops: tuple[str, ...],
        metrics: ServerMetrics,
    ) -> None:
        self.id, self.created, self.model = id, created, model
        self.engine, self.plan, self.syntax, self.stops, self.metrics = engine, plan, syntax, stops, metrics

    def completion(self, sequences: list[Sequence]) -> ChatCompletion:
        choices = []
        for index, sequence in enumerate(sequences):
            text = sequence.text(self.engine.info)
            reading = read_output(self.plan, self.syntax, text, True, self.stops)
            check_output(self.plan, reading)
            reason = finish_reason(self.plan, sequence.finish_reason, reading.calls)
            choices.append(Choice(index=index, message=message(reading, self.syntax, self.plan.custom), finish_reason=reason))
        return ChatCompletion(id=self.id, created=self.created, model=self.model, choices=choices, usage=self._usage(sequences))

    def events(self, handle: Handle, updates: Updates, include_usage: bool) -> AsyncIterator[str]:
        """The stream of chunks, ended and guarded as every stream is (``sse.guarded``)."""
        return guarded(self.id, self._chunks(handle, updates, include_usage), handle.cancel)

    async def _chunks(self, handle: Handle, updates: Updates, include_usage: bool) -> AsyncIterator[str]:
        streams = [ChoiceStream(self.plan, self.syntax, self.stops) for _ in handle.job.sequences]
        async for texts in updates:
            for index, text in enumerate(texts):
                for delta in streams[index].deltas(text, final=False):
                    yield self._chunk(index, delta)
        sequences = await handle.result()
        for index, sequence in enumerate(sequences):
            text = sequence.text(self.engine.info)
            reading = read_output(self.plan, self.syntax, text, True, self.stops)
            check_output(self.plan, reading)
            for delta in streams[index].deltas(text, final=True):
                yield self._chunk(index, delta)
            yield self._chunk(index, {}, finish_reason(self.plan, sequence.finish_reason, reading.calls))
        usage = self._usage(sequences)
        if include_usage:
            yield event(ChatCompletionChunk(id=self.id, created=self.created, model=self.model, choices=[], usage=usage))

    def _chunk(self, index: int, delta: dict[str, object], reason: str | None = None) -> str:
        return event(
            ChatCompletionChunk(
                id=self.id, created=self.created, model=self.model, choices=[ChunkChoice(index=index, delta=delta, finish_reason=reason)]
            )
        )

    def _usage(self, sequences: list[Sequence]) -> Usage:
        completion = sum(len(s.output) for s in sequences)
        prompt = len(sequences[0].prompt_ids)
        self.metrics.prompt_tokens.add(prompt)
        self.metrics.completion_tokens.add(completion)
        usage = Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
        if self.plan.reasoning is not None:
            vocab = self.engine.info.decoded_vocab
            thought = sum(reasoning_tokens(self.plan, s.output, vocab) for s in sequences)
            usage.completion_tokens_details = CompletionTokensDetails(reasoning_tokens=thought)
        return usage
