"""structgen's masks inside transformers' own ``model.generate`` (greedy, sampling or
beams), for code that already calls it.

Run: .venv/bin/python examples/logits_processor.py
"""

import json

from transformers import LogitsProcessorList

import structgen

model, tokenizer = structgen.load_model()
schema = {"type": "object", "properties": {"name": {"type": "string"}, "year": {"type": "integer", "minimum": 1900, "maximum": 2100}},
          "required": ["name", "year"]}
messages = [{"role": "user", "content": "Name a famous bridge and the year it opened, as JSON."}]
text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
inputs = tokenizer(text, return_tensors="pt", add_special_tokens=False).to(model.device)

for options in ({"do_sample": False}, {"num_beams": 3, "do_sample": False}):
    processor = structgen.StructgenLogitsProcessor(tokenizer, schema=schema, vocab_size=model.config.vocab_size)
    info = processor.info
    out = model.generate(**inputs, max_new_tokens=60, logits_processor=LogitsProcessorList([processor]),
                         eos_token_id=info.stop_token_ids, pad_token_id=info.stop_token_ids[0], **options)
    answer = tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    print(options, json.loads(answer))
