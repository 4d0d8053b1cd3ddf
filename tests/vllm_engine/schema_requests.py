"""Sixteen requests with different JSON Schemas, each with a prompt that fits it.

Shared by the vLLM tests and benchmarks/bench_vllm.py. Strings, arrays and numbers
are bounded so that a 135M model decoding greedily always reaches the end of a
valid output within a few hundred tokens.
"""

from __future__ import annotations

from typing import Any

NAME = {"type": "string", "minLength": 1, "maxLength": 30}
SHORT_TEXT = {"type": "string", "maxLength": 60}

SCHEMA_REQUESTS: list[tuple[str, dict[str, Any]]] = [
    (
        "Describe Maria Lopez, a 34-year-old engineer from Lisbon, as JSON.",
        {
            "type": "object",
            "properties": {"name": NAME, "age": {"type": "integer", "minimum": 0, "maximum": 130}, "city": NAME},
            "required": ["name", "age", "city"],
        },
    ),
    (
        "Order 1042: three desk lamps at 49.90 each. Give the order as JSON.",
        {
            "type": "object",
            "properties": {
                "order_id": {"type": "integer", "minimum": 1, "maximum": 99999},
                "item": NAME,
                "quantity": {"type": "integer", "minimum": 1, "maximum": 100},
                "unit_price": {"type": "number", "minimum": 0, "maximum": 10000},
            },
            "required": ["order_id", "item", "quantity", "unit_price"],
        },
    ),
    (
        "Is the sky blue? Answer as JSON with a boolean and a reason.",
        {
            "type": "object",
            "properties": {"answer": {"type": "boolean"}, "reason": SHORT_TEXT},
            "required": ["answer", "reason"],
        },
    ),
    (
        "Classify the sentiment of 'I love this phone' as JSON.",
        {
            "type": "object",
            "properties": {"sentiment": {"enum": ["positive", "negative", "neutral"]}},
            "required": ["sentiment"],
        },
    ),
    (
        "List three fruits as a JSON array of strings.",
        {"type": "array", "items": {"type": "string", "maxLength": 20}, "minItems": 1, "maxItems": 5},
    ),
    (
        "Give the coordinates of Paris in whole degrees as JSON.",
        {
            "type": "object",
            "properties": {
                "lat": {"type": "integer", "minimum": -90, "maximum": 90},
                "lon": {"type": "integer", "minimum": -180, "maximum": 180},
            },
            "required": ["lat", "lon"],
        },
    ),
    (
        "The meeting is on 2025-03-14 in room 4. Give it as JSON.",
        {
            "type": "object",
            "properties": {"date": {"type": "string", "format": "date"}, "room": {"type": "integer", "minimum": 1, "maximum": 999}},
            "required": ["date", "room"],
        },
    ),
    (
        "Give a book with its title, author and optional year as JSON.",
        {
            "type": "object",
            "properties": {"title": SHORT_TEXT, "author": NAME, "year": {"type": "integer", "minimum": 1000, "maximum": 2100}},
            "required": ["title", "author"],
        },
    ),
    (
        "Describe a user account with an id, an email and a role as JSON.",
        {
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^[a-z]{3}[0-9]{3}$"},
                "email": {"type": "string", "maxLength": 40},
                "role": {"enum": ["admin", "editor", "viewer"]},
            },
            "required": ["id", "email", "role"],
        },
    ),
    (
        "Flight LH 1234 leaves Frankfurt at 09:40 for Lisbon. Give it as JSON.",
        {
            "type": "object",
            "properties": {
                "flight": {"type": "string", "pattern": "^[A-Z]{2} [0-9]{1,4}$"},
                "from": NAME,
                "to": NAME,
                "departure": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            },
            "required": ["flight", "from", "to", "departure"],
        },
    ),
    (
        "Give a product with a name and a list of up to three tags as JSON.",
        {
            "type": "object",
            "properties": {"name": NAME, "tags": {"type": "array", "items": {"type": "string", "maxLength": 15}, "maxItems": 3}},
            "required": ["name", "tags"],
        },
    ),
    (
        "Give an address (street, city, zip code) as JSON.",
        {
            "type": "object",
            "properties": {
                "address": {
                    "type": "object",
                    "properties": {"street": SHORT_TEXT, "city": NAME, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
                    "required": ["street", "city", "zip"],
                }
            },
            "required": ["address"],
        },
    ),
    (
        "Rate the movie Inception from 1 to 5 as JSON, with an optional comment or null.",
        {
            "type": "object",
            "properties": {
                "movie": NAME,
                "rating": {"type": "integer", "minimum": 1, "maximum": 5},
                "comment": {"anyOf": [SHORT_TEXT, {"type": "null"}]},
            },
            "required": ["movie", "rating", "comment"],
        },
    ),
    (
        "Give two people, each with a name and an age, as JSON.",
        {
            "$defs": {
                "person": {
                    "type": "object",
                    "properties": {"name": NAME, "age": {"type": "integer", "minimum": 0, "maximum": 130}},
                    "required": ["name", "age"],
                }
            },
            "type": "object",
            "properties": {"people": {"type": "array", "items": {"$ref": "#/$defs/person"}, "minItems": 1, "maxItems": 3}},
            "required": ["people"],
        },
    ),
    (
        "What is the weather in Oslo? Answer as JSON with a temperature in Celsius and a condition.",
        {
            "type": "object",
            "properties": {
                "city": NAME,
                "celsius": {"type": "integer", "minimum": -60, "maximum": 60},
                "condition": {"enum": ["sunny", "cloudy", "rain", "snow"]},
            },
            "required": ["city", "celsius", "condition"],
        },
    ),
    (
        "Give a color as JSON with its name and its hex code.",
        {
            "type": "object",
            "properties": {"name": NAME, "hex": {"type": "string", "pattern": "^#[0-9a-f]{6}$"}},
            "required": ["name", "hex"],
        },
    ),
]
