"""What-if questions: planned on a copy, answered with the difference, never applied.

Contract
--------
Consumes
    The coordinator's what-if changes (``agents.coordinator``): ``set_fuel``
    (``fuel``: the drone's fuel left now, or ``delta``), ``set_budget`` (``budget``: its
    fuel budget, or ``delta``; a ``set_fuel`` with ``"basis": "budget"``, or whose words
    say "budget" (``read_budgets``), is one), ``lose_drone``, ``set_priority``,
    ``remove_sam``, ``remove_target``, ``constraints`` (moves / forbidden / required), and a
    ``MissionState``.
Produces
    A ``WhatIfResult``: the figures of the current plan from now (targets still to collect,
    their points, the path still to fly per drone), of the remainder replanned now without
    the change (``control``: how much of a difference is replanning alone) and with it
    (``changed``), and their difference per drone (targets added / removed, fuel before /
    after) and overall (points, targets dropped / gained).
How
    The remainder is the problem as it stands now: ``executive.loop.cut.build_replan`` on
    the world at its current tick — a live executive's (read on the event loop, between
    ticks) or a stored run's, re-executed (``agents.words.state.replay_trace``) — the
    same cut a replan makes, with the drones sent home left out. The change is applied to
    that copy, and both plans are made by the algorithmic planner (team search with a fixed
    iteration budget and seed, post-optimised, validated; the operator's constraints in
    force apply to both) in one worker thread (``asyncio.to_thread``): the event loop never
    waits on it. Nothing here writes to the executive, its plan, its constraints or its
    simulation. A change that cannot be planned raises ``WhatIfError`` with one line.
A budget is not fuel left: "D1's budget to 300" gives D1 300 km minus what it has already
flown, "D1 had 300 fuel" gives it 300 km from now.
A run that is over (every drone down, ``MissionState.over``) has no remainder: the what-if is
planned from the mission's start (the scenario as loaded) and compared with the plan the run
started with (``MissionState.first_plan``).
A drone the change leaves unable to reach any airport is left out of the plan and named, with
the targets it can no longer reach (``WhatIfResult.infeasible``): the answer is still an
answer, in the mission's words, never a planner's internal message.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.words.state import MissionState
from executive.errors import ExecutiveError
from executive.loop.cut import build_replan
from planner.changes import ScenarioPicture, apply_edit
from planner.constraints import (
    OperatorConstraints,
    constrain_mission,
    constrain_problem,
    describe_constraints,
    merge_constraints,
    parse_constraints,
)
from planner.edits import DisableDrone, Edit, RemoveSam, RemoveTarget, SetFuel, SetPriority
from planner.errors import PlannerError
from planner.feasibility import plannable
from planner.mission import compile_mission
from planner.model import DroneConfig, Scenario, Solution, drone_label
from planner.planning import team_problem
from planner.postopt import post_optimise
from planner.solution import build_solution
from planner.team_search import StopCriterion, solve_team
from planner.validation import ensure_valid
from sim import World

__all__ = [
    "DEFAULT_ITERATIONS",
    "DroneFigures",
    "PlanFigures",
    "WhatIfError",
    "WhatIfResult",
    "apply_changes",
    "current_figures",
    "describe_change",
    "plan_narrowed",
    "plan_remainder",
    "read_budgets",
    "what_if",
]

DEFAULT_ITERATIONS = 2000  # team-search iterations per plan: reproducible with the seed


class WhatIfError(ExecutiveError):
    """A what-if that cannot be planned (an unknown or lost drone, a planner failure)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DroneFigures(_Model):
    """What one drone does under one plan, from now on."""

    targets: list[str] = Field(default_factory=list)  # still to collect, in order
    end: str | None = None  # the last node of its route (where it lands); None: no route
    points: float = 0.0  # of the targets still to collect
    fuel: float = 0.0  # km of path still to fly
    planned: bool = True  # False: the drone is not planned (lost, disabled by the change)


class PlanFigures(_Model):
    """What a whole plan still does from now: points, km, and per drone."""

    points: float  # still to collect from now
    fuel: float  # km still to fly, all drones
    drones: dict[str, DroneFigures]


class WhatIfResult(_Model):
    """A what-if's answer: the three plans' figures and how the changed one differs."""

    source: str  # the MissionState's: live | stored
    tick: int  # the state's tick, where the copy was cut
    changes: list[dict[str, Any]]  # as the coordinator gave them
    description: list[str]  # one phrase per change, completing "what if ..."
    current: PlanFigures  # the committed plan from now
    control: PlanFigures  # the remainder replanned without the change
    changed: PlanFigures  # the remainder replanned with the change
    # changed minus current: points, fuel (km), dropped / gained targets, and per drone
    # added / removed targets, fuel and points before / after, not_planned
    diff: dict[str, Any]
    notes: list[str] = Field(default_factory=list)  # what a change did, or why it did nothing
    iterations: int = DEFAULT_ITERATIONS  # the planner's budget, for reproducing the figures
    seed: int = 0
    from_start: bool = False  # the run is over: planned from its start, against its first plan
    # drone -> why the change leaves it unplannable and the targets it can no longer reach
    infeasible: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def context(self) -> str:
        """The result as the responder's prompt block."""

        def block(name: str, fig: PlanFigures) -> list[str]:
            """One plan's lines: its totals, then one line per drone."""
            out = [f"  {name}: {fig.points:g} points still to collect, {fig.fuel:.1f} km to fly"]
            for d, f in fig.drones.items():
                state = (
                    "not planned"
                    if not f.planned
                    else (f"{', '.join(f.targets) or 'no target'} then {f.end or '-'}")
                )
                out.append(f"    {drone_label(d)}: {state}; {f.points:g} points, {f.fuel:.1f} km")
            return out

        where = "from the mission's start" if self.from_start else f"at tick {self.tick}"
        lines = [
            f"WHAT-IF RESULT (planned on a copy {where}; the live plan is"
            f" unchanged): {'; '.join(self.description)}"
        ]
        lines += block("CURRENT PLAN", self.current)
        lines += block("REPLANNED NOW WITHOUT THE CHANGE", self.control)
        lines += block("REPLANNED NOW WITH THE CHANGE", self.changed)
        lines.append(
            f"  DIFFERENCE vs current: points {self.diff['points']:+g}, fuel"
            f" {self.diff['fuel']:+.1f} km; dropped {', '.join(self.diff['dropped']) or 'none'};"
            f" gained {', '.join(self.diff['gained']) or 'none'}"
        )
        if self.notes:
            lines.append("  NOTES: " + "; ".join(self.notes))
        for d, why in self.infeasible.items():
            lines.append(
                f"  INFEASIBLE {drone_label(d)}: {why['reason']}; can no longer reach:"
                f" {', '.join(why['unreachable']) or 'none'}"
            )
        return "\n".join(lines)


# ----------------------------------------------------------------------------- figures


def current_figures(state: MissionState) -> PlanFigures:
    """The committed plan from now: what each drone still collects and still flies."""
    drones = {}
    for d in state.drones.values():
        if d.status == "lost":
            drones[d.id] = DroneFigures(planned=False)
            continue
        pts = sum(state.priority(t) for t in d.planned_targets)
        end = d.route[-1] if d.route else None
        drones[d.id] = DroneFigures(
            targets=list(d.planned_targets), end=end, points=pts, fuel=d.remaining_km or 0.0
        )
    return PlanFigures(
        points=sum(f.points for f in drones.values()),
        fuel=sum(f.fuel for f in drones.values()),
        drones=drones,
    )


def _figures(solution: Solution, scenario: Scenario) -> PlanFigures:
    drones = {}
    for drone_id, config in scenario.drone_configs.items():
        route = solution.routes.get(drone_id)
        if route is None or not config.enabled:
            drones[drone_id] = DroneFigures(planned=False)
            continue
        drones[drone_id] = DroneFigures(
            targets=list(route.visited_targets),
            end=route.route[-1] if route.route else None,
            points=route.total_points,
            fuel=route.fuel_used,
        )
    return PlanFigures(points=solution.total_points, fuel=solution.total_fuel, drones=drones)


def _diff(current: PlanFigures, changed: PlanFigures) -> dict[str, Any]:
    drones = {}
    for d in sorted(set(current.drones) | set(changed.drones)):
        before = current.drones.get(d) or DroneFigures(planned=False)
        after = changed.drones.get(d) or DroneFigures(planned=False)
        drones[d] = {
            "added": [t for t in after.targets if t not in before.targets],
            "removed": [t for t in before.targets if t not in after.targets],
            "fuel_before": before.fuel,
            "fuel_after": after.fuel,
            "points_before": before.points,
            "points_after": after.points,
            "not_planned": not after.planned,
        }
    was = {t for f in current.drones.values() for t in f.targets}
    now = {t for f in changed.drones.values() for t in f.targets}
    order = [t for f in current.drones.values() for t in f.targets]
    order += [t for f in changed.drones.values() for t in f.targets]
    return {
        "points": changed.points - current.points,
        "fuel": changed.fuel - current.fuel,
        "dropped": [t for t in dict.fromkeys(order) if t in was and t not in now],
        "gained": [t for t in dict.fromkeys(order) if t in now and t not in was],
        "drones": drones,
    }


# ----------------------------------------------------------------------------- the copy


def describe_change(change: Mapping[str, Any]) -> str:
    """One change in words, completing "what if ..." ("D2 were lost"); a change of an
    unknown kind is shown as its dict."""
    change = _as_budget(change)
    kind = change.get("kind")
    if kind == "set_fuel":
        d = drone_label(str(change["drone"]))
        if "delta" in change:
            return f"{d} had {change['delta']:+g} km of fuel"
        return f"{d} had {change['fuel']:g} km of fuel"
    if kind == "set_budget":
        d = drone_label(str(change["drone"]))
        if "delta" in change:
            return f"{d}'s fuel budget were {change['delta']:+g} km"
        return f"{d}'s fuel budget were {change['budget']:g} km"
    if kind == "lose_drone":
        return f"{drone_label(str(change['drone']))} were lost"
    if kind == "set_priority":
        return f"{change['target']} had priority {change['priority']:g}"
    if kind == "remove_sam":
        return f"{change['sam']} were removed"
    if kind == "remove_target":
        return f"{change['target']} were removed"
    if kind == "constraints":
        lines = describe_constraints(parse_constraints(change["constraints"]))
        return "; ".join(lines) or "no constraint"
    return str(dict(change))


_BUDGET_WORD = re.compile(r"\bbudget", re.I)


def read_budgets(text: str, changes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The changes with each ``set_fuel`` read as a ``set_budget`` when ``text`` speaks of a
    budget ("increase D1's fuel budget to 300" is a budget of 300, not 300 km left)."""
    return [_as_budget(c, bool(_BUDGET_WORD.search(text or ""))) for c in changes]


def _as_budget(change: Mapping[str, Any], budget_words: bool = False) -> dict[str, Any]:
    """A ``set_fuel`` on a budget basis (the coordinator's ``"basis": "budget"``, or words
    that say budget) as a ``set_budget``; any other change as it is."""
    c = dict(change)
    if c.get("kind") == "set_fuel" and (budget_words or c.get("basis") == "budget"):
        c.pop("basis", None)
        c["kind"] = "set_budget"
        if "fuel" in c:
            c["budget"] = c.pop("fuel")
    return c


def _base_constraints(state: MissionState) -> dict[str, Any]:
    keys = ("moves", "forbidden", "required_targets")
    return {k: v for k, v in (state.constraints or {}).items() if k in keys and v}


def apply_changes(
    scenario: Scenario,
    changes: Sequence[Mapping[str, Any]],
    state: MissionState,
    *,
    from_start: bool = False,
) -> tuple[Scenario, OperatorConstraints, list[str]]:
    """The remainder ``scenario`` (``from_start``: the whole mission as loaded) with
    ``changes`` applied, the constraints to plan it under, and notes (a change with no
    effect says why). Each change is read as the edit it amounts to (``planner.edits``:
    ``set_fuel`` / ``set_budget`` a ``SetFuel`` of the fuel to plan with, ``lose_drone`` a
    ``DisableDrone``, ``set_priority``, ``remove_target``, ``remove_sam`` theirs), applied
    to a typed copy by ``planner.changes.apply_edit``, as a replay or the sim would."""
    picture = ScenarioPicture(scenario)
    invalid = _Invalid()
    try:
        constraints = parse_constraints(_base_constraints(state))
    except ValidationError:
        constraints = OperatorConstraints()
    notes: list[str] = []
    for change in map(_as_budget, changes):
        kind = change.get("kind")
        if kind in ("set_fuel", "set_budget", "lose_drone"):
            drone = str(change["drone"])
            if drone not in picture.drones:
                raise WhatIfError(f"what if: unknown drone {drone_label(drone)}")
            d = state.drones.get(drone)
            enabled = picture.drones[drone].enabled
            if from_start and d is not None and enabled:
                with invalid:
                    apply_edit(picture, _from_start_edit(picture.drones[drone], change, d, notes))
                continue
            if d is None or d.status == "lost" or not enabled:
                if kind == "lose_drone":
                    notes.append(f"{drone_label(drone)} is already lost")
                    continue
                raise WhatIfError(
                    f"what if: {drone_label(drone)} is lost; its fuel cannot change anything"
                )
            if kind == "lose_drone":
                apply_edit(picture, DisableDrone(drone=drone))
                continue
            if kind == "set_budget":  # the budget moves; what was flown stays flown
                budget = _new_budget(change, d.budget)
                fuel = d.fuel + (budget - d.budget)
                notes.append(
                    f"{drone_label(drone)} budget {budget:.1f} km (now {d.budget:.1f}),"
                    f" {d.budget - d.fuel:.1f} km already flown"
                )
            elif "delta" in change:
                fuel = d.fuel + float(change["delta"])
            else:
                fuel = float(change["fuel"])
            if fuel < 0:
                raise WhatIfError(f"what if: {drone_label(drone)} would have {fuel:g} km of fuel")
            with invalid:  # the remainder plans with the fuel above the reserve
                apply_edit(picture, SetFuel(drone=drone, fuel=max(0.0, fuel - state.fuel_reserve)))
            notes.append(f"{drone_label(drone)} fuel from now {fuel:.1f} km (now {d.fuel:.1f})")
        elif kind in ("set_priority", "remove_target"):
            target = str(change["target"])
            found = picture.target(target)
            if found is None:
                if target in state.collected:
                    notes.append(
                        f"{target} is already collected by"
                        f" {drone_label(state.collected[target])}: no effect"
                    )
                    continue
                raise WhatIfError(f"what if: unknown target {target}")
            if kind == "set_priority":
                notes.append(f"{target} priority {found.priority:g} -> {change['priority']:g}")
                with invalid:
                    apply_edit(picture, SetPriority(id=target, priority=float(change["priority"])))
            else:
                apply_edit(picture, RemoveTarget(id=target))
        elif kind == "remove_sam":
            sam = str(change["sam"])
            if picture.sam(sam) is None:
                raise WhatIfError(f"what if: {sam} is not a known SAM")
            apply_edit(picture, RemoveSam(id=sam))
        elif kind == "constraints":
            try:
                more = parse_constraints(change["constraints"])
            except ValidationError as exc:
                raise WhatIfError(
                    f"what if: malformed constraints: {exc.errors()[0]['msg']}"
                ) from None
            constraints = merge_constraints(constraints, more)
        else:
            raise WhatIfError(f"what if: unknown change {kind!r}")
    invalid.check()
    try:
        changed = picture.scenario()
    except ValidationError as exc:
        raise _not_valid(exc) from None
    return changed, constraints, notes


class _Invalid:
    """A value the mission's bounds refuse (a fuel, a priority): kept while the other
    changes are read (a change that names nothing is said first), then raised by
    ``check``. Used as ``with invalid:`` around the edit made of one change."""

    def __init__(self) -> None:
        self.refused: ValidationError | None = None

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> bool:
        if isinstance(exc, ValidationError):
            self.refused = self.refused or exc
            return True  # the change is left out; check() refuses the whole what-if
        return False

    def check(self) -> None:
        if self.refused is not None:
            raise _not_valid(self.refused)


def _not_valid(exc: ValidationError) -> WhatIfError:
    return WhatIfError(f"what if: the changed problem is not valid: {exc.errors()[0]['msg']}")


def _new_budget(change: Mapping[str, Any], budget: float) -> float:
    if "delta" in change:
        return budget + float(change["delta"])
    return float(change["budget"] if "budget" in change else change["fuel"])


def _from_start_edit(
    config: DroneConfig, change: Mapping[str, Any], d: Any, notes: list[str]
) -> Edit:
    """A fuel change on the mission from its start, as its edit: every fuel is a budget
    there."""
    label = drone_label(d.id)
    if change.get("kind") == "lose_drone":
        notes.append(f"{label} is left out from the start")
        return DisableDrone(drone=d.id)
    budget = _new_budget(change, config.fuel_budget)
    if budget < 0:
        raise WhatIfError(f"what if: {label} would have {budget:g} km of fuel")
    notes.append(f"{label} fuel budget from the start {budget:.1f} km (was {d.budget:.1f})")
    return SetFuel(drone=d.id, fuel=budget)


def plan_remainder(
    scenario: Scenario,
    constraints: OperatorConstraints | Mapping | None = None,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> Solution:
    """The algorithmic planner on ``scenario`` under ``constraints`` (synchronous: call it
    in a worker thread). The solution has passed the validator."""
    return plan_narrowed(scenario, constraints, iterations=iterations, seed=seed)[0]


def plan_narrowed(
    scenario: Scenario,
    constraints: OperatorConstraints | Mapping | None = None,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> tuple[Solution, dict[str, str], dict[str, str]]:
    """``plan_remainder``'s solution with (left_out, rerouted): the drones that cannot be
    planned at all and those sent to another airport, each with why (``planner.feasibility``):
    one drone that cannot fly never fails the others' plan."""
    mission = None
    try:
        full = compile_mission(scenario)
        narrowed = plannable(full)
        mission = narrowed.mission
        if not mission.drones:
            return build_solution(mission, {}), dict(narrowed.left_out), dict(narrowed.rerouted)
        c = parse_constraints(constraints)
        constrained = constrain_mission(mission, c)
        problem = constrain_problem(team_problem(constrained), mission, c)
        found = solve_team(problem, StopCriterion(max_iterations=iterations), seed=seed)
        routes = {spec.id: list(r) for spec, r in zip(mission.drones, found.routes)}
        routes = post_optimise(constrained, routes).routes
        solution = ensure_valid(mission, build_solution(mission, routes))
    except PlannerError as exc:
        raise WhatIfError(f"what if: {_in_mission_words(exc, mission)}") from exc
    return solution, dict(narrowed.left_out), dict(narrowed.rerouted)


_VEHICLE = re.compile(
    r"vehicle (\d+): no feasible route .*?length to an end ([\d.e+-]+|inf) > budget ([\d.e+-]+)"
)


def _in_mission_words(exc: Exception, mission: Any) -> str:
    """A planner failure as the operator reads it: the team search's "vehicle 1: no
    feasible route (start 3, prefix [...], ...)" becomes the drone and its fuel."""
    text = str(exc)
    m = _VEHICLE.search(text)
    if m is None:
        return "no plan satisfies this change: " + re.sub(r"\(start \d+[^)]*\)", "", text)
    k, need, fuel = int(m.group(1)), float(m.group(2)), float(m.group(3))
    label = drone_label(mission.drones[k].id) if k < len(mission.drones) else f"drone {k + 1}"
    if not math.isfinite(need):
        return f"{label} could not reach any end airport on paths that avoid the known SAMs"
    return (
        f"{label} would need {need:.1f} km to fly what it must (its frozen legs and the"
        f" targets the constraints give it) and reach an airport, with {fuel:.1f} km of fuel"
    )


def _unreachable(
    drone: str, changed: Scenario, current: PlanFigures, state: MissionState
) -> list[str]:
    """The targets ``drone`` would visit now that it can no longer reach: those on its
    current plan, then any other it could sense but not fly to and back from on its fuel."""
    out = list(current.drones.get(drone, DroneFigures(planned=False)).targets)
    config = changed.drone_configs[drone]
    try:
        mission = compile_mission(changed.model_copy(update={"drone_configs": {drone: config}}))
    except PlannerError:
        return out
    if not mission.drones:
        return out
    spec = mission.drones[0]
    dist = mission.dist
    for t in spec.eligible:
        t_id = mission.node_ids[t]
        if t_id in out or t_id in state.collected:
            continue
        back = min((float(dist[t, e]) for e in spec.ends), default=math.inf)
        if float(dist[spec.start, t]) + back > spec.budget:
            out.append(t_id)
    return out


def _from_start_current(state: MissionState) -> PlanFigures:
    """The plan the run started with (its first committed plan); without one, what the
    run did: each drone's targets collected and km flown."""
    if state.first_plan is not None:
        return _figures(state.first_plan, state.scenario)
    drones = {
        d.id: DroneFigures(
            targets=state.collected_by(d.id),
            end=d.route[-1] if d.route else None,
            points=d.points,
            fuel=max(0.0, d.budget - d.fuel),
        )
        for d in state.drones.values()
    }
    return PlanFigures(
        points=sum(f.points for f in drones.values()),
        fuel=sum(f.fuel for f in drones.values()),
        drones=drones,
    )


async def what_if(
    changes: Sequence[Mapping[str, Any]],
    state: MissionState,
    *,
    world: World | None,
    not_planned: Mapping[str, str] | None = None,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> WhatIfResult:
    """Plan ``changes`` on a copy of the remainder and compare (see the module docstring).

    ``world`` is the world ``state`` was read from (not needed when the run is over);
    ``not_planned`` the drones no plan may
    re-task (sent home by fuel safety).
    """
    if not changes:
        raise WhatIfError("what if: nothing to change")
    from_start = state.over
    if from_start:  # nothing left to fly: the mission from its start, as loaded
        base = state.scenario
    elif world is None:
        raise WhatIfError("what if: no world to plan from was given")
    else:  # read between ticks; the worker thread only ever sees the copy
        base = build_replan(
            world, world.tick, reserve=state.fuel_reserve, not_planned=dict(not_planned or {})
        ).scenario
    changed, constraints, notes = apply_changes(base, changes, state, from_start=from_start)
    try:
        control_constraints = parse_constraints(_base_constraints(state))
    except ValidationError:
        control_constraints = OperatorConstraints()

    def plan_both() -> tuple[Solution, tuple[Solution, dict[str, str], dict[str, str]]]:
        """(control, changed): both plans, one after the other, in the worker thread."""
        control = plan_remainder(base, control_constraints, iterations=iterations, seed=seed)
        return control, plan_narrowed(changed, constraints, iterations=iterations, seed=seed)

    control, (solution, left_out, rerouted) = await asyncio.to_thread(plan_both)
    current = _from_start_current(state) if from_start else current_figures(state)
    changed_fig = _figures(solution, changed)
    if from_start:
        notes.insert(0, "the run is over: planned from the mission's start, against its first plan")
    else:
        for d in state.drones.values():
            if d.status == "holding":
                notes.append(f"{d.label} is holding: its current remaining path is not counted")
    notes += list(rerouted.values())
    infeasible = {
        d: {"reason": why, "unreachable": _unreachable(d, changed, current, state)}
        for d, why in left_out.items()
    }
    return WhatIfResult(
        source=state.source,
        tick=state.tick,
        changes=[dict(c) for c in changes],
        description=[describe_change(c) for c in changes],
        current=current,
        control=_figures(control, base),
        changed=changed_fig,
        diff=_diff(current, changed_fig),
        notes=notes,
        iterations=iterations,
        seed=seed,
        from_start=from_start,
        infeasible=infeasible,
    )
