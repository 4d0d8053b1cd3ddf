"""A Pydantic model's JSON Schema as structgen translates it: Pydantic's own,
plus what its URL types check that the schema does not say (``x-url``: the
schemes a ``HttpUrl`` takes, the host a DSN needs), so that the grammar takes
only URLs the model reads (``Options(urls="whatwg")``)."""

from __future__ import annotations

from functools import cache
from typing import Any


def model_schema(model: Any) -> dict[str, Any]:
    """``model.model_json_schema()``, each URL type's schema with its ``x-url``."""
    schema: dict[str, Any] = model.model_json_schema(schema_generator=_generator())
    return schema


@cache
def _generator() -> type:
    """The schema generator (built on first use: Pydantic is imported only when a model comes)."""
    from pydantic.json_schema import GenerateJsonSchema

    class WithUrls(GenerateJsonSchema):  # type: ignore[misc]  # (Pydantic is not type-checked here)
        def url_schema(self, schema: Any) -> Any:
            return _with_url(super().url_schema(schema), schema)

        def multi_host_url_schema(self, schema: Any) -> Any:
            # a URL with one host is among those it reads: spelled as format "uri"
            return _with_url({**super().multi_host_url_schema(schema), "format": "uri"}, schema)

    return WithUrls


def _with_url(out: dict[str, Any], core: Any) -> dict[str, Any]:
    constraints: dict[str, Any] = {}
    if core.get("allowed_schemes"):
        constraints["schemes"] = list(core["allowed_schemes"])
    if core.get("host_required"):
        constraints["host_required"] = True
    return {**out, "x-url": constraints} if constraints else out
