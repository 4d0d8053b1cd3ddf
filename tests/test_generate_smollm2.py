"""End to end on the real bundled SmolLM2-135M-Instruct (CPU, or CUDA when present).

Validity is the grammar's job and must be total: every output validates. Whether
an output ends on its own within ``max_tokens`` is the model's: a 135M model
sometimes repeats itself until the budget runs out, and those outputs are closed
in time by their shortest completion.
"""

from __future__ import annotations

import gzip
import json
from datetime import date
from enum import Enum
from typing import Any, Literal, Optional

import jsonschema
import pytest
from pydantic import BaseModel, Field

import structgen
from data_files import maskbench_path

pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture(scope="module")
def smollm2() -> tuple[Any, Any]:
    return structgen.load_model()


def maskbench_sample(count: int, every: int = 97, longest_instance: int = 120) -> list[Any]:
    """Every ``every``-th MaskBench schema whose valid instances are short (so a
    135M model can write one) and that translates."""
    schemas = []
    with gzip.open(maskbench_path(), "rt") as lines:
        for number, line in enumerate(lines):
            if number % every:
                continue
            row = json.loads(line)
            valid = [t["data"] for t in row["tests"] if t["valid"]]
            if not valid or max(len(json.dumps(v)) for v in valid) > longest_instance:
                continue
            try:
                structgen.Grammar.from_json_schema(row["schema"], closed_objects=True, whitespace="compact")
            except Exception:  # noqa: BLE001 - a schema the translator refuses is not in the sample
                continue
            schemas.append(row["schema"])
            if len(schemas) == count:
                return schemas
    raise AssertionError(f"only {len(schemas)} schemas found")


def test_maskbench_schemas_give_valid_outputs(smollm2: tuple[Any, Any]) -> None:
    """12 MaskBench schemas in one batch: every output valid. Outputs that would
    run past 128 tokens (a 135M model sometimes loops) are closed in time by their
    shortest completion (close_within_max_tokens). Twelve, in one batch of a 135M
    model on the CPU: a few minutes of ``make test``."""
    model, tokenizer = smollm2
    schemas = maskbench_sample(12)
    prompts = [
        [{"role": "user", "content": "Write one JSON value that follows this JSON Schema. Reply with the JSON only.\n" + json.dumps(s)}]
        for s in schemas
    ]
    results = structgen.generate_batch(
        model, tokenizer, prompts, schemas=schemas, max_tokens=128, repetition_penalty=1.3,
        close_within_max_tokens=True, details=True,
    )
    for schema, result in zip(schemas, results):
        assert result.value is not None, result.text[-200:]
        jsonschema.validate(result.value, schema, format_checker=jsonschema.FormatChecker())
        assert len(result.token_ids) <= 128
    natural = sum(r.finish_reason == "stop" for r in results)
    assert natural >= 8, f"only {natural} of 12 outputs ended on their own"


class Team(str, Enum):
    PAYMENTS = "payments"
    SEARCH = "search"
    INFRA = "infrastructure"


class Employee(BaseModel):
    name: str
    age: int = Field(ge=16, le=100)
    team: Team
    city: str


class Event(BaseModel):
    title: str
    day: date
    attendees: list[str] = Field(max_length=5)


class Product(BaseModel):
    name: str
    price: float = Field(gt=0)
    in_stock: bool
    tags: list[Literal["new", "sale", "popular"]]


class Contact(BaseModel):
    email: Optional[str] = None
    phone: Optional[str] = None


class Order(BaseModel):
    id: int
    product: Product
    quantity: int = Field(ge=1, le=100)
    contact: Contact


PARAGRAPHS = {
    Employee: "Maria Lopez is a 34-year-old software engineer on the payments team. She lives in Lisbon.",
    Event: "The design review is on 2025-03-14; Ana, Bo and Chen will attend.",
    Product: "The Aurora desk lamp costs 49.90 euros, is in stock, and is new and on sale.",
    Contact: "You can reach Sam at sam@example.com or on +1 555 0100.",
    Order: "Order 1042: three Aurora desk lamps (49.90 each, in stock, popular), contact sam@example.com.",
}


@pytest.mark.parametrize("model_class", list(PARAGRAPHS), ids=lambda m: m.__name__)
def test_pydantic_extraction(smollm2: tuple[Any, Any], model_class: Any) -> None:
    model, tokenizer = smollm2
    messages = [{"role": "user", "content": f"Extract the data as JSON.\n{PARAGRAPHS[model_class]}"}]
    value = structgen.generate(model, tokenizer, messages, schema=model_class, max_tokens=200, repetition_penalty=1.3)
    assert isinstance(value, model_class)


def test_jump_forward_on_the_real_model(smollm2: tuple[Any, Any]) -> None:
    model, tokenizer = smollm2
    messages = [{"role": "user", "content": f"Extract the data as JSON.\n{PARAGRAPHS[Order]}"}]
    on = structgen.generate(model, tokenizer, messages, schema=Order, max_tokens=200, details=True)
    off = structgen.generate(model, tokenizer, messages, schema=Order, max_tokens=200, details=True, jump_forward=False)
    assert isinstance(on.value, Order) and isinstance(off.value, Order)
    assert on.forward_passes < off.forward_passes
    assert on.forced_tokens > 0 and off.forced_tokens == 0


def test_batched_greedy_equals_one_by_one(smollm2: tuple[Any, Any]) -> None:
    model, tokenizer = smollm2
    classes = [Employee, Product, Contact]
    prompts = [[{"role": "user", "content": f"Extract the data as JSON.\n{PARAGRAPHS[c]}"}] for c in classes]
    together = structgen.generate_batch(model, tokenizer, prompts, schemas=classes, max_tokens=120, details=True)
    for prompt, model_class, batched in zip(prompts, classes, together):
        alone = structgen.generate(model, tokenizer, prompt, schema=model_class, max_tokens=120, details=True)
        assert batched.text == alone.text
