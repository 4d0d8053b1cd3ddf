"""JSON Schema and Pydantic models to lark grammars, with a report of every keyword (not built yet)."""
