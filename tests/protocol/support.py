"""The protocol's JSON Schema as the tests use it: one validator per definition, built with
`jsonschema` and `referencing` (the test extra) from the shipped file."""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from protocol.messages import SCHEMA_PATH


@functools.cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@functools.cache
def validator(definition: str) -> Draft202012Validator:
    """A validator of `#/$defs/<definition>` (`referee_message`, `bot_message`, `hello`, ...)."""
    root = schema()
    registry = Registry().with_resource(root["$id"], Resource.from_contents(root))
    return Draft202012Validator({"$ref": f"{root['$id']}#/$defs/{definition}"}, registry=registry)


def errors(definition: str, instance: Any) -> list[str]:
    """Every violation, each as `path: message` (empty: valid)."""
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
        for e in validator(definition).iter_errors(instance)
    ]
