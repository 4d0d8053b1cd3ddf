"""A request's sampling fields as the decoder takes them, checked (a 400 otherwise)."""

from __future__ import annotations

from structgen.decoding import DecodeOptions
from structgen.sampling import SamplingParams

from server.errors import bad_request
from server.protocol import GenerationRequest

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
