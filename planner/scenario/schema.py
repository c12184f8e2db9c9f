"""The scenario file's JSON Schema, generated from the model so that it cannot drift.

``Scenario.model_json_schema()`` describes the model's own form; a file may say a little
more (``planner.scenario.forms``), and the published schema says it too, so that an editor
validating as you type accepts every file the loader accepts:

* ``"$schema"`` at the top and ``"$comment"`` (a string) in any object;
* a target's (an airport's, a synthetic start's) position as ``pos: [x, y]`` and a SAM's as
  ``x, y``, besides their own form; ``lat, lon`` too when the model has a ``geo`` origin.

The bounds ``planner.limits`` checks in code (``must be from -10000 to 10000 km``) and its id
characters are read from its validators and written as ``minimum``/``maximum`` and
``pattern``, so an editor flags them too. Cross-references (unknown ids, a start inside a
SAM) and the relations between fields are beyond a JSON Schema: ``isr validate`` checks those.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any, Final

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from planner import limits
from planner.model import Scenario
from planner.scenario.forms import COMMENT_KEY, SCHEMA_KEY

__all__ = ["SCHEMA_DIALECT", "scenario_json_schema"]

SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

# Objects positioned by x, y (their own form) that also take pos, and the reverse.
_XY_OBJECTS = ("Airport", "Target", "Point", "AddTarget", "MoveTarget")
_POS_OBJECTS = ("Sam", "AddSam", "MoveSam")
_XY = ("x", "y")
_LAT_LON = ("lat", "lon")


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario file."""
    schema = Scenario.model_json_schema(
        by_alias=True, mode="validation", schema_generator=_WithBounds
    )
    defs: dict[str, Any] = schema["$defs"]
    geo = "geo" in schema["properties"]
    pos = copy.deepcopy(defs["Sam"]["properties"]["pos"])
    number = copy.deepcopy(defs["Target"]["properties"]["x"])
    for name in _XY_OBJECTS:
        _either(defs[name], own=_XY, other={"pos": pos}, geo=geo)
    for name in _POS_OBJECTS:
        _either(defs[name], own=("pos",), other={"x": number, "y": number}, geo=geo)
        if geo:  # a SAM's pos may be a lat/lon object too (planner.geo)
            defs[name]["properties"]["pos"] = {"anyOf": [pos, _lat_lon_object()]}
    for obj in [schema, *defs.values()]:
        _allow_comment(obj)
    schema["properties"] = {
        SCHEMA_KEY: {
            "type": "string",
            "description": "the JSON Schema this file follows, for editors",
        },
        **schema["properties"],
    }
    return {"$schema": SCHEMA_DIALECT, **schema}


class _WithBounds(GenerateJsonSchema):
    """Pydantic's generator, plus what ``planner.limits``' validators check: their bounds
    and the id pattern (pydantic writes an after-validator as the type it wraps)."""

    def function_after_schema(
        self, schema: core_schema.AfterValidatorFunctionSchema
    ) -> JsonSchemaValue:
        out = super().function_after_schema(schema)
        return {**out, **_checked_by(schema["function"]["function"])}


def _checked_by(check: Callable[..., Any]) -> dict[str, Any]:
    """What a ``planner.limits`` validator checks, as JSON Schema keywords (none for others)."""
    if check is limits._identifier:
        return {"pattern": f"^{limits._ID.pattern}$"}
    if check.__qualname__ == f"{limits._bounded.__name__}.<locals>.check":
        bound = inspect.getclosurevars(check).nonlocals
        return {"minimum": bound["lo"], "maximum": bound["hi"]}
    return {}


def _either(obj: dict[str, Any], own: tuple[str, ...], other: dict[str, Any], geo: bool) -> None:
    """Let ``obj`` give its position in its ``own`` keys or in ``other``'s (or lat, lon)."""
    props = obj["properties"]
    required = [k for k in obj.get("required", []) if k not in own]
    forms = [list(own), list(other)]
    if geo:
        props.update(_lat_lon_object()["properties"])
        forms.append(list(_LAT_LON))
    props.update(other)
    is_required = all(k in obj.get("required", []) for k in own)
    if required:
        obj["required"] = required
    else:
        obj.pop("required", None)
    if is_required:
        obj["anyOf"] = [{"required": keys} for keys in forms]


def _lat_lon_object() -> dict[str, Any]:
    degrees = {"type": "number", "description": "degrees (WGS 84), with the scenario's geo"}
    return {
        "type": "object",
        "properties": {k: dict(degrees) for k in _LAT_LON},
        "required": list(_LAT_LON),
        "additionalProperties": False,
    }


def _allow_comment(obj: dict[str, Any]) -> None:
    """A ``$comment`` note in every object the schema describes, maps included."""
    if obj.get("type") == "object" and "properties" in obj:
        obj["properties"][COMMENT_KEY] = {"type": "string", "description": "a note for people"}
    for value in obj.get("properties", {}).values():
        if isinstance(value, dict) and "propertyNames" in value:
            names = value["propertyNames"]
            value["propertyNames"] = {"anyOf": [names, {"const": COMMENT_KEY}]}
            value.setdefault("properties", {})[COMMENT_KEY] = {"type": "string"}
