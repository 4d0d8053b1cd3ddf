"""Python code whose every token keeps it parseable, indentation included, on the bundled SmolLM2.

``Grammar.builtin("python")`` is lark's Python grammar with lark's
``PythonIndenter`` made part of it (docs/indentation.md): after a newline the
mask allows exactly the indentations that open a block where one opens, stay
at the current level, or close to an enclosing level. The 135M model writes
poor code, but never code that fails to parse; ``close_within_max_tokens`` ends
it with its shortest completion when the budget runs out.

Run: .venv/bin/python examples/python_function.py
"""

import ast

import structgen

python = structgen.Grammar.builtin("python")
model, tokenizer = structgen.load_model()
messages = [{"role": "user", "content": "Write a Python function square(x) that returns x times x. Only code."}]
code = structgen.generate(model, tokenizer, messages, grammar=python, max_tokens=80, close_within_max_tokens=True,
                          repetition_penalty=1.1)
print(code)
ast.parse(code)  # the grammar is lark's: it parses; Python's later checks are the compiler's
print("parsed by ast: yes")

# where the next line may start, at each point: a fork of the matcher tries each width
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
matcher = structgen.Matcher(structgen.compile(python, info))
for line in ("def f(x):\n", "    if x:\n", "        return 1\n"):
    assert matcher.accept_string(line)
    widths = [width for width in range(13) if matcher.fork().accept_string(" " * width + "pass\n")]
    print(f"after {line!r}: the next line may start at columns {widths}")
