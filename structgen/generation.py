"""``Generation``: one finished generation and what it cost, and the error that
carries one when the output came back incomplete (shared by greedy/sampled
generation and beam search)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Generation", "IncompleteOutputError"]


class IncompleteOutputError(ValueError):
    """``max_tokens`` or a ``stop=`` string ended the output before it was complete;
    ``text`` is what came."""

    def __init__(self, message: str, text: str, generation: Generation) -> None:
        super().__init__(message)
        self.text = text
        self.generation = generation


@dataclass
class Generation:
    """One finished generation and what it cost."""

    value: Any  # the parsed output (model instance, JSON value or text); None if incomplete
    text: str
    token_ids: list[int]
    finish_reason: str  # "stop" (grammar complete, stop token or stop string) or "length"
    prompt_tokens: int
    forward_passes: int  # model calls that produced a token (the prompt's included)
    forced_tokens: int  # output tokens appended by jump-forward: forward passes saved
    seconds: float  # wall time of the whole batch this generation ran in
    stop_string: str | None = None  # the stop= string that ended it (cut off the text)
    reasoning: str | None = None  # the reasoning section's text (``text`` is then the answer after it)

    @property
    def tokens_per_second(self) -> float:
        return len(self.token_ids) / self.seconds if self.seconds > 0 else 0.0
