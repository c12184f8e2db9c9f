"""The mission as a question is asked about it: one frozen value, live or from a trace.

``MissionState`` is what the coordinator, the responder and what-if planning read: the
scenario as loaded, the *known* environment at the state's tick (belief, never truth: a
hidden SAM is not in it), per drone its status, position, fuel left, fuel budget, points,
committed route, the targets it still has to collect and the length of the path it still
has to fly (so its fuel margin), the collected targets, the committed plan, the operator's
constraints and the tick. It never holds a live object: answering from it cannot change a
run.

Builders
    ``from_executive(executive)`` -- the live state (call it on the executive's event loop,
    between ticks: it reads the simulation's world).
    ``from_trace(reader, run_id)`` -- a stored run: ``runs.scenario``, the last telemetry
    row (its tick is the state's tick), the last committed ``plan_versions`` row, the
    events up to that tick (collected targets, lost drones, known-environment changes:
    edits applied, SAMs detected or revealed) and the recorded commands (the length of each
    flying drone's current path).

Remaining path (``DroneState.remaining_km``): flying -> the current flight's length minus
the arc length flown; parked with a planned route -> that route's length; landed -> 0;
holding or lost -> None (unknown / meaningless). The fuel margin is fuel left minus it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from executive.errors import ExecutiveError
from planner.geometry import SamField
from planner.model import Environment, Scenario, Solution, drone_label
from planner.scenario_io import ScenarioError, parse_scenario

__all__ = ["DroneState", "MissionState", "from_executive", "from_trace"]

Source = Literal["live", "stored"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DroneState(_Frozen):
    id: str
    status: str  # parked | flying | holding | landed | lost
    x: float
    y: float
    heading: float = 0.0
    fuel: float  # km of flight left
    budget: float  # the scenario's fuel budget
    points: float = 0.0  # collected so far
    sensors: list[str] | Literal["ALL"] = "ALL"
    home: str | None = None
    route: list[str] = Field(default_factory=list)  # in the committed plan (remainder form)
    planned_targets: list[str] = Field(default_factory=list)  # on the route, not collected
    remaining_km: float | None = None  # path still to fly (see the module docstring)
    collected: list[str] = Field(default_factory=list)
    lost_reason: str | None = None

    @property
    def label(self) -> str:
        return drone_label(self.id)

    @property
    def margin_km(self) -> float | None:
        """Fuel left once the planned path is flown (None when it cannot be known)."""
        if self.status == "lost" or self.remaining_km is None:
            return None
        return self.fuel - self.remaining_km

    @property
    def airborne(self) -> bool:
        return self.status in ("flying", "holding")


class MissionState(_Frozen):
    source: Source
    run_id: str
    tick: int
    time: float  # simulated seconds
    mode: str  # FLYING | PLANNING | REVIEW | PAUSED (live); the run's status (stored)
    scenario: Scenario  # as loaded: drone configs, sim settings
    environment: Environment  # the KNOWN environment at ``tick``
    drones: dict[str, DroneState]
    collected: dict[str, str] = Field(default_factory=dict)  # target -> drone
    plan_id: str | None = None
    plan: Solution | None = None  # the committed plan
    constraints: dict[str, Any] = Field(default_factory=dict)
    excluded: list[str] = Field(default_factory=list)  # strictly inside a known SAM
    fuel_reserve: float = 0.0

    # ----- lookups ---------------------------------------------------------------------

    def drone(self, drone_id: str) -> DroneState | None:
        if drone_id in self.drones:
            return self.drones[drone_id]
        return next((d for d in self.drones.values() if d.label == drone_id), None)

    def priority(self, target_id: str) -> float:
        target = self.environment.target(target_id)
        return float(target.priority) if target is not None else 0.0

    @property
    def target_ids(self) -> list[str]:
        return [t.id for t in self.environment.targets]

    @property
    def collected_points(self) -> float:
        return float(sum(d.points for d in self.drones.values()))

    @property
    def planned_by(self) -> dict[str, str]:
        """Targets still to collect under the committed plan -> their drone."""
        return {t: d.id for d in self.drones.values() if d.status != "lost"
                for t in d.planned_targets}

    @property
    def points_to_collect(self) -> float:
        return float(sum(self.priority(t) for t in self.planned_by))

    @property
    def planned_points(self) -> float:
        """Collected so far plus what the committed plan still collects."""
        return self.collected_points + self.points_to_collect

    @property
    def open_targets(self) -> list[str]:
        """Known targets not collected yet."""
        return [t.id for t in self.environment.targets if t.id not in self.collected]

    @property
    def unassigned(self) -> list[str]:
        """Open targets that no drone's committed route will collect (excluded included)."""
        planned = self.planned_by
        return [t for t in self.open_targets if t not in planned]

    def sensors_for(self, target_id: str) -> list[str]:
        """Drones (not lost) whose sensors can see this target's type."""
        target = self.environment.target(target_id)
        if target is None:
            return []
        return [d.id for d in self.drones.values() if d.status != "lost"
                and (d.sensors == "ALL" or target.type in d.sensors)]

    def sam_containing(self, target_id: str) -> tuple[str, float, float] | None:
        """(SAM id, distance to its centre, its range) of a known SAM the target is inside."""
        target = self.environment.target(target_id)
        if target is None:
            return None
        for sam in self.environment.sams:
            dist = math.hypot(target.x - sam.x, target.y - sam.y)
            if dist < sam.range:
                return sam.id, dist, sam.range
        return None


def _excluded(environment: Environment) -> list[str]:
    return [t.id for t in environment.targets
            if any(math.hypot(t.x - s.x, t.y - s.y) < s.range for s in environment.sams)]


def _planned(route: list[str], collected: Mapping[str, str], environment: Environment) -> list[str]:
    live = {t.id for t in environment.targets}
    return [n for n in route if n in live and n not in collected]


# ----------------------------------------------------------------------------- live


def from_executive(executive) -> MissionState:
    """The live state of ``executive`` (started: it has a sim). Reads, never writes."""
    sim = executive.sim
    if sim is None:
        raise ExecutiveError("the mission has not started: there is no state to answer from")
    world = sim.world
    known = world.known_environment
    collected = dict(world.collected())
    plan = executive.plan
    view = world.fleet_view(sim.tick)
    lost_reasons = dict(zip(view.ids, view.lost_reasons))
    points = {d: float(p) for d, p in zip(view.ids, view.points)}
    drones: dict[str, DroneState] = {}
    for drone_id, config in executive.scenario.drone_configs.items():
        status = world.status(drone_id)
        x, y, heading = world.position(drone_id)
        route = list(plan.routes[drone_id].route) if plan is not None and drone_id in plan.routes else []
        planned = _planned(route, collected, known)
        flight = world.flight(drone_id)
        if status == "flying" and flight is not None and not flight.holding:
            remaining: float | None = max(0.0, flight.length - world.progress(drone_id))
        elif status == "parked":
            remaining = plan.routes[drone_id].distance if planned else 0.0
        elif status == "landed":
            remaining = 0.0
        else:  # holding (its way on depends on a resume) or lost
            remaining = None
        drones[drone_id] = DroneState(
            id=drone_id, status=status, x=x, y=y, heading=heading, fuel=world.fuel(drone_id),
            budget=config.fuel_budget, points=points.get(drone_id, 0.0),
            sensors=config.accessible_targets, home=config.home, route=route,
            planned_targets=planned, remaining_km=remaining,
            collected=[t for t, d in collected.items() if d == drone_id],
            lost_reason=lost_reasons.get(drone_id))
    return MissionState(
        source="live", run_id=executive.run_id, tick=sim.tick, time=sim.time,
        mode=executive.mode, scenario=executive.scenario, environment=known, drones=drones,
        collected=collected, plan_id=executive.plan_id, plan=plan,
        constraints=dict(executive.constraints), excluded=_excluded(known),
        fuel_reserve=executive.policy.fuel_reserve)


# ----------------------------------------------------------------------------- stored


def from_trace(reader, run_id: str) -> MissionState:
    """The state of a stored run at its last telemetry row (``run_id`` may be a prefix)."""
    run = reader.run(run_id)
    rid = run["run_id"]
    try:
        scenario = parse_scenario(dict(run["scenario"]), f"run {rid}")
    except ScenarioError as exc:
        raise ExecutiveError(f"run {rid}: its stored scenario does not load: {exc}") from exc
    telemetry = reader.last_telemetry(rid)
    tick = int(telemetry["tick"]) if telemetry is not None else 0
    events = reader.events(rid)
    known, collected, lost = _replay_events(scenario, events, tick)
    plan_id, plan = _last_committed(reader.plan_versions(rid))
    commands = _last_commands(reader.inputs(rid), tick)
    rows = (telemetry or {}).get("drones") or {}
    config_of = run.get("config") or {}
    reserve = float(((config_of.get("policy") or {}).get("fuel_reserve")) or 0.0)
    field_ = None
    drones: dict[str, DroneState] = {}
    for drone_id, config in scenario.drone_configs.items():
        row = rows.get(drone_id)
        if row is None:  # before the first telemetry: where the scenario puts it
            start = scenario.environment.airport(config.start or "")
            row = {"x": start.x if start else 0.0, "y": start.y if start else 0.0,
                   "heading": 0.0, "fuel": config.fuel_budget, "s": 0.0,
                   "status": "parked", "points": 0.0}
        status = "lost" if drone_id in lost else str(row["status"])
        route = list(plan.routes[drone_id].route) if plan is not None and drone_id in plan.routes else []
        planned = _planned(route, collected, known)
        remaining: float | None
        if status == "flying":
            remaining, field_ = _remaining_stored(commands.get(drone_id), row, known, field_)
        elif status == "parked":
            remaining = plan.routes[drone_id].distance if planned else 0.0
        elif status == "landed":
            remaining = 0.0
        else:
            remaining = None
        drones[drone_id] = DroneState(
            id=drone_id, status=status, x=float(row["x"]), y=float(row["y"]),
            heading=float(row.get("heading", 0.0)), fuel=float(row["fuel"]),
            budget=config.fuel_budget, points=float(row.get("points", 0.0)),
            sensors=config.accessible_targets, home=config.home, route=route,
            planned_targets=planned, remaining_km=remaining,
            collected=[t for t, d in collected.items() if d == drone_id],
            lost_reason=lost.get(drone_id))
    constraints: dict[str, Any] = {}
    for event in events:  # the last constraints the operator set, up to the tick
        if event["kind"] == "CONSTRAINTS" and event["tick"] <= tick:
            constraints = dict(event["payload"].get("constraints") or {})
        elif event["kind"] == "RESET" and event["tick"] <= tick:
            constraints = {}
    hz = scenario.sim.tick_hz
    return MissionState(
        source="stored", run_id=rid, tick=tick, time=tick / hz, mode=str(run.get("status")),
        scenario=scenario, environment=known, drones=drones, collected=collected,
        plan_id=plan_id, plan=plan, constraints=constraints, excluded=_excluded(known),
        fuel_reserve=reserve)


def _replay_events(scenario: Scenario, events: list[dict], tick: int):
    """The known environment, the collected targets and the lost drones at ``tick``, from
    the observable events (and the truth events that carry hidden SAMs, for reveals)."""
    env = scenario.environment.model_dump(by_alias=True)
    targets = {t["id"]: t for t in env["targets"]}
    sams = {s["id"]: s for s in env["sams"]}
    hidden: dict[str, dict] = {}
    collected: dict[str, str] = {}
    lost: dict[str, str] = {}
    for event in events:
        if event["tick"] > tick:
            continue
        kind, payload = event["kind"], event["payload"]
        if kind == "edit_applied":
            _apply_edit(payload.get("edit") or {}, targets, sams, hidden)
        elif kind == "truth:edit_applied":
            edit = payload.get("edit") or {}
            if edit.get("op") in ("add_sam", "move_sam") and edit.get("id") not in sams:
                old = hidden.get(edit["id"], {})
                hidden[edit["id"]] = {"id": edit["id"], "pos": edit.get("pos", old.get("pos")),
                                      "range": edit.get("range") or old.get("range")}
            elif edit.get("op") == "remove_sam":
                hidden.pop(edit.get("id"), None)
        elif kind == "sam_detected":
            sams[payload["sam"]] = {"id": payload["sam"], "pos": list(payload["pos"]),
                                    "range": payload["range"]}
            hidden.pop(payload["sam"], None)
        elif kind == "target_collected":
            collected[payload["target"]] = payload["drone"]
        elif kind == "drone_lost":
            lost[payload["drone"]] = payload.get("reason") or "lost"
    env["targets"] = list(targets.values())
    env["sams"] = list(sams.values())
    return Environment.model_validate(env), collected, lost


def _apply_edit(edit: dict, targets: dict, sams: dict, hidden: dict) -> None:
    op, item = edit.get("op"), edit.get("id")
    if op == "add_target":
        targets[item] = {k: edit[k] for k in ("id", "x", "y", "priority", "type")}
    elif op == "remove_target":
        targets.pop(item, None)
    elif op == "move_target" and item in targets:
        targets[item] = {**targets[item], "x": edit["x"], "y": edit["y"]}
    elif op == "set_priority" and item in targets:
        targets[item] = {**targets[item], "priority": edit["priority"]}
    elif op == "add_sam" and not edit.get("hidden"):
        sams[item] = {"id": item, "pos": list(edit["pos"]), "range": edit["range"]}
    elif op == "remove_sam":
        sams.pop(item, None)
    elif op == "move_sam" and item in sams:
        sams[item] = {**sams[item], "pos": list(edit["pos"]),
                      "range": edit.get("range") or sams[item]["range"]}
    elif op == "reveal_sam" and item in hidden:
        sams[item] = hidden.pop(item)


def _last_committed(rows: list[dict]) -> tuple[str | None, Solution | None]:
    committed = [r for r in rows if r["status"] == "committed" and r.get("solution")]
    if not committed:
        return None, None
    row = committed[-1]
    return row["plan_id"], Solution.model_validate(row["solution"])


def _last_commands(inputs: list[dict], tick: int) -> dict[str, dict]:
    """Per drone, the last movement command in effect at ``tick`` (a resume keeps the
    flight of the fly_path before it)."""
    last: dict[str, dict] = {}
    for row in inputs:
        if row["kind"] != "command" or row["tick"] > tick:
            continue
        payload = row["payload"]
        kind = payload.get("kind")
        if kind in ("fly_path", "return_to_base"):
            last[payload["drone"]] = payload
    return last


def _remaining_stored(command: dict | None, row: dict, known: Environment, field_):
    """The path a flying drone still has to fly, from the command that set its flight."""
    if command is None:
        return None, field_
    if command["kind"] == "fly_path":
        length = float((command.get("path") or {}).get("length", 0.0))
        return max(0.0, length - float(row.get("s", 0.0))), field_
    # return_to_base: the sim flies the shortest path around the known SAMs from here
    airport = known.airport(command.get("airport") or "")
    if airport is None:
        return None, field_
    field_ = field_ or SamField([(s.x, s.y, s.range) for s in known.sams])
    path = field_.shortest_path((float(row["x"]), float(row["y"])), (airport.x, airport.y))
    return (None if path is None else float(path.length)), field_
