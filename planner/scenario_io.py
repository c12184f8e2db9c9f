"""Reading scenario files: JSON text in, a checked ``Scenario`` out, or every problem named.

A problem is one line ``<JSON path>: <what is wrong>`` (``$.environment.targets[3].priority:
must be >= 0, got -2``), so a user can fix a file without reading a traceback. Schema errors
come from pydantic; the cross-references a schema cannot see (unknown airport ids, duplicate
ids, a start inside a SAM, a drone with nothing it may visit, a broken frozen chain) are
checked here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planner.edits import EDIT_OPS
from planner.errors import PlannerError
from planner.model import Scenario

__all__ = ["ScenarioError", "json_path", "load_scenario", "parse_scenario", "scenario_problems"]


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
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}"
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file; raise ScenarioError naming every problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(str(path), ["$: file not found"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(str(path), [f"$: cannot read file ({exc})"]) from None
    return parse_scenario(text, source=str(path))


def parse_scenario(text: str | bytes | dict, source: str = "<scenario>") -> Scenario:
    if isinstance(text, dict):
        data = text
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(
                source, [f"$: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]
            ) from None
    if not isinstance(data, dict):
        raise ScenarioError(source, [f"$: must be a JSON object, got {type(data).__name__}"])
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(source, _schema_problems(exc)) from None
    problems = scenario_problems(scenario)
    if problems:
        raise ScenarioError(source, problems)
    return scenario


def _schema_problems(exc: ValidationError) -> list[str]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        # Union branches add their type name to the location; the user never wrote it.
        loc = [p for p in loc if not (isinstance(p, str) and ("[" in p or p in _UNION_TAGS))]
        message = err["msg"]
        if err["type"] not in ("missing", "extra_forbidden") and "input" in err:
            message += f", got {_short(err['input'])}"
        problems.append(f"{json_path(loc)}: {message}")
    return _unique(problems)


# Discriminated unions (timeline edits) add their tag, ``op``, to the location too.
_UNION_TAGS = {"list", "literal", "str", "float", "int", *EDIT_OPS}


def _short(value: Any) -> str:
    text = json.dumps(value) if _jsonable(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=True)
        return True
    except (TypeError, ValueError):
        return False


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
    for i, target in enumerate(env.targets):
        if target.id in airport_ids:
            problems.append(f"$.environment.targets[{i}].id: {target.id!r} is also an airport id")
    for start_id in env.synthetic_starts:
        if start_id in airport_ids or env.target(start_id) is not None:
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
        start_pos = env.position(drone.start) if drone.start in start_ids else None
        if start_pos is not None and (sam_id := inside_sam(*start_pos)):
            problems.append(f"{at}.start_airport: start {drone.start!r} is inside SAM {sam_id!r}")
        for end_id in drone.end_options(sorted(airport_ids)):
            end_pos = env.position(end_id) if end_id in airport_ids else None
            if end_pos is not None and (sam_id := inside_sam(*end_pos)):
                problems.append(f"{at}: end airport {end_id!r} is inside SAM {sam_id!r}")
        if not drone.enabled:
            continue
        eligible = [
            t for t in env.targets if t.id not in excluded and drone.can_sense(t.type)
        ]
        if env.targets and not eligible:
            problems.append(
                f"{at}.accessibleTargets: drone has no eligible target"
                f" (sensors {drone.accessible_targets!r}; targets inside SAMs are excluded)"
            )
        problems.extend(_frozen_chain_problems(at, drone_id, drone, env, excluded, frozen_owner))
    problems.extend(_sim_problems(scenario))
    problems.extend(_timeline_problems(scenario))
    return problems


def _frozen_chain_problems(at, drone_id, drone, env, excluded, frozen_owner) -> list[str]:
    problems = []
    previous = drone.start
    for i, seg in enumerate(drone.frozen_segments):
        where = f"{at}.frozen_segments[{i}]"
        if seg.from_ != previous:
            problems.append(f"{where}.from: chain broken, expected {previous!r}, got {seg.from_!r}")
        for field, node_id in (("from", seg.from_), ("to", seg.to)):
            if env.position(node_id) is None:
                problems.append(f"{where}.{field}: unknown id {node_id!r}")
        target = env.target(seg.to)
        if target is not None:
            if target.id in excluded:
                problems.append(f"{where}.to: target {target.id!r} is inside a SAM")
            if not drone.can_sense(target.type):
                problems.append(
                    f"{where}.to: drone cannot sense target {target.id!r} of type {target.type!r}"
                )
            owner = frozen_owner.setdefault(target.id, drone_id)
            if owner != drone_id or drone.frozen_route().count(target.id) > 1:
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
        op = edit.op
        if op == "add_target":
            if edit.id in targets or edit.id in node_ids:
                problems.append(f"{at}.id: id {edit.id!r} already exists {when}")
            targets.add(edit.id)
        elif op in ("remove_target", "move_target", "set_priority"):
            if edit.id not in targets:
                problems.append(f"{at}.id: unknown target id {edit.id!r} {when}")
            elif op == "remove_target":
                targets.discard(edit.id)
        elif op == "add_sam":
            if edit.id in sams:
                problems.append(f"{at}.id: SAM id {edit.id!r} already exists {when}")
            sams[edit.id] = edit.hidden
            sam_range[edit.id] = edit.range
        elif op in ("remove_sam", "move_sam", "reveal_sam"):
            if edit.id not in sams:
                problems.append(f"{at}.id: unknown SAM id {edit.id!r} {when}")
            elif op == "remove_sam":
                del sams[edit.id]
            elif op == "reveal_sam" and not sams[edit.id]:
                problems.append(f"{at}.id: SAM {edit.id!r} is not hidden {when}")
            elif op == "reveal_sam":
                sams[edit.id] = False
            elif edit.range is not None:
                sam_range[edit.id] = edit.range
        elif op in ("disable_drone", "set_fuel"):
            if edit.drone not in scenario.drone_configs:
                problems.append(f"{at}.drone: unknown drone id {edit.drone!r}")
            elif edit.drone in lost:
                problems.append(f"{at}.drone: drone {edit.drone!r} is already disabled {when}")
            elif op == "disable_drone":
                lost.add(edit.drone)
        if op in ("add_sam", "move_sam") and edit.id in sams:
            x, y = edit.pos
            radius = sam_range[edit.id]
            for place_id, px, py, kind in places:
                if math.hypot(px - x, py - y) < radius:
                    problems.append(f"{at}.pos: SAM {edit.id!r} would cover {kind} {place_id!r}")
    return problems
