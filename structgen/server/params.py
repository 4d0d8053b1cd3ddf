"""A request's sampling fields as the decoder takes them, checked (a 400 otherwise)."""

from __future__ import annotations

from typing import Any

from structgen.decoding import DecodeOptions
from structgen.sampling import SamplingParams
from structgen.shortest import shortest_text_bytes

from structgen.server.errors import bad_request
from structgen.server.protocol import GenerationRequest

MAX_STOPS = 4


def decode_options(request: GenerationRequest) -> DecodeOptions:
    stops = (request.stop,) if isinstance(request.stop, str) else tuple(request.stop or ())
    if len(stops) > MAX_STOPS or not all(stops):
        raise bad_request(f"stop is up to {MAX_STOPS} non-empty strings", "stop")
    try:
        sampling = SamplingParams(
            temperature=request.temperature or 0.0,
            top_p=request.top_p if request.top_p is not None else 1.0,
            seed=request.seed,
            repetition_penalty=request.repetition_penalty or 1.0,
        )
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return DecodeOptions(sampling, True, stops)


def max_tokens(asked: int | None, param: str, prompt_tokens: int, prompt_param: str, context: int, default: int, limit: int) -> int:
    """The tokens a request may generate: what it asked in ``param`` (at most
    ``limit``), or ``default``; within the model's context (``context`` 0: unknown)."""
    if asked is not None and asked > limit:
        raise bad_request(f"{param} is {asked}; this server allows at most {limit}", param)
    room = context - prompt_tokens if context else None
    if room is not None and room < 1:
        raise bad_request(f"the prompt is {prompt_tokens} tokens; the model's context is {context}", prompt_param, "context_length_exceeded")
    if asked is None:
        return default if room is None else min(default, room)
    if room is not None and asked > room:
        raise bad_request(
            f"the prompt ({prompt_tokens} tokens) and max tokens ({asked}) exceed the model's context ({context})",
            param,
            "context_length_exceeded",
        )
    return asked


def check_room(grammar: Any, budget: int, param: str, info: Any, constrained: str | None) -> None:
    """A 400 ``max_tokens_too_small`` when even the shortest text ``grammar`` allows
    cannot fit in ``budget`` tokens (at most the vocabulary's longest token's bytes
    each): such a request could only end cut, its output breaking its constraint.
    ``constrained``: the field the grammar comes from, for the message."""
    if grammar is None:
        return
    shortest = getattr(grammar, "shortest_bytes", None)
    if shortest is None:
        shortest = shortest_text_bytes(grammar)
        grammar.shortest_bytes = shortest  # a grammar is cached and shared: measured once
    longest = _longest_token(info)
    needed = -(-shortest // longest) if longest else 0
    if needed > budget:
        what = constrained or "the constraint"
        raise bad_request(
            f"{param} is {budget}, but the shortest output {what} allows is {shortest} bytes: at least {needed} tokens "
            f"of this vocabulary (its longest token is {longest} bytes)",
            param,
            "max_tokens_too_small",
        )


_LONGEST: dict[int, int] = {}


def _longest_token(info: Any) -> int:
    """The most bytes one token of ``info`` stands for (once per vocabulary)."""
    key = id(info)
    if key not in _LONGEST:
        _LONGEST[key] = max((len(token) for token in info.decoded_vocab), default=0)
    return _LONGEST[key]
