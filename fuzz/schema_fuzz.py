"""Schema fuzzer: random JSON Schemas into ``Grammar.from_json_schema``.

Inputs: schemas generated from scratch (nested objects and arrays, ``anyOf``/
``oneOf``/``allOf``/``not``/``if``, ``$ref`` cycles, enums, consts, patterns,
formats, bounded numbers with ``multipleOf``), mutations of a few seed schemas
and of MaskBench's (where ``../shared/data/maskbench-public.jsonl.gz`` lies
beside the checkout, or ``$STRUCTGEN_MASKBENCH`` points), and junk: keywords with
values of the wrong type. Each case carries its instances (random values, values
sampled from the schema, and mutations of them) and, one case in three, a seed
for a random walk of the masks.

Oracles:

- the compile (under ``schema2grammar.DRAFT_SEMANTICS``) succeeds or raises one of
  the library's errors, within ``COMPILE_SECONDS`` (past it: a slow case);
- soundness: where the report is exact, no instance the grammar accepts is
  invalid by ``jsonschema`` (the draft's validator; ECMA ``pattern`` and formats
  as ``structgen.validation`` checks them, formats only where the draft asserts
  them);
- a random walk of the masks of the default grammar on SmolLM2's vocabulary
  (random allowed tokens, leaning to closing ones) that ends writes JSON that
  the grammar accepts, valid by ``structgen.schema_validator.json_schema_validator``
  where that grammar's report is exact.
"""

from __future__ import annotations

import copy
import gzip
import json
from decimal import Decimal
import os
import random
import re
from pathlib import Path
from typing import Any

from common import Failure, compiled, json_ok, loads_strict, random_json, random_text, shown, stepped, DuplicateKey

NAME = "schema"
CASE_SECONDS = 90.0
WALK_STEPS = 200

DRAFTS = ["http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-06/schema#",
          "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema",
          "https://json-schema.org/draft/2020-12/schema"]
FORMATS = ["date", "date-time", "time", "email", "uri", "uuid", "ipv4", "ipv6", "hostname", "duration", "regex",
           "uri-reference", "json-pointer", "unknown-format"]
PATTERNS = ["^a", "^[a-z]+$", "[0-9]", "^\\d{3}-\\d{4}$", "a|b", "^(foo|bar)$", "\\w+@\\w+", "^[^x]*$", "^.{2,5}$",
            "x*y?z+", "^\\u0041", "^\\p{L}+$", "^[A-Z][a-z]*( [A-Z][a-z]*)*$", "(?=a)", "[", "(?<=a)b", "\\bab\\b",
            "^(?!x).*$", "^$", "é", "^a{2,}b{0,3}$", "^[\\s\\S]{1,3}$", "."]
KEYS = ["a", "b", "c", "name", "id", "x", "type", "é", "A1", "aa", "foo", ""]
JUNK = [None, True, False, -1, 0, 1.5, "x", "", [], {}, [1, "a"], {"a": 1}, 10**40, -(10**40), 1e308, "[", "(?<=a)b",
        [[]], {"type": 3}, "#/nowhere", "integer"]
KEYWORDS = ["type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties",
            "propertyNames", "minProperties", "maxProperties", "items", "prefixItems", "additionalItems", "minItems",
            "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "minLength", "maxLength", "pattern",
            "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "anyOf", "oneOf",
            "allOf", "not", "if", "then", "else", "$ref", "$defs", "definitions", "dependentRequired",
            "dependentSchemas", "dependencies", "unevaluatedProperties", "unevaluatedItems", "default", "$id",
            "$anchor", "$dynamicRef", "contentEncoding", "nullable"]

SEEDS: list[Any] = [  # shapes from the project's tests and its examples
    {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
     "required": ["name", "age"]},
    {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3, "uniqueItems": True},
    {"type": "string", "pattern": "^\\d{3}-\\d{4}$"},
    {"type": "string", "format": "date-time"},
    {"type": "number", "minimum": -1.5, "exclusiveMaximum": 10, "multipleOf": 0.5},
    {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "multipleOf": 7}]},
    {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]},
    {"type": "object", "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False,
     "required": ["x-a"]},
    {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                         "next": {"$ref": "#/$defs/node"}}}},
     "$ref": "#/$defs/node"},
    {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["c"], "maxProperties": 2},
    {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}},
     "if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]}, "else": {"required": ["y"]}},
    {"not": {"type": "string"}},
    {"type": "object", "dependentRequired": {"a": ["b"]}, "properties": {"a": {}, "b": {}}},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "items": False},
    {"type": "array", "contains": {"const": 1}, "minContains": 2, "maxContains": 3},
    {"type": "string", "enum": ["a", "bbbb"], "maxLength": 2},
    {"type": "object", "propertyNames": {"pattern": "^[a-z]{1,3}$"}, "minProperties": 1},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": False,
     "allOf": [{"properties": {"b": {"type": "string"}}}]},
    {"type": ["string", "null"], "minLength": 2},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "maximum": 5, "exclusiveMaximum": True},
    {"type": "integer", "minimum": 10**20, "maximum": 10**20 + 5},
    {"const": {"a": [1, {"b": None}]}},
    {"enum": [1, 1.0, "1", True, None, [1], {"a": 1}]},
    {"properties": {"x": {"$ref": "#"}}, "required": ["x"]},
    True,
    False,
    {},
]


# -- generating ---------------------------------------------------------------


def generate(rng: random.Random) -> dict[str, Any]:
    roll = rng.random()
    bank = maskbench()
    if roll < 0.25:
        schema = mutate(rng, copy.deepcopy(rng.choice(SEEDS)), rng.randint(0, 3))
        source = "seed"
    elif roll < 0.4 and bank:
        schema = mutate(rng, json.loads(rng.choice(bank)), rng.randint(0, 3))
        source = "maskbench"
    else:
        defs = {f"d{i}": None for i in range(rng.choice([0, 0, 1, 2, 3]))}
        schema = gen_schema(rng, rng.randint(1, 4), list(defs))
        if defs and isinstance(schema, dict):
            schema["$defs"] = {name: gen_schema(rng, 2, list(defs)) for name in defs}
        if rng.random() < 0.2:
            schema = mutate(rng, schema, rng.randint(1, 3))
        source = "generated"
    if isinstance(schema, dict) and rng.random() < 0.3:
        schema = {"$schema": rng.choice(DRAFTS), **{k: v for k, v in schema.items() if k != "$schema"}}
    if not json_ok(schema):
        schema = {"type": "string"}
    instances: list[Any] = []
    for _ in range(8):
        instances.append(random_json(rng))
    for _ in range(8):
        value = sample(rng, schema, schema, 4)
        instances.append(value)
        instances.append(mutate_value(rng, copy.deepcopy(value)))
    instances = [value for value in instances if json_ok(value)]
    walk = {"seed": rng.randrange(1 << 30), "steps": WALK_STEPS} if rng.random() < 0.33 else None
    return {"source": source, "schema": schema, "instances": instances, "walk": walk}


_BANK: list[str] | None = None


def maskbench() -> list[str]:
    """MaskBench's schemas as JSON lines (small ones), where the file is beside the checkout."""
    global _BANK
    if _BANK is None:
        _BANK = []
        given = os.environ.get("STRUCTGEN_MASKBENCH")
        path = Path(given) if given else Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "maskbench-public.jsonl.gz"
        if path.is_file():
            with gzip.open(path, "rt", encoding="utf-8") as lines:
                for line in lines:
                    schema = json.loads(line).get("schema")
                    text = json.dumps(schema)
                    if len(text) <= 20_000:
                        _BANK.append(text)
    return _BANK


def gen_schema(rng: random.Random, depth: int, defs: list[str]) -> Any:
    """A random schema, ``depth`` levels of subschemas at most."""
    if rng.random() < 0.04:
        return rng.random() < 0.7
    kinds = ["string", "integer", "number", "boolean", "null", "enum", "const", "any"]
    if depth > 0:
        kinds += ["object", "object", "array", "array", "anyOf", "oneOf", "allOf", "not", "if", "types"]
        if defs:
            kinds += ["ref"]
    kind = rng.choice(kinds)
    sub = lambda: gen_schema(rng, depth - 1, defs)  # noqa: E731
    schema: dict[str, Any] = {}
    if kind == "string":
        schema["type"] = "string"
        if rng.random() < 0.4:
            schema["minLength"] = rng.choice([0, 1, 2, 3, 5, 300])
        if rng.random() < 0.4:
            schema["maxLength"] = rng.choice([0, 1, 2, 4, 8, 9, 20, 256, 3000])
        if rng.random() < 0.3:
            schema["pattern"] = rng.choice(PATTERNS) if rng.random() < 0.7 else ecma_pattern(rng)
        if rng.random() < 0.25:
            schema["format"] = rng.choice(FORMATS)
    elif kind in ("integer", "number"):
        schema["type"] = kind
        bound = lambda: rng.choice([0, 1, -1, 5, 10, -3, 2.5, -0.5, 10**18, -(10**18), 1e300, 100, 0.1])  # noqa: E731
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if rng.random() < 0.25:
                schema[key] = bound()
        if rng.random() < 0.3:
            schema["multipleOf"] = rng.choice([1, 2, 3, 7, 10, 0.5, 0.1, 0.01, 1e-8, 1e10, 13, 2.5, 1001])
    elif kind == "boolean":
        schema["type"] = "boolean"
    elif kind == "null":
        schema["type"] = "null"
    elif kind == "enum":
        schema["enum"] = [random_json(rng, 1) for _ in range(rng.randint(1, 5))]
    elif kind == "const":
        schema["const"] = random_json(rng, 2)
    elif kind == "object":
        schema["type"] = "object"
        names = rng.sample(KEYS, rng.randint(0, 4))
        if names or rng.random() < 0.3:
            schema["properties"] = {name: sub() for name in names}
        if rng.random() < 0.5:
            schema["required"] = [n for n in names if rng.random() < 0.5] + (["zz"] if rng.random() < 0.05 else [])
        roll = rng.random()
        if roll < 0.3:
            schema["additionalProperties"] = False
        elif roll < 0.45:
            schema["additionalProperties"] = sub()
        if rng.random() < 0.15:
            schema["patternProperties"] = {rng.choice(["^x", "^[a-c]$", "b", "^\\d+$"]): sub()}
        if rng.random() < 0.1:
            schema["propertyNames"] = rng.choice([{"maxLength": 2}, {"pattern": "^[a-z]+$"}, {"enum": ["a", "b"]}])
        if rng.random() < 0.15:
            schema["minProperties"] = rng.randint(0, 3)
        if rng.random() < 0.15:
            schema["maxProperties"] = rng.randint(0, 4)
        if names and rng.random() < 0.1:
            schema["dependentRequired"] = {rng.choice(names): [rng.choice(KEYS)]}
        if names and rng.random() < 0.08:
            schema["dependentSchemas"] = {rng.choice(names): sub()}
        if rng.random() < 0.06:
            schema["unevaluatedProperties"] = rng.choice([False, sub()])
    elif kind == "array":
        schema["type"] = "array"
        if rng.random() < 0.8:
            schema["items"] = sub()
        if rng.random() < 0.2:
            schema["prefixItems"] = [sub() for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.3:
            schema["minItems"] = rng.randint(0, 3)
        if rng.random() < 0.3:
            schema["maxItems"] = rng.randint(0, 5)
        if rng.random() < 0.2:
            schema["uniqueItems"] = True
        if rng.random() < 0.15:
            schema["contains"] = sub()
            if rng.random() < 0.5:
                schema["minContains"] = rng.randint(0, 2)
            if rng.random() < 0.5:
                schema["maxContains"] = rng.randint(1, 3)
        if rng.random() < 0.05:
            schema["unevaluatedItems"] = rng.choice([False, sub()])
    elif kind in ("anyOf", "oneOf", "allOf"):
        schema[kind] = [sub() for _ in range(rng.randint(1, 3))]
    elif kind == "not":
        schema["not"] = sub()
    elif kind == "if":
        schema["if"] = sub()
        if rng.random() < 0.8:
            schema["then"] = sub()
        if rng.random() < 0.6:
            schema["else"] = sub()
    elif kind == "types":
        schema["type"] = rng.sample(["string", "integer", "number", "boolean", "null", "object", "array"],
                                    rng.randint(1, 3))
    elif kind == "ref":
        schema["$ref"] = rng.choice([f"#/$defs/{rng.choice(defs)}", "#"])
    if rng.random() < 0.08 and kind not in ("enum", "const"):
        schema["enum"] = [random_json(rng, 1) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.05:
        schema["const"] = random_json(rng, 1)
    return schema


def ecma_pattern(rng: random.Random) -> str:
    atoms = ["a", "b", "[a-c]", "[^a]", "\\d", "\\w", "\\s", ".", "(a|bc)", "x", "é", "[0-9]"]
    out = "^" if rng.random() < 0.5 else ""
    for _ in range(rng.randint(1, 4)):
        out += rng.choice(atoms) + rng.choice(["", "", "*", "+", "?", "{1,3}", "{2}"])
    return out + ("$" if rng.random() < 0.5 else "")


def mutate(rng: random.Random, schema: Any, times: int) -> Any:
    """``schema`` with ``times`` random edits at random places: a keyword dropped,
    added, given a junk value, a subschema wrapped in a combinator."""
    for _ in range(times):
        places = [schema]
        _collect(schema, places)
        target = rng.choice(places)
        if not isinstance(target, dict):
            continue
        op = rng.randrange(6)
        keys = list(target)
        if op == 0 and keys:
            del target[rng.choice(keys)]
        elif op == 1:
            target[rng.choice(KEYWORDS)] = rng.choice(JUNK)
        elif op == 2:
            target[rng.choice(KEYWORDS)] = gen_schema(rng, 1, [])
        elif op == 3 and keys:
            key = rng.choice(keys)
            target[key] = {rng.choice(["anyOf", "allOf", "oneOf"]): [target[key], gen_schema(rng, 1, [])]} \
                if isinstance(target[key], dict) else rng.choice(JUNK)
        elif op == 4:
            extra = gen_schema(rng, 2, []) if rng.random() < 0.5 else {"$ref": "#"}
            target.update(extra if isinstance(extra, dict) else {"not": extra})
        else:
            target.update({"not": copy.deepcopy(target)} if rng.random() < 0.5 else {"if": copy.deepcopy(target)})
    return schema


def _collect(value: Any, out: list[Any]) -> None:
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for child in children:
        if isinstance(child, (dict, list)):
            out.append(child)
            _collect(child, out)


def sample(rng: random.Random, schema: Any, root: Any, depth: int) -> Any:
    """A value meant to be valid (often is): enough to test acceptance near the schema."""
    if depth < 0 or not isinstance(schema, dict):
        return random_json(rng, 1) if schema is not False else None
    if "const" in schema and rng.random() < 0.9:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"] and rng.random() < 0.9:
        return rng.choice(schema["enum"])
    ref = schema.get("$ref")
    if isinstance(ref, str) and rng.random() < 0.8:
        target = _resolve(ref, root)
        if target is not None:
            return sample(rng, target, root, depth - 1)
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key] and rng.random() < 0.6:
            return sample(rng, rng.choice(schema[key]), root, depth - 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind) if kind else None
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else \
            "string" if {"pattern", "minLength", "format"} & set(schema) else None
    if kind == "object":
        out: dict[str, Any] = {}
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        for name, sub in properties.items():
            if name in required or rng.random() < 0.5:
                out[name] = sample(rng, sub, root, depth - 1)
        for name in required:
            if isinstance(name, str) and name not in out:
                out[name] = random_json(rng, 1)
        if rng.random() < 0.2:
            out[rng.choice(KEYS)] = random_json(rng, 1)
        return out
    if kind == "array":
        count = rng.randint(int(_num(schema.get("minItems"), 0)), max(int(_num(schema.get("minItems"), 0)), 3))
        prefix = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else []
        items = schema.get("items")
        return [sample(rng, prefix[i] if i < len(prefix) else items, root, depth - 1) for i in range(min(count, 6))]
    if kind == "string":
        if schema.get("format") in ("date", "date-time", "email", "uuid", "ipv4"):
            return {"date": "2024-02-29", "date-time": "2024-01-01T12:00:00Z", "email": "a@b.co",
                    "uuid": "12345678-1234-1234-1234-123456789abc", "ipv4": "10.0.0.1"}[schema["format"]]
        low = int(min(_num(schema.get("minLength"), 0), 10))
        high = int(min(max(_num(schema.get("maxLength"), low + 4), low), 12))
        return random_text(rng, rng.randint(low, high))
    if kind in ("integer", "number"):
        low = _num(schema.get("minimum"), -20)
        high = _num(schema.get("maximum"), low + 40)
        step = _num(schema.get("multipleOf"), 1 if kind == "integer" else 0.5)
        if not (abs(low) < 1e15 and abs(high) < 1e15 and step > 0):
            return rng.choice([0, 1, -1, low, high])
        value = rng.uniform(min(low, high), max(low, high))
        value = round(value / step) * step
        return int(value) if kind == "integer" or float(value).is_integer() and rng.random() < 0.5 else value
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return random_json(rng, 2)


def _num(value: Any, default: float) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e300 else default


def _resolve(ref: str, root: Any) -> Any:
    if ref == "#":
        return root
    if ref.startswith("#/"):
        node = root
        for part in ref[2:].split("/"):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node
    return None


def mutate_value(rng: random.Random, value: Any) -> Any:
    """``value`` a little wrong: a leaf changed, a key dropped or added, an item more."""
    op = rng.randrange(5)
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        if op == 0:
            del value[key]
        elif op == 1:
            value[key] = mutate_value(rng, value[key])
        else:
            value[rng.choice(KEYS)] = random_json(rng, 1)
        return value
    if isinstance(value, list) and value:
        index = rng.randrange(len(value))
        if op == 0:
            del value[index]
        elif op == 1:
            value[index] = mutate_value(rng, value[index])
        else:
            value.append(copy.deepcopy(rng.choice(value)) if rng.random() < 0.5 else random_json(rng, 1))
        return value
    if isinstance(value, bool) or value is None:
        return rng.choice([0, "true", not value, None, []])
    if isinstance(value, (int, float)):
        return rng.choice([value + 1, value - 1, -value, value * 10, value + 0.5, str(value), 10**20, 1e-9])
    if isinstance(value, str):
        return rng.choice([value + "a", value[:-1], value * 2, "", value.upper(), 5, "é" + value])
    return random_json(rng)


# -- checking (in the worker) ---------------------------------------------------


def setup() -> dict[str, Any]:
    import structgen

    info = structgen.TokenizerInfo.from_huggingface(structgen.load_tokenizer())
    closing = {b'"', b"}", b"]", b",", b"0", b"1", b"5", b"true", b"null", b"false", b'"}', b"}}", b"]}", b'"]'}
    closers = [i for i, spelled in enumerate(info.decoded_vocab) if spelled in closing]
    return {"info": info, "closers": set(closers)}


def check(state: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    from schema2grammar import DRAFT_SEMANTICS
    from structgen import Grammar

    schema = case["schema"]
    grammar = compiled(lambda: Grammar.from_json_schema(schema, **DRAFT_SEMANTICS), "from_json_schema")
    if grammar is None:
        return {"refused": 1}
    stats: dict[str, Any] = {"compiled": 1, "exact": int(grammar.report.exact)}
    validator = draft_validator(schema)
    if validator is not None:
        for instance in case["instances"]:
            text = json.dumps(instance, ensure_ascii=False)
            accepted = stepped(lambda: grammar.accepts(text), "Grammar.accepts")
            if not accepted:
                continue
            try:
                errors = list(validator.iter_errors(instance))[:3]
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException:  # noqa: BLE001 (jsonschema itself failing on an odd schema, a recursion
                continue           # without end included, raised from Rust as a BaseException: no verdict)
            if errors and grammar.report.exact:
                raise Failure("unsound", f"the grammar accepts {shown(text)}, which jsonschema refuses: "
                              f"{errors[0].message}", {"instance": instance, "errors": [e.message for e in errors]},
                              key=str(errors[0].validator))
    if case.get("walk"):
        stats.update(walk(state, schema, case["walk"]))
    return stats


def draft_validator(schema: Any) -> Any:
    """The draft's validator with structgen's reading of ``pattern`` and formats,
    the formats checked where ``DRAFT_SEMANTICS`` asserts them (drafts 4 to 7 and
    an undeclared one); None where jsonschema refuses the schema itself."""
    from jsonschema import validators
    from structgen.schema_validator import _pattern, json_schema_validator

    try:
        base = validators.validator_for(schema, default=validators.Draft202012Validator)
        base.check_schema(schema)
        declared = schema.get("$schema") if isinstance(schema, dict) else None
        if isinstance(declared, str) and re.search(r"/draft/20(19-09|20-12)/", declared):
            return validators.extend(base, {"pattern": _pattern})(schema)
        return json_schema_validator(schema)
    except Exception:  # noqa: BLE001 (not a schema jsonschema reads: nothing to compare with)
        return None


def walk(state: dict[str, Any], schema: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """Random allowed tokens of the default grammar until the matcher may end; the
    text must be JSON the grammar accepts, and valid where the report is exact."""
    import structgen
    from structgen.schema_validator import json_schema_validator

    grammar = compiled(lambda: structgen.Grammar.from_json_schema(schema), "from_json_schema (defaults)")
    if grammar is None:
        return {"walk_refused": 1}
    info = state["info"]
    program = compiled(lambda: structgen.compile(grammar, info, lazy=True), "compile")
    if program is None:
        return {"walk_unspellable": 1}
    matcher = structgen.Matcher(program)
    rng = random.Random(spec["seed"])
    stops = set(info.stop_token_ids)
    written = b""
    for step in range(spec["steps"]):
        allowed = stepped(matcher.allowed_tokens, "Matcher.allowed_tokens")
        if allowed is None:
            return {"walk_ambiguous": 1}
        lean = 0.3 + 0.65 * step / spec["steps"]  # closing more and more
        ending = [t for t in allowed if t in stops]
        if ending and rng.random() < lean:
            break
        if not allowed:
            return {"walk_dead_end": 1}  # possible where a needed byte has no token (docs/grammar.md)
        content = [t for t in allowed if t not in stops]
        if not content:
            break
        closing = [t for t in content if t in state["closers"]]
        token = rng.choice(closing) if closing and rng.random() < lean else rng.choice(content)
        taken = stepped(lambda: matcher.accept_token(token), "Matcher.accept_token")
        if taken is None:
            return {"walk_ambiguous": 1}
        if not taken:
            raise Failure("mask", f"token {token} ({info.decoded_vocab[token]!r}) was in the mask but refused "
                                  f"after {shown(written.decode('utf-8', 'replace'))}", {"written": written.hex()}, key="refused")
        written += info.decoded_vocab[token]
    else:
        return {"walk_unfinished": 1}
    if not matcher.can_terminate():
        raise Failure("mask", "a stop token was in the mask but the matcher cannot terminate",
                      {"written": written.hex()}, key="stop")
    try:
        text = written.decode("utf-8")
    except UnicodeDecodeError:
        raise Failure("walk", f"the walk wrote invalid UTF-8: {written!r}"[:2000], {"written": written.hex()}, key="utf8") from None
    if not grammar.accepts(text):
        raise Failure("walk", f"the grammar refuses what its matcher wrote: {shown(text)}", {"text": text}, key="accepts")
    try:
        value = loads_strict(text)
    except DuplicateKey:
        return {"walk_duplicate_keys": 1}  # JSON, but what it means is the parser's choice
    except ValueError as exc:
        raise Failure("walk", f"the walk wrote text that is not JSON ({exc}): {shown(text)}", {"text": text}, key="json") from None
    if grammar.report.sound:  # exact, or narrower only (readable multipleOf, closed objects): every value valid
        try:
            # numbers as the decimals written, the schema's and the text's alike (multipleOf means
            # them: Options.multiple_of; a float 1e+308 in an enum is the decimal json.dumps writes)
            decimals = json.loads(json.dumps(schema), parse_float=Decimal)
            validator = json_schema_validator(decimals)
            validator.check_schema(schema)
            errors = list(validator.iter_errors(json.loads(text, parse_float=Decimal)))[:3]
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001 (no schema to jsonschema, or it fails on it: no verdict)
            return {"walk_no_verdict": 1}
        if errors:
            raise Failure("walk", f"the walk wrote {shown(text)}, which jsonschema refuses: {errors[0].message}",
                          {"text": text, "errors": [e.message for e in errors]}, key=f"invalid:{errors[0].validator}")
    return {"walk_ended": 1}
