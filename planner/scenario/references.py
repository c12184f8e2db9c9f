"""The references of a schema-valid scenario that a schema cannot see.

``scenario_problems(scenario)`` names, one line ``<JSON path>: <what>`` each: duplicate ids,
unknown airport ids, a start or an end inside a SAM, a drone with nothing it may visit, a
broken frozen chain, a timeline edit naming something that does not exist at its time, and
the relations between fields (``planner.scenario.limits.motion_problems``). Empty when the
scenario is usable.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import assert_never

import numpy as np

from planner.edits import (
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
from planner.geodesy import geo_problems
from planner.limits import MAX_SAMS, MAX_TARGETS
from planner.model import DroneConfig, Scenario, Target
from planner.scenario.limits import budget_problems, motion_problems

__all__ = ["scenario_problems"]


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

    # Which SAMs may hold a point, for all of them at once (numpy, with a margin: never one
    # fewer than the exact test below finds); each is then tested as it always was, in order.
    # A 1,000-drone, 5,000-target, 500-SAM check took 3.6 s in these tests alone as Python.
    sam_x = np.array([sam.x for sam in env.sams], dtype=float)
    sam_y = np.array([sam.y for sam in env.sams], dtype=float)
    reach = (np.array([sam.range for sam in env.sams], dtype=float) * (1 + 1e-9) + 1e-9) ** 2

    def inside_sam(x: float, y: float) -> str | None:
        if not env.sams:
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            near = np.flatnonzero((sam_x - x) ** 2 + (sam_y - y) ** 2 <= reach)
        for i in near:
            sam = env.sams[int(i)]
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
    # a drone has an eligible target when it senses one of these types
    open_types = {t.type for t in env.targets if t.id not in excluded}
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
        if env.targets and not any(drone.can_sense(kind) for kind in open_types):
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
    problems.extend(geo_problems(scenario))  # what the geographic frame cannot hold
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
            case MoveTarget() | SetPriority() | MoveSam() | SetFuel():
                pass  # a move, a priority or fuel adds or removes nothing
            case _:  # pragma: no cover - the union is closed
                assert_never(edit)
        if isinstance(edit, AddSam | MoveSam) and edit.id in sams:
            x, y = edit.pos
            radius = sam_range[edit.id]
            for place_id, px, py, kind in places:
                if math.hypot(px - x, py - y) < radius:
                    problems.append(f"{at}.pos: SAM {edit.id!r} would cover {kind} {place_id!r}")
    return problems
