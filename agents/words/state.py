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
    ``from_trace(reader, run_id)`` -- a stored run, as it was after the tick of its last
    telemetry row: the run is re-executed from its recorded inputs up to there (exactly, as
    ``isr replay`` does), so the state is read from the same world the live run had, by the
    same code. ``replay_trace`` also returns that world (what-if questions plan from it).
    The committed plan and the operator's constraints come from the stored plan versions
    and events.

Both hold the run's planning troubles (``planning``: failed or rejected rounds, planning
agents' runs that failed, orders refused; ``agents.words.troubles``) and the plan the run
started with (``first_plan``: the live executive's first commit, a stored run's first plan
version that flew), so a what-if on a finished run compares against it.

Remaining path (``DroneState.remaining_km``): flying -> the current flight's length minus
the arc length flown; parked with a planned route -> that route's length; landed -> 0;
holding or lost -> None (unknown / meaningless). The fuel margin is fuel left minus it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.words.troubles import PlanningLog, live_log, stored_log
from executive.errors import ExecutiveError
from executive.traces.replay import resimulate
from planner.model import Environment, Scenario, Solution, drone_label
from planner.scenario import ScenarioError, parse_scenario
from sim import TargetCollected, World

__all__ = [
    "DroneState",
    "MissionState",
    "from_executive",
    "from_trace",
    "replay_trace",
    "scenario_state",
]

Source = Literal["live", "stored"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DroneState(_Frozen):
    """One drone as the mission state sees it (positions and distances in km)."""

    id: str
    status: str  # parked | flying | holding | landed | lost
    x: float
    y: float
    heading: float = 0.0
    fuel: float  # km of flight left
    budget: float  # km: the fuel budget in the scenario as loaded
    points: float = 0.0  # collected so far
    sensors: list[str] | Literal["ALL"] = "ALL"  # target types it can collect
    home: str | None = None  # its home airport (else its start airport)
    route: list[str] = Field(default_factory=list)  # in the committed plan (remainder form)
    planned_targets: list[str] = Field(default_factory=list)  # on the route, not collected
    remaining_km: float | None = None  # path still to fly (see the module docstring)
    collected: list[str] = Field(default_factory=list)  # targets this drone collected
    lost_reason: str | None = None  # why it was lost; None while it is not

    @property
    def label(self) -> str:
        """The name shown to people (``drone_label``: "1" -> "D1")."""
        return drone_label(self.id)

    @property
    def margin_km(self) -> float | None:
        """Fuel left once the planned path is flown (None when it cannot be known)."""
        if self.status == "lost" or self.remaining_km is None:
            return None
        return self.fuel - self.remaining_km

    @property
    def airborne(self) -> bool:
        """In the air: flying or holding."""
        return self.status in ("flying", "holding")


class MissionState(_Frozen):
    """The mission at one tick, frozen; see the module docstring for what it holds."""

    source: Source  # live: read from a running executive; stored: re-executed from a trace
    run_id: str
    tick: int
    time: float  # simulated seconds
    mode: str  # FLYING | PLANNING | REVIEW | PAUSED (live); the run's status (stored)
    scenario: Scenario  # as loaded: drone configs, sim settings
    environment: Environment  # the KNOWN environment at ``tick``
    drones: dict[str, DroneState]
    collected: dict[str, str] = Field(default_factory=dict)  # target -> drone
    plan_id: str | None = None  # None: no plan committed yet
    plan: Solution | None = None  # the committed plan
    # the operator's constraints in force (OperatorConstraints as JSON: moves, forbidden ...)
    constraints: dict[str, Any] = Field(default_factory=dict)
    excluded: list[str] = Field(default_factory=list)  # strictly inside a known SAM
    fuel_reserve: float = 0.0  # km the policy keeps in reserve
    # collected targets in the order they were collected (``collected`` is in target order)
    collected_order: list[str] = Field(default_factory=list)
    first_plan: Solution | None = None  # the plan the run started with, when known
    # the run's planning: rounds, agent runs, what failed (``agents.words.troubles``)
    planning: PlanningLog = Field(default_factory=PlanningLog)

    # ----- lookups ---------------------------------------------------------------------

    def drone(self, drone_id: str) -> DroneState | None:
        """A drone by id ("1") or by label ("D1"); None when there is no such drone."""
        if drone_id in self.drones:
            return self.drones[drone_id]
        return next((d for d in self.drones.values() if d.label == drone_id), None)

    def priority(self, target_id: str) -> float:
        """A known target's priority (its points); 0.0 for an unknown target."""
        target = self.environment.target(target_id)
        return float(target.priority) if target is not None else 0.0

    def collected_by(self, drone_id: str) -> list[str]:
        """The targets ``drone_id`` collected, in the order it collected them."""
        order = [t for t in self.collected_order if self.collected.get(t) == drone_id]
        return order + [t for t, d in self.collected.items() if d == drone_id and t not in order]

    @property
    def over(self) -> bool:
        """The mission has nothing left to fly (so a what-if is planned from its start): a
        stored run that ended, or every drone down (landed or lost) or parked with nothing
        planned."""
        if self.source == "stored" and self.mode == "ended":
            return True
        return all(
            d.status in ("landed", "lost") or (d.status == "parked" and not d.planned_targets)
            for d in self.drones.values()
        )

    @property
    def target_ids(self) -> list[str]:
        """Every known target, collected or not."""
        return [t.id for t in self.environment.targets]

    @property
    def collected_points(self) -> float:
        """Points collected so far, all drones."""
        return float(sum(d.points for d in self.drones.values()))

    @property
    def planned_by(self) -> dict[str, str]:
        """Targets still to collect under the committed plan -> their drone."""
        return {
            t: d.id for d in self.drones.values() if d.status != "lost" for t in d.planned_targets
        }

    @property
    def allocation(self) -> dict[str, list[str]]:
        """Drone -> its targets still to collect under the committed plan (lost: none)."""
        return {d.id: list(d.planned_targets) for d in self.drones.values() if d.status != "lost"}

    @property
    def points_to_collect(self) -> float:
        """Points of the targets the committed plan still collects."""
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
        return [
            d.id
            for d in self.drones.values()
            if d.status != "lost" and (d.sensors == "ALL" or target.type in d.sensors)
        ]

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
    return [
        t.id
        for t in environment.targets
        if any(math.hypot(t.x - s.x, t.y - s.y) < s.range for s in environment.sams)
    ]


def _planned(route: list[str], collected: Mapping[str, str], environment: Environment) -> list[str]:
    live = {t.id for t in environment.targets}
    return [n for n in route if n in live and n not in collected]


# ----------------------------------------------------------------------------- live


def from_executive(executive) -> MissionState:
    """The live state of ``executive`` (started: it has a sim). Reads, never writes."""
    if not executive.started:
        raise ExecutiveError("the mission has not started: there is no state to answer from")
    return _from_world(
        executive.sim.world,
        source="live",
        run_id=executive.run_id,
        mode=executive.mode,
        scenario=executive.scenario,
        plan=executive.plan,
        plan_id=executive.plan_id,
        constraints=executive.constraints.model_dump(mode="json"),
        reserve=executive.reserve_km,
        order=[
            str(e["target"])
            for e in list(getattr(executive, "events_seen", ()))
            if e.get("kind") == "target_collected" and "target" in e
        ],
        first_plan=executive.recorder.first_plan,  # kept by the executive at its first commit
        planning=live_log(executive),
    )


def _from_world(
    world: World,
    *,
    source: Source,
    run_id: str,
    mode: str,
    scenario: Scenario,
    plan: Solution | None,
    plan_id: str | None,
    constraints: dict[str, Any],
    reserve: float,
    order: list[str] | None = None,
    first_plan: Solution | None = None,
    planning: PlanningLog | None = None,
) -> MissionState:
    known = world.known_environment
    collected = dict(world.collected())
    view = world.fleet_view(world.tick)
    lost_reasons = dict(zip(view.ids, view.lost_reasons))
    points = {d: float(p) for d, p in zip(view.ids, view.points)}
    drones: dict[str, DroneState] = {}
    for drone_id, config in scenario.drone_configs.items():
        status = world.status(drone_id)
        x, y, heading = world.position(drone_id)
        route = (
            list(plan.routes[drone_id].route)
            if plan is not None and drone_id in plan.routes
            else []
        )
        planned = _planned(route, collected, known)
        flight = world.flight(drone_id)
        if status == "flying" and flight is not None and not flight.holding:
            remaining: float | None = max(0.0, flight.length - world.progress(drone_id))
        elif status == "parked":
            remaining = plan.routes[drone_id].distance if planned and plan is not None else 0.0
        elif status == "landed":
            remaining = 0.0
        else:  # holding (its way on depends on a resume) or lost
            remaining = None
        drones[drone_id] = DroneState(
            id=drone_id,
            status=status,
            x=x,
            y=y,
            heading=heading,
            fuel=world.fuel(drone_id),
            budget=config.fuel_budget,
            points=points.get(drone_id, 0.0),
            sensors=config.accessible_targets,
            home=config.home,
            route=route,
            planned_targets=planned,
            remaining_km=remaining,
            collected=[t for t, d in collected.items() if d == drone_id],
            lost_reason=lost_reasons.get(drone_id),
        )
    return MissionState(
        source=source,
        run_id=run_id,
        tick=world.tick,
        time=world.time,
        mode=mode,
        scenario=scenario,
        environment=known,
        drones=drones,
        collected=collected,
        plan_id=plan_id,
        plan=plan,
        constraints=constraints,
        excluded=_excluded(known),
        fuel_reserve=reserve,
        collected_order=[t for t in dict.fromkeys(order or []) if t in collected],
        first_plan=first_plan,
        planning=planning or PlanningLog(),
    )


# ----------------------------------------------------------------------------- stored


def from_trace(reader, run_id: str) -> MissionState:
    """The state of a stored run after its last telemetry row (``run_id`` may be a prefix)."""
    return replay_trace(reader, run_id)[0]


def replay_trace(reader, run_id: str) -> tuple[MissionState, World]:
    """``from_trace``'s state and the re-executed world it was read from."""
    run = reader.run(run_id)
    rid = run["run_id"]
    try:
        scenario = parse_scenario(dict(run["scenario"]), f"run {rid}")
    except ScenarioError as exc:
        raise ExecutiveError(f"run {rid}: its stored scenario does not load: {exc}") from exc
    telemetry = reader.last_telemetry(rid)
    until = int(telemetry["tick"]) + 1 if telemetry is not None else 0
    sim = resimulate(run["scenario"], reader.inputs(rid))
    order: list[str] = []
    while sim.tick < until:
        order += [e.target for e in sim.step().events if isinstance(e, TargetCollected)]
    versions = reader.plan_versions(rid)
    plan_id, plan = _last_committed(versions)
    constraints: dict[str, Any] = {}
    events = reader.events(rid)
    for event in events:  # the last constraints the operator set, up to the tick
        if event["kind"] == "CONSTRAINTS" and event["tick"] < until:
            constraints = dict(event["payload"].get("constraints") or {})
        elif event["kind"] == "RESET" and event["tick"] < until:
            constraints = {}
    policy = (run.get("config") or {}).get("policy") or {}
    state = _from_world(
        sim.world,
        source="stored",
        run_id=rid,
        mode=str(run.get("status")),
        scenario=scenario,
        plan=plan,
        plan_id=plan_id,
        constraints=constraints,
        reserve=float(policy.get("fuel_reserve") or 0.0),
        order=order,
        first_plan=_first_committed(versions),
        planning=stored_log(run, events, reader.agent_runs(rid), until),
    )
    return state, sim.world


def _first_committed(rows: list[dict]) -> Solution | None:
    """The first plan that flew (by tick): a plan replaced later is stored "superseded"."""
    flown = [r for r in rows if r["status"] in ("committed", "superseded") and r.get("solution")]
    row = min(flown, key=lambda r: r["tick"], default=None)
    return None if row is None else Solution.model_validate(row["solution"])


def _last_committed(rows: list[dict]) -> tuple[str | None, Solution | None]:
    committed = [r for r in rows if r["status"] == "committed" and r.get("solution")]
    if not committed:
        return None, None
    row = committed[-1]
    return row["plan_id"], Solution.model_validate(row["solution"])


def scenario_state(
    scenario: Scenario,
    solution: Solution | None,
    run_id: str,
    planning: PlanningLog | None = None,
    *,
    tick: int = 0,
    constraints: Mapping[str, Any] | None = None,
    remainder: bool = False,
) -> MissionState:
    """A mission as a scenario says it, as the responder and the tools read it: each drone
    at its start (an airport, or a synthetic start) with its whole budget, parked, the
    plan's route still to fly; ``planning``: the request's own planning troubles. A posted
    mission before take-off, or with ``remainder`` a planning round's problem: a drone at a
    synthetic start (its checkpoint) is in the air there."""
    env = scenario.environment
    places = {a.id: (a.x, a.y) for a in env.airports}
    synthetic = {k: (p.x, p.y) for k, p in env.synthetic_starts.items()}
    drones = {}
    for drone_id, cfg in scenario.drone_configs.items():
        route = solution.routes.get(drone_id) if solution is not None else None
        start = cfg.start or ""
        x, y = synthetic.get(start) or places.get(start, (0.0, 0.0))
        drones[drone_id] = DroneState(
            id=drone_id,
            status="flying" if remainder and start in synthetic else "parked",
            x=x,
            y=y,
            fuel=float(cfg.fuel_budget),
            budget=float(cfg.fuel_budget),
            sensors=cfg.accessible_targets,
            home=cfg.home,
            route=list(route.route) if route is not None else [],
            planned_targets=list(route.visited_targets) if route is not None else [],
            remaining_km=float(route.distance) if route is not None else 0.0,
        )
    excluded = [
        t.id
        for t in env.targets
        if any(math.hypot(t.x - s.x, t.y - s.y) < s.range for s in env.sams)
    ]
    return MissionState(
        source="stored",
        run_id=run_id,
        tick=tick,
        time=0.0,
        mode="PLANNED" if solution is not None else "NO PLAN",
        scenario=scenario,
        environment=env,
        drones=drones,
        plan_id="posted" if solution is not None else None,
        plan=solution,
        excluded=excluded,
        planning=planning or PlanningLog(),
        constraints=dict(constraints or {}),
    )
