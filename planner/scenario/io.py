"""Reading scenario files: JSON text in, a checked ``Scenario`` out, or every problem named.

A problem is one line ``<JSON path>: <what is wrong>`` (``$.environment.targets[3].priority:
must be >= 0, got -2``), so a user can fix a file without reading a traceback. The JSON is
read strictly first (``parse_json``): at most ``limits.MAX_SCENARIO_BYTES``, nested at most
``limits.MAX_JSON_DEPTH`` deep, no key twice in one object (named by the object's path),
integers of any length. Then the sizes (``planner.scenario.limits.size_problems``), then
the schema (pydantic, strict types, every number bounded by ``planner.limits``), the
cross-references a schema cannot see and the relations between fields, all named at once
(``planner.scenario.check``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from planner.errors import PlannerError
from planner.geo import localize
from planner.limits import MAX_JSON_DEPTH, MAX_SCENARIO_BYTES
from planner.model import Scenario
from planner.scenario.check import check_scenario_data
from planner.scenario.limits import size_problems
from planner.scenario.paths import json_path

__all__ = [
    "ScenarioError",
    "load_scenario",
    "parse_json",
    "parse_scenario",
    "read_json_file",
]


class ScenarioError(PlannerError):
    """A scenario that cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: {len(problems)} problem(s)\n" + "\n".join(problems))

    def __reduce__(self) -> tuple[type[ScenarioError], tuple[str, list[str]]]:
        # raised in a worker process (isr eval on Dask, a process pool), it must unpickle
        return (type(self), (self.source, self.problems))


def read_json_file(path: str | Path) -> str | bytes:
    """The bytes of a JSON file, at most ``MAX_SCENARIO_BYTES`` of them, or ScenarioError
    (``$: file not found``, too large, unreadable) naming the file."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SCENARIO_BYTES + 1)
    except FileNotFoundError:
        raise ScenarioError(str(path), ["$: file not found"]) from None
    except OSError as exc:
        raise ScenarioError(str(path), [f"$: cannot read file ({exc.strerror or exc})"]) from None
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            str(path), [f"$: file larger than {MAX_SCENARIO_BYTES:,} bytes (the limit)"]
        )
    return data


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file; raise ScenarioError naming every problem."""
    return parse_scenario(read_json_file(path), source=str(path))


def parse_scenario(text: str | bytes | dict[str, Any], source: str = "<scenario>") -> Scenario:
    """Check a scenario given as JSON text or already-parsed data; raise ScenarioError naming
    every problem (``source`` names it in the messages).
    """
    if isinstance(text, dict):
        data: Any = text
        problems = _structure_problems(data)
        if problems:
            raise ScenarioError(source, problems)
    else:
        data = parse_json(text, source)
    if not isinstance(data, dict):
        raise ScenarioError(source, [f"$: must be a JSON object, got {type(data).__name__}"])
    problems = size_problems(data)
    if problems:
        raise ScenarioError(source, problems)
    data, problems = localize(data)  # lat/lon positions to km, by the geo origin
    if problems:
        raise ScenarioError(source, problems)
    try:
        # the form, the schema and the references, all named at once (planner.scenario.check)
        scenario, problems = check_scenario_data(data)
    except RecursionError:  # already-parsed data nested past what the validator can walk
        raise ScenarioError(source, [f"$: nested deeper than {MAX_JSON_DEPTH} levels"]) from None
    if problems or scenario is None:
        raise ScenarioError(source, problems)
    return scenario


# ----- strict JSON -------------------------------------------------------------------------

# An integer literal longer than this is read as a float (inf past 1e308): Python refuses
# to convert more than 4300 digits, and no bound here needs more than a few.
_MAX_INT_DIGITS = 30


class _Object(dict[str, Any]):
    """A JSON object that had a key more than once (the keys named in ``duplicates``)."""

    duplicates: list[str]


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    marked = _Object(out)
    marked.duplicates = [k for k, n in Counter(k for k, _ in pairs).items() if n > 1]
    return marked


def _int(literal: str) -> int | float:
    return int(literal) if len(literal) <= _MAX_INT_DIGITS else float(literal)


def parse_json(text: str | bytes, source: str = "<json>") -> Any:
    """JSON text to data, refusing what ``json.loads`` would take silently or choke on:
    text over ``MAX_SCENARIO_BYTES``, nesting deeper than ``MAX_JSON_DEPTH``, a key twice in
    one object (each named by the object's JSON path). ``NaN`` and ``Infinity`` come
    through as floats, for the schema's "finite number" to name. ScenarioError otherwise.
    """
    if len(text) > MAX_SCENARIO_BYTES:
        raise ScenarioError(source, [f"$: larger than {MAX_SCENARIO_BYTES:,} bytes (the limit)"])
    if isinstance(text, bytes):
        try:
            text = text.decode(json.detect_encoding(text), "surrogatepass")
        except UnicodeDecodeError as exc:
            raise ScenarioError(source, [f"$: cannot decode the text ({exc.reason})"]) from None
    try:
        data = json.loads(text, object_pairs_hook=_object, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            source, [f"$: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]
        ) from None
    except RecursionError:
        raise ScenarioError(source, [f"$: nested deeper than {MAX_JSON_DEPTH} levels"]) from None
    problems = _structure_problems(data)
    if problems:
        raise ScenarioError(source, problems)
    return data


def _structure_problems(data: Any) -> list[str]:
    """Objects with a key twice, and the first container nested too deep, by JSON path."""
    problems: list[str] = []
    too_deep = False
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, dict):
            children: Any = value.items()
        elif isinstance(value, list):
            children = enumerate(value)
        else:
            continue
        if len(loc) >= MAX_JSON_DEPTH:
            if not too_deep:
                problems.append(f"{json_path(loc)}: nested deeper than {MAX_JSON_DEPTH} levels")
                too_deep = True
            continue
        if isinstance(value, _Object):
            keys = ", ".join(json.dumps(k) for k in value.duplicates)
            problems.append(f"{json_path(loc)}: key given more than once: {keys}")
        # reversed, so that problems come out in the order of the document; only containers
        # (a scalar has no keys and no depth: pushing the numbers of a large file cost more
        # than parsing it)
        stack.extend(
            reversed([(c, (*loc, key)) for key, c in children if isinstance(c, dict | list)])
        )
    return problems
