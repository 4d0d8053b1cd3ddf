"""Think first, then answer in a schema: a reasoning section on the bundled SmolLM2.

SmolLM2's own chat template has no reasoning section, so this example gives it
a ChatML template with one, written as reasoning models' templates write it (a
past turn's ``reasoning_content`` between ``<think>`` tags; the generation
prompt opens ``<think>``); ``structgen.reasoning_for`` reads it from there. The model
thinks freely for at most 48 tokens, then ``</think>`` is forced and the answer
is held to the schema.

Run: .venv/bin/python examples/reasoning.py
"""

from pydantic import BaseModel, Field

import structgen


class Answer(BaseModel):
    city: str = Field(max_length=30)
    country: str = Field(max_length=30)


model, tokenizer = structgen.load_model()
tokenizer.chat_template = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}"
    "{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
)
messages = [{"role": "user", "content": "Which city is the Eiffel Tower in? Think, then answer as JSON."}]

print(structgen.reasoning_for(tokenizer, messages))  # Reasoning(start='<think>', end='</think>', opened=True, ...)
result = structgen.generate(model, tokenizer, messages, schema=Answer, thinking_budget=48, details=True)
print("reasoning:", repr(result.reasoning))
print("answer:   ", repr(result.value))  # an Answer, validated by Pydantic
