"""The rules answers: a deterministic answer per question topic, citing the state's numbers.

``responder_rules(question, state, whatif)`` answers a what-if's difference when a what-if
result is given, else the question's topic (``questions.topic_of``): fuel margins, points
so far / planned / possible, targets not collected or unassigned with the reason for each,
where a drone is and what it does, why a target is excluded or not visited, the known SAMs,
the mission's status; fuel used, budgets, drones compared, totals and targets visited
(``fleet``); why one target before another and why a target went to a drone (``order``);
a debugging question from the run's planning troubles (``debug``). Every number stated is also cited (label, value, unit) and every id
named is listed, exactly as an engine's answer must do. Before a plan exists the answer
says so first.
"""

from __future__ import annotations

import math
from typing import Any

from agents.responder.context import number_or_dash
from agents.responder.debug import debug
from agents.responder.fleet import (
    budgets,
    compare,
    fuel_left,
    fuel_used,
    home,
    still_to_fly,
    totals,
    visited,
)
from agents.responder.order import allocation, order
from agents.responder.questions import (
    Allocation,
    Budgets,
    Compare,
    Debug,
    Drones,
    FuelLeft,
    FuelUsed,
    Home,
    Margins,
    OpenTargets,
    Order,
    Points,
    Remaining,
    Sams,
    Status,
    Totals,
    Visited,
    Why,
    topic_of,
)
from agents.responder.written import Answer
from agents.words.state import MissionState
from planner.model import Target, drone_label

__all__ = ["NO_PLAN", "Answer", "responder_rules"]

# the project's words when no plan exists (the posted venue's answer starts with them too)
NO_PLAN = "No plan yet — plan first?"


def responder_rules(
    question: str, state: MissionState, whatif: Any | None = None
) -> dict[str, Any]:
    """The deterministic answer to ``question`` over ``state`` (see the module docstring).

    ``whatif`` is an ``agents.words.whatif.WhatIfResult``; given one, the answer is its
    difference against the current plan, whatever the question.
    """
    a = Answer()
    if whatif is not None:
        _what_if(a, whatif)
        return a.done()
    topic = topic_of(question, state)
    if state.plan is None and not state.collected:
        a.lines.append(f"{NO_PLAN} No mission plan exists yet (isr plan, isr run, or ask to plan).")
        if isinstance(topic, (Margins, Order, Allocation, Remaining, Home, Points, Visited)):
            _no_plan(a, state)  # a route's figures without a route would be made up
            return a.done()
    match topic:
        case Order(first=first, second=second, drone=drone):
            order(a, state, first, second, drone)
        case FuelUsed(which=which, drones=drones):
            fuel_used(a, state, which, drones)
        case Compare(drones=drones):
            compare(a, state, drones)
        case Budgets(drones=drones):
            budgets(a, state, drones)
        case Allocation(target=target, drone=drone, negated=negated):
            allocation(a, state, target, drone, negated)
        case Totals():
            totals(a, state)
        case Visited(rank=rank):
            visited(a, state, rank)
        case Margins(least=least):
            _margins(a, state, least=least)
        case Why(targets=targets):
            for t in targets:
                _why(a, state, t)
        case Drones(drones=drones):
            for drone_id in drones:
                _drone(a, state, drone_id)
        case Points(rank=rank, drones=drones) if drones:
            for drone_id in drones:
                _drone_points(a, state, drone_id)
        case Points(rank=rank):
            _points(a, state, rank)
        case Sams():
            _sams(a, state)
        case OpenTargets(only_unassigned=only_unassigned):
            _open(a, state, only_unassigned=only_unassigned)
        case Status():
            _status(a, state)
        case Debug():
            debug(a, state)
        case FuelLeft(which=which, drones=drones):
            fuel_left(a, state, which, drones)
        case Remaining(drones=drones):
            still_to_fly(a, state, drones)
        case Home(negated=negated):
            home(a, state, negated)
    return a.done()


def _no_plan(a: Answer, state: MissionState) -> None:
    """What is known without a plan: each drone's fuel and budget, no route's figures."""
    a.lines.append(
        "Without a plan there is no route: no margin, order, targets planned or points planned"
        " to give. Fuel now: "
        + "; ".join(f"{d.label} {d.fuel:.1f} of {d.budget:.1f} km" for d in state.drones.values())
        + "."
    )
    for d in state.drones.values():
        a.name(d.label)
        a.num(f"{d.label} fuel left", d.fuel, "km")
        a.num(f"{d.label} fuel budget", d.budget, "km")


def _target(state: MissionState, t: str) -> Target:
    target = state.environment.target(t)
    if target is None:
        raise KeyError(f"unknown target {t!r}")
    return target


def _margins(a: Answer, state: MissionState, least: bool = False) -> None:
    known = [
        (d, d.margin_km, d.remaining_km)
        for d in state.drones.values()
        if d.margin_km is not None and d.remaining_km is not None
    ]
    if not known:
        a.lines.append("No drone's fuel margin can be computed now (all are lost or holding).")
        return
    ranked = sorted(known, key=lambda row: (row[1], row[0].id), reverse=not least)
    best, best_margin, best_remaining = ranked[0]
    word = "least" if least else "most"
    a.lines.append(
        f"{best.label} has the {word} fuel margin: {best.label}: {best_margin:.1f} km"
        f" margin (fuel {best.fuel:.1f}, remaining path {best_remaining:.1f})."
    )
    others = [
        f"{d.label}: {margin:.1f} km margin (fuel {d.fuel:.1f}, remaining path {remaining:.1f})"
        for d, margin, remaining in ranked[1:]
    ]
    unknown = [f"{d.label}: {d.status}" for d in state.drones.values() if d.margin_km is None]
    if others or unknown:
        a.lines.append(
            "Others: " + "; ".join(others + [f"{u}, margin unknown" for u in unknown]) + "."
        )
    for d, margin, remaining in ranked:
        a.name(d.label)
        a.num(f"{d.label} fuel margin", margin, "km")
        a.num(f"{d.label} fuel left", d.fuel, "km")
        a.num(f"{d.label} remaining path", remaining, "km")


def _points(a: Answer, state: MissionState, rank: str | None = None) -> None:
    if rank is not None:
        ranked = sorted(state.drones.values(), key=lambda d: (d.points, d.id))
        if rank == "most":
            ranked.reverse()
        top = ranked[0]
        ties = [d.label for d in ranked if d.points == top.points]
        who = " and ".join(ties)
        a.lines.append(
            f"{who} {'has' if len(ties) == 1 else 'have'} the {rank} points: {top.points:g}"
            f" ({', '.join(state.collected_by(top.id)) or 'no target'})."
        )
    per = ", ".join(f"{d.label} {d.points:g}" for d in state.drones.values())
    to_collect = state.planned_by
    a.lines.append(
        f"Points so far: {state.collected_points:g} collected ({per}) from"
        f" {len(state.collected)} targets."
    )
    a.lines.append(
        f"Planned: {state.planned_points:g} in total, {state.points_to_collect:g}"
        f" still to collect from {len(to_collect)} targets"
        + (f" ({', '.join(to_collect)})." if to_collect else ".")
    )
    possible = sum(t.priority for t in state.environment.targets if t.id not in state.excluded)
    a.lines.append(f"Reachable at most: {possible:g} points (known targets outside known SAMs).")
    a.num("points collected", state.collected_points)
    a.num("points planned in total", state.planned_points)
    a.num("points still to collect", state.points_to_collect)
    a.num("points possible", possible)
    for d in state.drones.values():
        a.num(f"{d.label} points", d.points)
    a.name(*[d.label for d in state.drones.values()], *to_collect)


def _drone_points(a: Answer, state: MissionState, drone_id: str) -> None:
    """One drone's points: collected so far (and from which targets), still planned, both."""
    d = state.drones[drone_id]
    got = state.collected_by(d.id)
    todo = [t for t in d.planned_targets if t not in state.collected]
    planned = sum(state.priority(t) for t in todo)
    a.lines.append(
        f"{d.label} collected {d.points:g} points ({', '.join(got) or 'no target'});"
        f" {planned:g} points still planned ({', '.join(todo) or 'no target'});"
        f" {d.points + planned:g} points in all once its plan is flown"
        + (f" ({d.label} is lost)." if d.status == "lost" else ".")
    )
    a.name(d.label, *got, *todo)
    a.num(f"{d.label} points", d.points)
    a.num(f"{d.label} points still planned", planned)
    a.num(f"{d.label} points once flown", d.points + planned)


def _reason(state: MissionState, t: str) -> str:
    planned = state.planned_by
    if t in planned:
        return f"planned for {drone_label(planned[t])}"
    sam = state.sam_containing(t)
    if sam is not None:
        return f"excluded: inside {sam[0]} ({sam[1]:.1f} km from its centre, range {sam[2]:g})"
    if not state.sensors_for(t):
        return f"no drone left can sense type {_target(state, t).type}"
    forbidden = [d for d, ts in (state.constraints.get("forbidden") or {}).items() if t in ts]
    if forbidden and set(state.sensors_for(t)) <= {str(d) for d in forbidden}:
        return "forbidden by the operator for every drone that can sense it"
    if state.plan is None:
        return "not planned: no plan exists yet"  # no route, so no fuel reason either
    return "not in the plan: no drone's fuel covered it on its route"


def _open(a: Answer, state: MissionState, only_unassigned: bool = False) -> None:
    items = state.unassigned if only_unassigned else state.open_targets
    what = "unassigned (no drone's route collects them)" if only_unassigned else "not collected yet"
    if not items:
        a.lines.append(
            f"No target is {what}: {len(state.collected)} of"
            f" {len(state.environment.targets)} collected."
        )
        a.num("targets collected", len(state.collected))
        return
    points = sum(state.priority(t) for t in items)
    a.lines.append(
        f"{len(items)} targets {what}, worth {points:g} points: "
        + "; ".join(f"{t} (priority {state.priority(t):g}, {_reason(state, t)})" for t in items)
        + "."
    )
    a.lines.append(f"{len(state.collected)} of {len(state.environment.targets)} targets collected.")
    a.num("targets " + ("unassigned" if only_unassigned else "not collected"), len(items))
    a.num("their points", points)
    a.num("targets collected", len(state.collected))
    for t in items:
        a.num(f"{t} priority", state.priority(t))
    a.name(*items)


def _why(a: Answer, state: MissionState, t: str) -> None:
    a.name(t)
    target = _target(state, t)
    a.num(f"{t} priority", target.priority)
    if t in state.collected:
        collector = drone_label(state.collected[t])
        a.lines.append(
            f"{t} (priority {target.priority:g}) is not excluded: {collector} collected it."
        )
        a.name(collector)
        return
    reason = _reason(state, t)
    sam = state.sam_containing(t)
    if sam is not None:
        a.name(sam[0])
        a.num(f"{t} distance to {sam[0]} centre", sam[1], "km")
        a.num(f"{sam[0]} range", sam[2], "km")
        a.lines.append(
            f"{t} (priority {target.priority:g}) is {reason}; no path may enter a"
            f" SAM disk, so no drone can reach it."
        )
        return
    if reason.startswith("planned"):
        planner = state.drones[state.planned_by[t]]
        a.lines.append(
            f"{t} (priority {target.priority:g}) is not excluded: it is {reason}"
            f" (route {' -> '.join(planner.route)})."
        )
        a.name(planner.label)
        return
    able = [state.drones[d] for d in state.sensors_for(t)]
    detail = "; ".join(f"{d.label} margin {number_or_dash(d.margin_km)} km" for d in able)
    a.lines.append(
        f"{t} (priority {target.priority:g}, type {target.type}) is {reason}"
        + (f"; drones that can sense it: {detail}." if able else ".")
    )
    for d in able:
        a.name(d.label)
        if d.margin_km is not None:
            a.num(f"{d.label} fuel margin", d.margin_km, "km")


def _drone(a: Answer, state: MissionState, drone_id: str) -> None:
    d = state.drones[drone_id]
    a.name(d.label)
    a.num(f"{d.label} x", d.x, "km")
    a.num(f"{d.label} y", d.y, "km")
    a.num(f"{d.label} fuel left", d.fuel, "km")
    a.num(f"{d.label} fuel budget", d.budget, "km")
    a.num(f"{d.label} points", d.points)
    if d.status == "lost":
        # its last state: where it was lost, the fuel it had then, what it collected
        a.lines.append(
            f"{d.label} is lost ({d.lost_reason or 'unknown reason'}) at ({d.x:.1f},"
            f" {d.y:.1f}) with {d.fuel:.1f} km of fuel left of its {d.budget:.1f} km budget"
            f" ({max(0.0, d.budget - d.fuel):.1f} km flown); it collected {d.points:g} points"
            f" from {', '.join(state.collected_by(d.id)) or 'no target'}"
            + (" (in that order)." if len(state.collected_by(d.id)) > 1 else ".")
        )
        a.num(f"{d.label} fuel used", max(0.0, d.budget - d.fuel), "km")
        return
    heading = math.degrees(d.heading) % 360
    line = (
        f"{d.label} is {d.status} at ({d.x:.1f}, {d.y:.1f}), heading {heading:.0f} deg;"
        f" fuel {d.fuel:.1f} of {d.budget:.1f} km"
    )
    margin = d.margin_km  # known whenever the remaining path is: the drone is not lost
    if d.remaining_km is not None and margin is not None:
        line += f", remaining path {d.remaining_km:.1f} km (margin {margin:.1f} km)"
        a.num(f"{d.label} remaining path", d.remaining_km, "km")
        a.num(f"{d.label} fuel margin", margin, "km")
    line += (
        f"; {d.points:g} points from {', '.join(state.collected_by(d.id)) or 'no target yet'}"
        + (" (in that order)" if len(d.collected) > 1 else "")
        + "."
    )
    a.lines.append(line)
    if d.planned_targets:
        end = d.route[-1] if d.route else "?"
        pts = sum(state.priority(t) for t in d.planned_targets)
        a.lines.append(f"Next: {', '.join(d.planned_targets)} ({pts:g} points) then {end}.")
        a.num(f"{d.label} points still planned", pts)
        a.name(*d.planned_targets)
    elif d.status in ("flying", "holding"):
        a.lines.append(
            f"No target left on its route; it flies to {d.route[-1] if d.route else 'base'}."
        )
    a.name(*d.collected)


def _sams(a: Answer, state: MissionState) -> None:
    sams = state.environment.sams
    if not sams:
        a.lines.append("No SAM is known.")
        a.num("SAMs known", 0)
        return
    a.lines.append(
        f"{len(sams)} SAMs known: "
        + "; ".join(f"{s.id} at ({s.x:g}, {s.y:g}) range {s.range:g} km" for s in sams)
        + "."
    )
    # an excluded target is inside a known SAM by definition
    inside = {t: sam[0] for t in state.excluded if (sam := state.sam_containing(t)) is not None}
    if inside:
        a.lines.append(
            "Targets inside them (excluded): "
            + ", ".join(f"{t} ({s})" for t, s in inside.items())
            + "."
        )
    a.num("SAMs known", len(sams))
    for s in sams:
        a.num(f"{s.id} range", s.range, "km")
    a.name(*[s.id for s in sams], *inside)


def _status(a: Answer, state: MissionState) -> None:
    a.lines.append(f"Mission at tick {state.tick} ({state.time:.1f} s), {state.mode}.")
    parts = []
    for d in state.drones.values():
        extra = f", margin {d.margin_km:.1f} km" if d.margin_km is not None else ""
        parts.append(
            f"{d.label} {d.status} (fuel {d.fuel:.1f} of {d.budget:.1f}{extra},"
            f" {d.points:g} points)"
        )
        a.num(f"{d.label} fuel left", d.fuel, "km")
        a.name(d.label)
    a.lines.append("; ".join(parts) + ".")
    lost = [d.label for d in state.drones.values() if d.status == "lost"]
    a.lines.append(
        f"Points: {state.collected_points:g} collected, {state.planned_points:g}"
        f" planned in total; {len(state.collected)} of"
        f" {len(state.environment.targets)} targets collected;"
        f" excluded: {', '.join(state.excluded) or 'none'};"
        f" lost: {', '.join(lost) or 'none'}."
    )
    a.num("points collected", state.collected_points)
    a.num("points planned in total", state.planned_points)
    a.num("targets collected", len(state.collected))
    a.name(*state.excluded)


def _what_if(a: Answer, result: Any) -> None:
    """The difference a what-if makes (``agents.words.whatif.WhatIfResult``)."""
    cur, new, ctl = result.current, result.changed, result.control
    change = "; ".join(result.description)
    delta = new.points - cur.points
    start = getattr(result, "from_start", False)
    what, against = (
        ("points over the whole mission", "the plan the run started with")
        if start
        else ("points still to collect", "the current plan")
    )
    a.lines.append(
        f"What if {change}: {new.points:g} {what} instead of"
        f" {cur.points:g} under {against} ({delta:+g}); fuel {new.fuel:.1f}"
        f" km instead of {cur.fuel:.1f} ({new.fuel - cur.fuel:+.1f})."
    )
    for drone_id, why in (getattr(result, "infeasible", None) or {}).items():
        label = drone_label(drone_id)
        lost = why.get("unreachable") or []
        a.lines.append(
            f"{label} could not fly this: {why['reason'].removeprefix(label + ': ')};"
            f" it is left out of the plan"
            + (f" and can no longer reach {', '.join(lost)}." if lost else ".")
        )
        a.name(label, *lost)
    if abs(ctl.points - cur.points) > 1e-9:
        a.lines.append(
            f"Replanned now without the change: {ctl.points:g} points, so the change"
            f" itself is worth {new.points - ctl.points:+g}."
        )
    per = []
    for drone_id, diff in result.diff["drones"].items():
        label = drone_label(drone_id)
        bits = []
        if diff["added"]:
            bits.append("+" + ", +".join(diff["added"]))
        if diff["removed"]:
            bits.append("-" + ", -".join(diff["removed"]))
        if diff.get("not_planned"):
            bits.append("not planned")
        fuel = f"fuel {diff['fuel_before']:.1f} -> {diff['fuel_after']:.1f} km"
        per.append(f"{label}: {' '.join(bits) or 'same targets'}, {fuel}")
        a.name(label, *diff["added"], *diff["removed"])
        a.num(f"{label} fuel after", diff["fuel_after"], "km")
    if per:
        a.lines.append("Per drone: " + "; ".join(per) + ".")
    lost = result.diff.get("dropped") or []
    if lost:
        a.lines.append(f"Not collected any more: {', '.join(lost)}.")
        a.name(*lost)
    gained = result.diff.get("gained") or []
    if gained:
        a.lines.append(f"Collected in addition: {', '.join(gained)}.")
        a.name(*gained)
    if result.notes:
        a.lines.append("Notes: " + "; ".join(result.notes) + ".")
    a.lines.append("The live plan is unchanged.")
    a.num("points still to collect (what-if)", new.points)
    a.num("points still to collect (current plan)", cur.points)
    a.num("points difference", delta)
    a.num("points replanned without the change", ctl.points)
    a.num("fuel (what-if)", new.fuel, "km")
    a.num("fuel (current plan)", cur.fuel, "km")
