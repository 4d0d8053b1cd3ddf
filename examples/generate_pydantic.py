"""A typed object out of a paragraph with the bundled SmolLM2, on the CPU.

Run: .venv/bin/python examples/generate_pydantic.py
"""

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

import structgen


class Meeting(BaseModel):
    title: str = Field(max_length=60)
    day: date
    room: int = Field(ge=1, le=99)
    attendees: list[str] = Field(max_length=6)
    kind: Literal["review", "planning", "social"]


paragraph = "The design review is on 2025-03-14 in room 4; Ana, Bo and Chen will attend."
model, tokenizer = structgen.load_model()
messages = [{"role": "user", "content": f"Extract the meeting as JSON.\n{paragraph}"}]

meeting = structgen.generate(model, tokenizer, messages, schema=Meeting)
print(repr(meeting))  # a Meeting: parsed and validated by Pydantic

result = structgen.generate(model, tokenizer, messages, schema=Meeting, details=True)
print(result.text)
print(f"{len(result.token_ids)} tokens, {result.forward_passes} forward passes, "
      f"{result.forced_tokens} appended by jump-forward, {result.tokens_per_second:.1f} tokens/s")
