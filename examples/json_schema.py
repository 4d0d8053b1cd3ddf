"""A Pydantic model and a JSON Schema to grammars, their reports, and exact masks on
the bundled SmolLM2 vocabulary.

Run: .venv/bin/python examples/json_schema.py
"""

from typing import Literal, Optional

import pydantic

import structgen


class Point(pydantic.BaseModel):
    x: int = pydantic.Field(ge=-1000, le=1000)
    y: int = pydantic.Field(ge=-1000, le=1000)


class Shape(pydantic.BaseModel):
    kind: Literal["circle", "square"]
    center: Point
    label: Optional[str] = pydantic.Field(default=None, max_length=12)


grammar = structgen.Grammar.from_pydantic(Shape)
print(grammar.report)

schema = {"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}, "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 3}}, "required": ["id"]}
print(structgen.Grammar.from_json_schema(schema).report)

info = structgen.TokenizerInfo.from_huggingface(structgen.load_tokenizer())
matcher = structgen.Matcher(structgen.compile(grammar, info))
text = Shape(kind="circle", center=Point(x=3, y=-4), label="origin").model_dump_json()
for piece in ('{"kind": "', 'circle", "center": {"x": 3, "y": -4}, "label": "origin"}'):
    print(f"forced here: {matcher.find_jump_forward_string()!r}; accept {piece!r}:", matcher.accept_string(piece))
print("complete:", matcher.can_terminate(), "| json.dumps form accepted:", structgen.Grammar.from_pydantic(Shape).accepts(text))

# The declared order is the schema's text order through combinators: a oneOf written
# before `properties` declares its branches' new names first ("from", "sender"); a
# branch that only narrows a declared property does not move it.
email = {"allOf": [{"oneOf": [{"properties": {"from": {"type": "string"}}, "required": ["from"]},
                              {"properties": {"sender": {"type": "string"}}, "required": ["sender"]}]},
                   {"properties": {"subject": {"type": "string"}}, "required": ["subject"]}]}
email_grammar = structgen.Grammar.from_json_schema(email)
print("from, then subject:", email_grammar.accepts('{"from": "a", "subject": "b"}'),
      "| subject first:", email_grammar.accepts('{"subject": "b", "from": "a"}'),
      "| any order:", structgen.Grammar.from_json_schema(email, property_order="any").accepts('{"subject": "b", "from": "a"}'))
