"""``$ref`` to a place in the document, followed by JSON pointer, ``$anchor`` or
``$id``: a reference's target is built once, as one rule, so recursion of any
depth is a cycle of rules."""

from __future__ import annotations

import json
from typing import Any, Callable

from schema2grammar.core import TranslatorCore
from schema2grammar.report import ENFORCED
from schema2grammar.shared import ANNOTATIONS, NOWHERE, SchemaError, follow_pointer


def _named(root: Any, names: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The first schema object under ``root`` that ``names`` picks, without entering
    a subschema with an ``$id`` of its own (another resource: its anchors are not
    this one's)."""
    todo = [root]
    while todo:
        current = todo.pop()
        if isinstance(current, dict):
            if names(current):
                return current
            todo.extend(value for value in current.values()
                        if not (isinstance(value, dict) and isinstance(value.get("$id"), str) and not value["$id"].startswith("#")))
        elif isinstance(current, list):
            todo.extend(current)
    return None


class References(TranslatorCore):
    """``$ref``: followed, its target built once (``TranslatorCore.cached``)."""

    def reference(self, schema: dict[str, Any], pointer: str) -> str:
        target = schema["$ref"]
        others = [key for key in schema if key != "$ref" and key not in ANNOTATIONS and key not in ("$defs", "definitions")]
        if not isinstance(target, str) or not target.startswith("#"):
            return self.unsupported(pointer, "$ref", f"only references inside the document are followed, not {target!r}")
        self.report.add(pointer, "$ref", ENFORCED)
        for key in schema:
            if key in ANNOTATIONS or key in ("$defs", "definitions"):
                self.report.add(pointer, key, ENFORCED, "annotation" if key in ANNOTATIONS else "")
        if others and self.ref_alone:
            for key in others:
                self.report.add(pointer, key, ENFORCED, "ignored beside $ref (drafts 3 to 7)")
        elif others:
            # memoized like a plain reference: a recursive target with siblings is a cycle too
            sibling = {key: schema[key] for key in others}
            return self.cached(target + " " + json.dumps(sibling, sort_keys=True),
                               lambda: self.node({"allOf": [{"$ref": target}, sibling]}, pointer), pointer)
        return self.cached(target, lambda: self.node(self.resolve(target, pointer), target[1:]), pointer)

    def resolve(self, target: str, pointer: str) -> Any:
        if not target.startswith("#/") and target != "#":
            return self.anchor(target, pointer)
        found = follow_pointer(self.root, target)
        if found is NOWHERE:
            raise SchemaError(f"{pointer or '#'}: $ref {target!r} points to nothing")
        return found

    def anchor(self, target: str, pointer: str) -> Any:
        """The subschema named ``#name`` by ``$anchor`` (2019+) or ``$id`` (drafts 6-7),
        or failing those by ``id`` (draft 4's spelling, which later drafts dropped)."""
        found = _named(self.root, lambda place: place.get("$anchor") == target[1:] or place.get("$id") == target)
        if found is None:
            found = _named(self.root, lambda place: place.get("id") == target)
        if found is None:
            raise SchemaError(f"{pointer or '#'}: $ref {target!r} points to nothing")
        return found
