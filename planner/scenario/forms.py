"""The forms a scenario file may take beyond the model's own, brought to the model's form.

* **Annotations**: a ``"$schema"`` key at the top (the editor's link to
  ``scenarios/scenario.schema.json``) and a ``"$comment"`` key (a string) in any object are
  notes for people and editors; they are dropped before the schema sees the file.
* **Positions**: targets, airports and synthetic starts hold ``x, y`` and SAMs hold
  ``pos: [x, y]`` (the seed's format, kept), but each accepts the other form too: a target
  may say ``"pos": [25, 35]`` and a SAM ``"x": 35, "y": 45``. Both forms in one object are
  accepted when they agree and are a problem, naming the path, when they do not. The
  timeline's ``add_target``/``move_target`` and ``add_sam``/``move_sam`` follow the same rule.

:func:`normal_form` returns the data in the model's form, the problems found (one line
``<JSON path>: <what>`` each) and the paths whose "field required" the schema would add
because of a problem already named (so that a problem is named once).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from planner.edits import EDIT_MODELS, EDIT_OPS

__all__ = ["ANNOTATION_KEYS", "COMMENT_KEY", "SCHEMA_KEY", "normal_form"]

SCHEMA_KEY = "$schema"  # at the top only: the JSON Schema the file follows
COMMENT_KEY = "$comment"  # in any object: a note for people
ANNOTATION_KEYS = (SCHEMA_KEY, COMMENT_KEY)

# Timeline edits positioned by x, y, and by pos: read from their models' fields.
_XY_EDITS = {op for op, m in zip(EDIT_OPS, EDIT_MODELS) if "x" in m.model_fields}
_POS_EDITS = {op for op, m in zip(EDIT_OPS, EDIT_MODELS) if "pos" in m.model_fields}


def normal_form(data: dict[str, Any]) -> tuple[dict[str, Any], list[str], set[str]]:
    """(data in the model's form, problems, paths whose "field required" is already named).

    ``data`` is not changed; a copy is returned when anything had to change."""
    problems: list[str] = []
    out = _without_annotations(data, "$", problems, top=True)
    quiet: set[str] = set()
    for path, obj, native_xy in _placed(out):
        problems.extend(_one_position(path, obj, native_xy, quiet))
    return out, problems, quiet


def _without_annotations(value: Any, path: str, problems: list[str], *, top: bool = False) -> Any:
    """``value`` without its annotation keys (checked to be strings), at any depth."""
    if isinstance(value, list):
        return [_without_annotations(v, f"{path}[{i}]", problems) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, child in value.items():
        at = _child_path(path, key)
        if key == COMMENT_KEY or (top and key == SCHEMA_KEY):
            if not isinstance(child, str):
                problems.append(f"{at}: must be a string (a note), got {_short(child)}")
            continue
        out[key] = _without_annotations(child, at, problems)
    return out


def _child_path(path: str, key: str) -> str:
    if key.isidentifier() and key.isascii():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def _placed(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(JSON path, object, whether its own form is x, y) of every positioned object."""
    env = data.get("environment")
    if isinstance(env, dict):
        for kind, native_xy in (("airports", True), ("targets", True), ("sams", False)):
            items = env.get(kind)
            if isinstance(items, list):
                for i, obj in enumerate(items):
                    if isinstance(obj, dict):
                        yield f"$.environment.{kind}[{i}]", obj, native_xy
        starts = env.get("synthetic_starts")
        if isinstance(starts, dict):
            for name, obj in starts.items():
                if isinstance(obj, dict):
                    yield f"$.environment.synthetic_starts[{json.dumps(str(name))}]", obj, True
    timeline = data.get("timeline")
    if isinstance(timeline, list):
        for i, obj in enumerate(timeline):
            op = obj.get("op") if isinstance(obj, dict) else None
            if isinstance(op, str) and op in _XY_EDITS | _POS_EDITS:  # else the schema says
                yield f"$.timeline[{i}]", obj, op in _XY_EDITS


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _one_position(path: str, obj: dict[str, Any], native_xy: bool, quiet: set[str]) -> list[str]:
    """Bring ``obj`` (in place) to its native form; the problems found."""
    has_xy = "x" in obj or "y" in obj
    has_pos = "pos" in obj
    if (native_xy and not has_pos) or (not native_xy and not has_xy):
        return []  # already in its own form (the schema checks it)
    native = "x, y" if native_xy else "pos"
    if has_pos and not (
        isinstance(obj["pos"], list) and len(obj["pos"]) == 2 and all(map(_number, obj["pos"]))
    ):
        problem = f"{path}.pos: must be [x, y], two numbers (km), got {_short(obj['pos'])}"
        if native_xy:  # named here; the schema would add "x, y: field required"
            quiet.update({f"{path}.x", f"{path}.y"})
            del obj["pos"]
        return [problem]
    if has_xy and not ("x" in obj and "y" in obj):
        missing = "y" if "x" in obj else "x"
        if not native_xy:
            quiet.add(f"{path}.pos")
            obj.pop("x", None)
            obj.pop("y", None)
        return [f"{path}: x and y go together: {missing} is missing"]
    if not has_pos:  # a SAM given x, y
        obj["pos"] = [obj.pop("x"), obj.pop("y")]
        return []
    if not has_xy:  # a target given pos
        obj["x"], obj["y"] = obj.pop("pos")
        return []
    x, y = obj["x"], obj["y"]
    pos = obj.pop("pos")
    if not native_xy:  # the object's own form stays, the other goes
        del obj["x"], obj["y"]
        obj["pos"] = pos
    if _number(x) and _number(y) and _same(x, pos[0]) and _same(y, pos[1]):
        return []
    return [
        f"{path}: x, y ({_short(x)}, {_short(y)}) and pos {_short(pos)} disagree:"
        f" give the position once ({native} is this object's own form)"
    ]


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.0, abs_tol=1e-9)


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
