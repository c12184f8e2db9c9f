"""Naming a problem where the user wrote it: a JSON path, and pydantic's errors as paths.

A problem is one line ``<JSON path>: <what is wrong>`` (``$.environment.targets[3].priority:
must be >= 0, got -2``). ``json_path`` spells a location; ``schema_problems`` turns a
``ValidationError`` into such lines, with the union tags pydantic adds to a location (which
the user never wrote) taken out by ``schema_loc``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from planner.edits import EDIT_OPS

__all__ = ["json_path", "schema_loc", "schema_problems"]


def json_path(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("drone_configs", "1", "fuelBudget")`` -> ``$.drone_configs["1"].fuelBudget``."""
    out = "$"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier() and part.isascii():
            out += f".{part}"
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def schema_loc(loc: tuple[Any, ...] | list[Any]) -> list[Any]:
    """A pydantic error's location as the user wrote it: union branches add their type name
    to the location, which the user never wrote."""
    return [p for p in loc if not (isinstance(p, str) and _is_tag(p))]


def schema_problems(exc: ValidationError) -> list[str]:
    """A pydantic ValidationError as one ``<JSON path>: <what>`` line per error."""
    problems = []
    for err in exc.errors(include_url=False):
        loc = schema_loc(err["loc"])
        message = err["msg"]
        if err["type"] not in ("missing", "extra_forbidden") and "input" in err:
            message += f", got {_short(err['input'])}"
        problems.append(f"{json_path(loc)}: {message}")
    return _unique(problems)


# Discriminated unions (timeline edits) add their tag, ``op``, to the location too; other
# unions add the branch's type (``list[constrained-str]``, ``function-after[...]``).
_UNION_TAGS = {"list", "literal", "str", "float", "int", "[key]", *EDIT_OPS}
_TYPE_TAG = re.compile(r"[a-z][a-z0-9_-]*\[.*\]", re.S)


def _is_tag(part: str) -> bool:
    return part in _UNION_TAGS or _TYPE_TAG.fullmatch(part) is not None


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
