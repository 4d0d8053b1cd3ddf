"""Tree decoding: constrained beam search (each beam a forked matcher), and checking a
speculative draft against the grammar with rollback.

Run: .venv/bin/python examples/tree_decoding.py
"""

import structgen

model, tokenizer = structgen.load_model()
schema = {"type": "object", "properties": {"animal": {"enum": ["cat", "dog", "owl"]}, "legs": {"type": "integer", "minimum": 0, "maximum": 8}},
          "required": ["animal", "legs"]}
messages = [{"role": "user", "content": "Pick an animal that flies and say how many legs it has, as JSON."}]
print("beams:", structgen.generate(model, tokenizer, messages, schema=schema, num_beams=4))

# a draft model proposed these tokens; the grammar accepts a prefix of them
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
matcher = structgen.Matcher(structgen.compile(structgen.Grammar.from_json_schema(schema, whitespace="compact"), info))
draft = tokenizer.encode('{"animal":"owl","legs":2.5}', add_special_tokens=False)
check = structgen.verify_draft(matcher, draft)
accepted = tokenizer.decode(draft[: check.accepted])
print(f"draft: {check.accepted} of {len(draft)} tokens valid ({accepted!r}); {check.bitmask.shape[0]} masks to apply")
