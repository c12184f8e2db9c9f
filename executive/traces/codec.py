"""Stamped inputs (edits and commands) to JSON and back: what the trace store records and a
replay resubmits, exactly."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import TypeAdapter

from planner.edits import Edit, model_of, parse_edit
from planner.path_codec import path_from_json, path_to_json
from sim.commands import Command, FlyPath

__all__ = ["input_from_json", "input_to_json", "recorded_edit"]

_COMMAND = TypeAdapter(Command)


def input_to_json(item: Edit | Command) -> tuple[str, dict[str, Any]]:
    """(kind, payload): kind is "edit" or "command".

    A ``FlyPath`` is written by hand, its path in ``planner.path_codec``'s exact form, so a
    replay flies the very same geometry; every other input is its model's JSON dump.
    """
    if hasattr(item, "op"):
        return "edit", item.model_dump(mode="json")
    if isinstance(item, FlyPath):
        return "command", {
            "kind": "fly_path",
            "drone": item.drone,
            "tick": item.tick,
            "path": path_to_json(item.path),
            "waypoints": [[t, s] for t, s in item.waypoints],
        }
    return "command", item.model_dump(mode="json")


def input_from_json(kind: str, payload: dict[str, Any]) -> Edit | Command:
    """The input ``input_to_json`` wrote, rebuilt (kind "edit", else a command).

    A payload that is not one raises: pydantic's ``ValidationError`` for an edit or a
    command, ``PlannerError`` for a malformed path, ``KeyError`` for a missing field.
    """
    if kind == "edit":
        return parse_edit(payload)
    if payload.get("kind") == "fly_path":
        return FlyPath(
            drone=payload["drone"],
            tick=payload["tick"],
            path=path_from_json(payload["path"]),
            waypoints=tuple((t, float(s)) for t, s in payload["waypoints"]),
        )
    return _COMMAND.validate_python(payload)


def recorded_edit(data: Any) -> Edit | None:
    """The edit an event record carries (``edit_applied``'s ``edit``), typed for a ``match``
    but not validated again (it was when it was made, and an audit reads what is there);
    None when ``data`` is not an edit of a known op."""
    if not isinstance(data, Mapping):
        return None
    model = model_of(str(data.get("op")))
    if model is None:
        return None
    return cast(Edit, model.model_construct(**{str(k): v for k, v in data.items()}))
