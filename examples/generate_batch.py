"""Several prompts, each with its own schema, decoded together (one forward pass per
step for all), and regex / choice constraints.

Run: .venv/bin/python examples/generate_batch.py
"""

import structgen

model, tokenizer = structgen.load_model()

schemas = [
    {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}}, "required": ["city", "country"]},
    {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 6}, "minItems": 3, "maxItems": 3},
    {"enum": ["red", "green", "blue"]},
]
prompts = [
    [{"role": "user", "content": "Where is the Eiffel Tower? Answer as JSON."}],
    [{"role": "user", "content": "Roll three dice; reply with a JSON list."}],
    [{"role": "user", "content": "What colour is the sky?"}],
]
for value in structgen.generate_batch(model, tokenizer, prompts, schemas=schemas):
    print(repr(value))

print(structgen.generate(model, tokenizer, [{"role": "user", "content": "A US phone number?"}],
                         regex=r"\(\d{3}\) \d{3}-\d{4}"))
print(structgen.generate(model, tokenizer, [{"role": "user", "content": "Is Paris in France?"}],
                         choices=["yes", "no"]))
print(structgen.generate(model, tokenizer, [{"role": "user", "content": "Write a haiku about rain."}],
                         max_tokens=40, temperature=0.8, top_p=0.95, seed=1))
