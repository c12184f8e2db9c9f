"""Reading scenario files: JSON text in, a checked ``Scenario`` out, or every problem named.

A problem is one line ``<JSON path>: <what is wrong>`` (``$.environment.targets[3].priority:
must be >= 0, got -2``), so a user can fix a file without reading a traceback. The JSON is
read strictly first (``parse_json``): at most ``limits.MAX_SCENARIO_BYTES``, nested at most
``limits.MAX_JSON_DEPTH`` deep, no key twice in one object (named by the object's path),
integers of any length. Then the sizes (``limits.size_problems``), then the schema
(pydantic, strict types, every number bounded by ``planner.limits``); the
cross-references a schema cannot see (unknown airport ids, duplicate ids, a start inside a
SAM, a drone with nothing it may visit, a broken frozen chain) and the relations between
fields (``limits.motion_problems``: one tick's step, the longest flight) are checked here.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planner.edits import (
    EDIT_OPS,
    AddSam,
    AddTarget,
    DisableDrone,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    RevealSam,
    SetFuel,
    SetPriority,
)
from planner.errors import PlannerError
from planner.geo import localize
from planner.limits import (
    MAX_JSON_DEPTH,
    MAX_SAMS,
    MAX_SCENARIO_BYTES,
    MAX_TARGETS,
    budget_problems,
    motion_problems,
    size_problems,
)
from planner.model import DroneConfig, Scenario, Target
from planner.scenario_check import check_scenario_data

__all__ = [
    "ScenarioError",
    "json_path",
    "load_scenario",
    "parse_json",
    "parse_scenario",
    "read_json_file",
    "scenario_problems",
    "schema_loc",
    "schema_problems",
]


class ScenarioError(PlannerError):
    """A scenario that cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: {len(problems)} problem(s)\n" + "\n".join(problems))


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
        # the form, the schema and the references, all named at once (planner.scenario_check)
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
        # reversed, so that problems come out in the order of the document
        stack.extend(reversed([(child, (*loc, key)) for key, child in children]))
    return problems


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


def scenario_problems(scenario: Scenario) -> list[str]:
    """Cross-reference checks on a schema-valid scenario; empty when it is usable."""
    env = scenario.environment
    problems: list[str] = []

    def duplicates(kind: str, ids: list[str]) -> None:
        seen: dict[str, int] = {}
        for i, node_id in enumerate(ids):
            if node_id in seen:
                problems.append(
                    f"$.environment.{kind}[{i}].id: duplicate id {node_id!r}"
                    f" (also at index {seen[node_id]})"
                )
            seen.setdefault(node_id, i)

    duplicates("airports", [a.id for a in env.airports])
    duplicates("targets", [t.id for t in env.targets])
    duplicates("sams", [s.id for s in env.sams])
    # Airports, targets and synthetic starts share one namespace: the distance matrix's.
    airport_ids = {a.id for a in env.airports}
    targets = {t.id: t for t in reversed(env.targets)}  # the first of a duplicated id
    for i, target in enumerate(env.targets):
        if target.id in airport_ids:
            problems.append(f"$.environment.targets[{i}].id: {target.id!r} is also an airport id")
    for start_id in env.synthetic_starts:
        if start_id in airport_ids or start_id in targets:
            problems.append(
                f"$.environment.synthetic_starts[{json.dumps(start_id)}]: id {start_id!r}"
                " is already an airport or target id"
            )

    def inside_sam(x: float, y: float) -> str | None:
        for sam in env.sams:
            if math.hypot(x - sam.x, y - sam.y) < sam.range:
                return sam.id
        return None

    excluded = {t.id for t in env.targets if inside_sam(t.x, t.y)}
    start_ids = airport_ids | set(env.synthetic_starts)
    # Where each id is, as Environment.position finds it (airports, then targets, then
    # starts; the first of a duplicated id), looked up once.
    positions: dict[str, tuple[float, float]] = {
        k: (p.x, p.y) for k, p in env.synthetic_starts.items()
    }
    positions.update((t.id, (t.x, t.y)) for t in reversed(env.targets))
    positions.update((a.id, (a.x, a.y)) for a in reversed(env.airports))
    frozen_owner: dict[str, str] = {}
    for drone_id, drone in scenario.drone_configs.items():
        at = f"$.drone_configs[{json.dumps(drone_id)}]"
        if drone.home is None:
            problems.append(f"{at}: needs a home_airport or a start_airport")
            continue
        for field, value, allowed, kind in (
            ("home_airport", drone.home_airport, airport_ids, "airport"),
            ("start_airport", drone.start_airport, start_ids, "airport or synthetic start"),
            ("end_airport", drone.end_airport, airport_ids, "airport"),
        ):
            if value is not None and value not in allowed:
                problems.append(f"{at}.{field}: unknown {kind} id {value!r}")
        for i, end_id in enumerate(drone.allowed_ends or []):
            if end_id not in airport_ids:
                problems.append(f"{at}.allowed_ends[{i}]: unknown airport id {end_id!r}")
        if drone.mode == "return" and drone.home not in airport_ids:
            problems.append(f"{at}: mode 'return' needs a home_airport that is an airport")
        start_pos = positions.get(drone.start) if drone.start in start_ids else None
        if start_pos is not None and (sam_id := inside_sam(*start_pos)):
            problems.append(f"{at}.start_airport: start {drone.start!r} is inside SAM {sam_id!r}")
        for end_id in drone.end_options(sorted(airport_ids)):
            end_pos = positions.get(end_id) if end_id in airport_ids else None
            if end_pos is not None and (sam_id := inside_sam(*end_pos)):
                problems.append(f"{at}: end airport {end_id!r} is inside SAM {sam_id!r}")
        if not drone.enabled:
            continue
        eligible = [t for t in env.targets if t.id not in excluded and drone.can_sense(t.type)]
        if env.targets and not eligible:
            problems.append(
                f"{at}.accessibleTargets: drone has no eligible target"
                f" (sensors {drone.accessible_targets!r}; targets inside SAMs are excluded)"
            )
        problems.extend(
            _frozen_chain_problems(at, drone_id, drone, positions, targets, excluded, frozen_owner)
        )
    problems.extend(_sim_problems(scenario))
    problems.extend(_timeline_problems(scenario))
    problems.extend(motion_problems(scenario))
    if not problems:  # the budgets of a mission that is otherwise usable
        problems.extend(budget_problems(scenario))
    return problems


def _frozen_chain_problems(
    at: str,
    drone_id: str,
    drone: DroneConfig,
    positions: dict[str, tuple[float, float]],
    targets: dict[str, Target],
    excluded: set[str],
    frozen_owner: dict[str, str],
) -> list[str]:
    """Problems of one drone's frozen chain: broken links, unknown ids, targets inside a SAM
    or beyond its sensors, and targets frozen on two drones (``frozen_owner`` is shared)."""
    problems = []
    previous = drone.start
    times = Counter(drone.frozen_route())
    for i, seg in enumerate(drone.frozen_segments):
        where = f"{at}.frozen_segments[{i}]"
        if seg.from_ != previous:
            problems.append(f"{where}.from: chain broken, expected {previous!r}, got {seg.from_!r}")
        for field, node_id in (("from", seg.from_), ("to", seg.to)):
            if node_id not in positions:
                problems.append(f"{where}.{field}: unknown id {node_id!r}")
        target = targets.get(seg.to)
        if target is not None:
            if target.id in excluded:
                problems.append(f"{where}.to: target {target.id!r} is inside a SAM")
            if not drone.can_sense(target.type):
                problems.append(
                    f"{where}.to: drone cannot sense target {target.id!r} of type {target.type!r}"
                )
            owner = frozen_owner.setdefault(target.id, drone_id)
            if owner != drone_id or times[target.id] > 1:
                problems.append(f"{where}.to: target {target.id!r} is frozen twice")
        previous = seg.to
    return problems


def _sim_problems(scenario: Scenario) -> list[str]:
    return [
        f"$.sim.drone_speeds[{json.dumps(drone_id)}]: unknown drone id {drone_id!r}"
        for drone_id in scenario.sim.drone_speeds
        if drone_id not in scenario.drone_configs
    ]


def _timeline_problems(scenario: Scenario) -> list[str]:
    """Replay the timeline in stamp order on the ids alone: every edit must name something
    that exists at its time, add nothing twice, and no SAM may cover an airport or start."""
    env = scenario.environment
    hz = scenario.sim.tick_hz
    problems: list[str] = []
    stamps: list[tuple[int, int]] = []
    for i, edit in enumerate(scenario.timeline):
        tick = edit.tick_at(hz)
        if tick is None:
            problems.append(f'$.timeline[{i}]: needs "t" (seconds) or "tick"')
        else:
            stamps.append((tick, i))
    targets = {t.id for t in env.targets}
    sams = {s.id: False for s in env.sams}  # id -> hidden
    lost: set[str] = set()
    places = [(a.id, a.x, a.y, "airport") for a in env.airports]
    places += [(k, p.x, p.y, "synthetic start") for k, p in env.synthetic_starts.items()]
    node_ids = {a.id for a in env.airports} | set(env.synthetic_starts)
    sam_range = {s.id: s.range for s in env.sams}
    for tick, i in sorted(stamps):
        edit = scenario.timeline[i]
        at = f"$.timeline[{i}]"
        when = f"at t={tick / hz:g} s"
        match edit:
            case AddTarget():
                if edit.id in targets or edit.id in node_ids:
                    problems.append(f"{at}.id: id {edit.id!r} already exists {when}")
                targets.add(edit.id)
                if len(targets) == MAX_TARGETS + 1:
                    problems.append(
                        f"{at}: more than {MAX_TARGETS} targets {when}, at most {MAX_TARGETS}"
                    )
            case RemoveTarget() | MoveTarget() | SetPriority() if edit.id not in targets:
                problems.append(f"{at}.id: unknown target id {edit.id!r} {when}")
            case RemoveTarget():
                targets.discard(edit.id)
            case AddSam():
                if edit.id in sams:
                    problems.append(f"{at}.id: SAM id {edit.id!r} already exists {when}")
                sams[edit.id] = edit.hidden
                sam_range[edit.id] = edit.range
                if len(sams) == MAX_SAMS + 1:
                    problems.append(f"{at}: more than {MAX_SAMS} SAMs {when}, at most {MAX_SAMS}")
            case RemoveSam() | MoveSam() | RevealSam() if edit.id not in sams:
                problems.append(f"{at}.id: unknown SAM id {edit.id!r} {when}")
            case RemoveSam():
                del sams[edit.id]
            case RevealSam() if not sams[edit.id]:
                problems.append(f"{at}.id: SAM {edit.id!r} is not hidden {when}")
            case RevealSam():
                sams[edit.id] = False
            case MoveSam() if edit.range is not None:
                sam_range[edit.id] = edit.range
            case DisableDrone() | SetFuel() if edit.drone not in scenario.drone_configs:
                problems.append(f"{at}.drone: unknown drone id {edit.drone!r}")
            case DisableDrone() | SetFuel() if edit.drone in lost:
                problems.append(f"{at}.drone: drone {edit.drone!r} is already disabled {when}")
            case DisableDrone():
                lost.add(edit.drone)
        if isinstance(edit, AddSam | MoveSam) and edit.id in sams:
            x, y = edit.pos
            radius = sam_range[edit.id]
            for place_id, px, py, kind in places:
                if math.hypot(px - x, py - y) < radius:
                    problems.append(f"{at}.pos: SAM {edit.id!r} would cover {kind} {place_id!r}")
    return problems
