"""The scenario file's JSON Schema, generated from the model so that it cannot drift.

``Scenario.model_json_schema()`` describes the model's own form; a file may say a little
more (``planner.scenario.forms``), and the published schema says it too, so that an editor
validating as you type accepts every file the loader accepts:

* ``"$schema"`` at the top and ``"$comment"`` (a string) in any object;
* every position (airports, targets, SAMs, synthetic starts, the timeline's targets and
  SAMs) in any of the four forms the loader takes: ``x, y``, ``pos: [x, y]``, ``lat, lon``
  and ``pos: {lat, lon}``, and ``x, y`` with ``pos: [x, y]`` together (the loader checks
  that they agree); never lat/lon next to km, never half a pair; lat/lon only when the
  scenario has a ``geo`` origin (``planner.scenario.forms``, ``planner.geo``).

The bounds ``planner.limits`` checks in code (``must be from -10000 to 10000 km``) and its id
characters are read from its validators and written as ``minimum``/``maximum`` and
``pattern``, so an editor flags them too. Cross-references (unknown ids, a start inside a
SAM) and the relations between fields are beyond a JSON Schema: ``isr validate`` checks those.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from planner import limits
from planner.edits import EDIT_MODELS
from planner.model import Scenario
from planner.scenario.forms import COMMENT_KEY, SCHEMA_KEY

__all__ = ["SCHEMA_DIALECT", "scenario_json_schema"]

SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

# Objects positioned by x, y (their own form) that also take pos, and the reverse; the
# edits among them read from their models' fields.
_XY_OBJECTS = (
    "Airport",
    "Target",
    "Point",
    *(m.__name__ for m in EDIT_MODELS if "x" in m.model_fields),
)
_POS_OBJECTS = ("Sam", *(m.__name__ for m in EDIT_MODELS if "pos" in m.model_fields))
_XY = ("x", "y")
_LAT_LON = ("lat", "lon")


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario file."""
    schema = Scenario.model_json_schema(
        by_alias=True, mode="validation", schema_generator=_WithBounds
    )
    defs: dict[str, Any] = schema["$defs"]
    for name in _XY_OBJECTS:
        _positioned(defs[name], own=_XY)
    for name in _POS_OBJECTS:
        _positioned(defs[name], own=("pos",))
    schema["if"] = {"properties": {"geo": {"type": "object"}}, "required": ["geo"]}
    schema["else"] = _without_lat_lon()
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
        return {**out, **limits.json_schema_keywords(schema["function"]["function"])}


def _positioned(obj: dict[str, Any], own: tuple[str, ...]) -> None:
    """Let ``obj`` give its position in any of the loader's forms (module docstring): its
    ``own`` keys, ``x, y``, ``pos`` as a pair of km or a lat/lon object, or ``lat, lon``."""
    props = obj["properties"]
    number = copy.deepcopy(props["x"] if "x" in props else props["pos"]["prefixItems"][0])
    for key in _XY:
        number.pop("title", None)
        props.setdefault(key, copy.deepcopy(number))
    pair = {"type": "array", "prefixItems": [number, number], "minItems": 2, "maxItems": 2}
    props["pos"] = {"anyOf": [pair, _lat_lon_object()]}
    props.update(_lat_lon_object()["properties"])
    required = obj.get("required", [])
    if all(k in required for k in own):
        obj["anyOf"] = [{"required": list(form)} for form in (_XY, ("pos",), _LAT_LON)]
    if rest := [k for k in required if k not in own]:
        obj["required"] = rest
    else:
        obj.pop("required", None)
    km = [{"required": [k]} for k in (*_XY, "pos")]
    obj["dependentRequired"] = {"x": ["y"], "y": ["x"], "lat": ["lon"], "lon": ["lat"]}
    obj["dependentSchemas"] = {"lat": {"not": {"anyOf": km}}}  # lat/lon, or km: not both
    obj["allOf"] = [  # pos as lat/lon: nothing else
        {
            "if": {"properties": {"pos": {"type": "object"}}, "required": ["pos"]},
            "then": {"not": {"anyOf": [{"required": [k]} for k in (*_XY, *_LAT_LON)]}},
        }
    ]


def _lat_lon_object() -> dict[str, Any]:
    """``{"lat": ..., "lon": ...}`` in degrees, bounded as ``planner.geo`` checks them."""
    degrees = "degrees (WGS 84); only in a scenario with a geo origin"
    return {
        "type": "object",
        "properties": {
            "lat": {"type": "number", "minimum": -90, "maximum": 90, "description": degrees},
            "lon": {"type": "number", "minimum": -180, "maximum": 180, "description": degrees},
        },
        "required": list(_LAT_LON),
        "additionalProperties": False,
    }


def _without_lat_lon() -> dict[str, Any]:
    """A scenario without a geo origin: no position anywhere in lat/lon."""
    km_only = {
        "not": {
            "anyOf": [
                {"required": ["lat"]},
                {"required": ["lon"]},
                {"properties": {"pos": {"type": "object"}}, "required": ["pos"]},
            ]
        }
    }
    places = {kind: {"items": km_only} for kind in ("airports", "targets", "sams")}
    places["synthetic_starts"] = {"additionalProperties": km_only}
    return {
        "properties": {
            "environment": {"properties": places},
            "timeline": {"items": km_only},
        }
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
