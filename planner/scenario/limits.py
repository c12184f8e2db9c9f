"""A scenario against the bounds of ``planner.limits``: its sizes and its motion.

* **Sizes** (``size_problems``) on the parsed JSON before it is validated, so a file with a
  million targets is refused by counting, not by building a million objects. They apply to
  what comes in through a door (``planner.scenario.io``); the executive's own rebuilt
  scenarios are not re-counted.
* **Relations** (``motion_problems``) between fields of a valid scenario: one tick's step,
  the longest flight and every stamp within ``MAX_MISSION_TICKS`` (``planner.limits`` says
  why each bound is what it is).

Both return one line per problem, naming its JSON path; empty when all fit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any, assert_never

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
from planner.limits import (
    MAX_AIRPORTS,
    MAX_DRONES,
    MAX_FROZEN_SEGMENTS,
    MAX_MISSION_TICKS,
    MAX_SAMS,
    MAX_SENSOR_TYPES,
    MAX_SYNTHETIC_STARTS,
    MAX_TARGETS,
    MAX_TICK_STEP_KM,
    MAX_TIMELINE,
    SEARCH_BUDGET_BYTES,
    SEARCH_BYTES_PER_DRONE_NODE,
    compile_problem,
)
from planner.model import Scenario

__all__ = ["budget_problems", "motion_problems", "size_problems"]


# ----- sizes, on the parsed JSON ---------------------------------------------------------


def _counted(data: Any) -> Iterator[tuple[str, Any, int, str]]:
    """(JSON path, container, limit, what) for every sized container present in ``data``."""
    if not isinstance(data, Mapping):
        return
    env = data.get("environment")
    if isinstance(env, Mapping):
        yield "$.environment.airports", env.get("airports"), MAX_AIRPORTS, "airports"
        yield "$.environment.targets", env.get("targets"), MAX_TARGETS, "targets"
        yield "$.environment.sams", env.get("sams"), MAX_SAMS, "SAMs"
        yield (
            "$.environment.synthetic_starts",
            env.get("synthetic_starts"),
            MAX_SYNTHETIC_STARTS,
            "synthetic starts",
        )
    drones = data.get("drone_configs")
    yield "$.drone_configs", drones, MAX_DRONES, "drones"
    if isinstance(drones, Mapping) and len(drones) <= MAX_DRONES:
        for drone_id, drone in drones.items():
            if isinstance(drone, Mapping):
                at = f"$.drone_configs[{json.dumps(str(drone_id))}]"
                types = drone.get("accessibleTargets", drone.get("accessible_targets"))
                yield f"{at}.accessibleTargets", types, MAX_SENSOR_TYPES, "sensor types"
                yield f"{at}.allowed_ends", drone.get("allowed_ends"), MAX_AIRPORTS, "airports"
                yield (
                    f"{at}.frozen_segments",
                    drone.get("frozen_segments"),
                    MAX_FROZEN_SEGMENTS,
                    "segments",
                )
    sim = data.get("sim")
    if isinstance(sim, Mapping):
        yield "$.sim.drone_speeds", sim.get("drone_speeds"), MAX_DRONES, "drones"
    yield "$.timeline", data.get("timeline"), MAX_TIMELINE, "edits"


def size_problems(data: Any) -> list[str]:
    """The containers of a parsed scenario that hold more than their limit, one line each
    (``$.environment.targets: 10000 targets, at most 500``). Run before validation."""
    return [
        f"{path}: {len(items)} {what}, at most {limit}"
        for path, items, limit, what in _counted(data)
        if isinstance(items, list | Mapping) and len(items) > limit
    ]


# ----- relations between fields of a valid scenario --------------------------------------


def motion_problems(scenario: Scenario) -> list[str]:
    """One tick's step, each drone's longest flight and the timeline's stamps against the
    bounds above; one line each, naming the JSON path. Empty when all fit."""
    sim = scenario.sim
    hz = sim.tick_hz
    problems: list[str] = []
    speeds = [("$.sim.speed", sim.speed)] + [
        (f"$.sim.drone_speeds[{json.dumps(d)}]", v) for d, v in sim.drone_speeds.items()
    ]
    for path, speed in speeds:
        step = speed / hz
        if step > MAX_TICK_STEP_KM:
            problems.append(
                f"{path}: one tick's step (speed / tick_hz) is {step:g} km, at most"
                f" {MAX_TICK_STEP_KM:g} km so that no tick jumps over a SAM or past the sensor"
                f" range: lower the speed or raise sim.tick_hz to at least"
                f" {math.ceil(speed / MAX_TICK_STEP_KM):g}"
            )
    fuel: dict[str, tuple[float, str]] = {}
    for drone_id, drone in scenario.drone_configs.items():
        fuel[drone_id] = (drone.fuel_budget, f"$.drone_configs[{json.dumps(drone_id)}].fuelBudget")
    for i, edit in enumerate(scenario.timeline):
        match edit:  # the changes that can keep a drone up longer
            case SetFuel() if edit.drone in fuel and edit.fuel > fuel[edit.drone][0]:
                fuel[edit.drone] = (edit.fuel, f"$.timeline[{i}].fuel")
            case (
                SetFuel()
                | AddTarget()
                | RemoveTarget()
                | MoveTarget()
                | SetPriority()
                | AddSam()
                | RemoveSam()
                | MoveSam()
                | RevealSam()
                | DisableDrone()
            ):
                pass
            case _:  # pragma: no cover - the union is closed
                assert_never(edit)
    for drone_id, (km, path) in fuel.items():
        ticks = km / sim.speed_of(drone_id) * hz
        if ticks > MAX_MISSION_TICKS:
            problems.append(
                f"{path}: {km:g} km of fuel at {sim.speed_of(drone_id):g} km/s keeps the drone"
                f" up for {ticks:,.0f} ticks at {hz:g} Hz, at most {MAX_MISSION_TICKS:,}"
            )
    for i, edit in enumerate(scenario.timeline):
        tick = edit.tick_at(hz)
        if tick is not None and tick > MAX_MISSION_TICKS:
            problems.append(
                f"$.timeline[{i}].t: t={edit.t:g} s is tick {tick:,} at {hz:g} Hz,"
                f" at most {MAX_MISSION_TICKS:,}"
            )
    if sim.max_duration is not None and sim.max_duration * hz > MAX_MISSION_TICKS:
        problems.append(
            f"$.sim.max_duration: {sim.max_duration:g} s is {sim.max_duration * hz:,.0f} ticks"
            f" at {hz:g} Hz, at most {MAX_MISSION_TICKS:,}"
        )
    return problems


# ----- budgets of a valid scenario -------------------------------------------------------


def _peaks(scenario: Scenario) -> tuple[int, list[tuple[float, float, float]]]:
    """The most targets at once over the timeline, and every SAM the mission ever holds
    (its initial ones and the timeline's, at their last place)."""
    env = scenario.environment
    targets = {t.id for t in env.targets}
    most = len(targets)
    sams = {s.id: (s.x, s.y, s.range) for s in env.sams}
    hz = scenario.sim.tick_hz
    for edit in sorted(scenario.timeline, key=lambda e: e.tick_at(hz) or 0):
        match edit:  # the changes that add nodes or SAMs to the distance table
            case AddTarget():
                targets.add(edit.id)
                most = max(most, len(targets))
            case RemoveTarget():
                targets.discard(edit.id)
            case AddSam():
                sams[edit.id] = (edit.pos[0], edit.pos[1], edit.range)
            case MoveSam():
                if edit.id in sams:
                    old = sams[edit.id]
                    radius = old[2] if edit.range is None else edit.range
                    sams[edit.id] = (edit.pos[0], edit.pos[1], radius)
            case (
                MoveTarget()
                | SetPriority()
                | RemoveSam()
                | RevealSam()
                | SetFuel()
                | DisableDrone()
            ):
                pass  # a removed SAM stays counted: it was in the table until then
            case _:  # pragma: no cover - the union is closed
                assert_never(edit)
    return most, list(sams.values())


def budget_problems(scenario: Scenario) -> list[str]:
    """The mission against the budgets (``planner.limits``): the distance table's bytes and
    the compile's time for the most nodes it holds at once, and the team search's bytes for
    its drones; one line each, naming the JSON path and the budget. Empty when it fits.

    The SAMs' tangent graph is counted (its bitangents tested, none kept) only when the
    worst graph their number allows could break the time budget."""
    env = scenario.environment
    targets, sams = _peaks(scenario)
    nodes = len(env.airports) + len(env.synthetic_starts) + targets
    problems: list[str] = []
    worst_graph = 4 * len(sams) * max(len(sams) - 1, 0)  # 4 bitangents per pair, 2 ends each
    if compile_problem(nodes, len(sams), worst_graph) is None:
        why = None
    else:
        graph = 0
        if sams and compile_problem(nodes, len(sams), 0) is None:
            from planner.geometry.sam_field import static_nodes

            graph = static_nodes(sams)
        why = compile_problem(nodes, len(sams), graph)
    if why is not None:
        problems.append(f"$.environment.targets: {why}")
    drones = len(scenario.enabled_drones())
    search = SEARCH_BYTES_PER_DRONE_NODE * drones * nodes
    if search > SEARCH_BUDGET_BYTES:
        problems.append(
            f"$.drone_configs: {drones:,} drones over {nodes:,} nodes need about"
            f" {search / 1024**2:,.0f} MiB of search arrays, over the memory budget of"
            f" {SEARCH_BUDGET_BYTES / 1024**2:,.0f} MiB (planner.limits.SEARCH_BUDGET_BYTES)"
        )
    return problems
