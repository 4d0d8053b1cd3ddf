"""Show how a text splits into tokens, with each token's exact bytes.

Run: .venv/bin/python examples/token_bytes.py "your text"
"""

import sys

import structgen

text = sys.argv[1] if len(sys.argv) > 1 else '{"name": "Zoë", "emoji": "🦜"}'
tokenizer = structgen.load_tokenizer()  # the bundled SmolLM2-135M-Instruct, offline
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
print(info)

ids = tokenizer.encode(text, add_special_tokens=False)
for token_id in ids:
    spelled = info.decoded_vocab[token_id]
    try:
        shown = repr(spelled.decode("utf-8"))
    except UnicodeDecodeError:
        shown = "(part of a character)"
    print(f"{token_id:>6}  {spelled!r:<24} {shown}")
if info.join_bytes(ids) == text.encode("utf-8"):
    print("the tokens' bytes join to exactly the text's UTF-8")
else:
    print(f"the tokenizer could not spell all of it (bytes it lacks: {info.unspellable_bytes})")
