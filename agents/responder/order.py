"""Rules answers to "why" about routes: why one target before another, why a target went to
a drone, why a drone got the targets it got (or none) -- with distances and fuel.

Distances are the shortest SAM-avoiding ones on the known map (``planner.geometry``, the
planner's own, with its safety margin), between the nodes of each drone's whole route:
its start airport, the targets it collected (in the order it collected them), the targets
it still has to collect, its end. "Why X before Y" compares that route with the one where
X and Y swap places: the detour the other order would cost, against the drone's fuel. A
premise that does not hold (the drone named did not visit both, or visited them the other
way round, or they are on two drones) is said first.
"""

from __future__ import annotations

import math

import numpy as np

from agents.responder.written import Answer
from agents.words.state import DroneState, MissionState
from planner.geometry import SamField
from planner.model import drone_label

__all__ = ["Geo", "allocation", "order", "route_of"]


class Geo:
    """SAM-avoiding distances between the known airports and targets, computed once."""

    def __init__(self, state: MissionState) -> None:
        """Every known airport and target of ``state`` as a node."""
        env = state.environment
        self.ids = [a.id for a in env.airports] + [t.id for t in env.targets]
        self.index = {n: i for i, n in enumerate(self.ids)}
        points = [(a.x, a.y) for a in env.airports] + [(t.x, t.y) for t in env.targets]
        field = SamField([(s.x, s.y, s.range) for s in env.sams])
        self.dist = field.all_pairs(_array(points)).dist

    def d(self, a: str, b: str) -> float:
        """Km from ``a`` to ``b`` (``inf`` when either is unknown or no way exists)."""
        if a not in self.index or b not in self.index:
            return math.inf
        return float(self.dist[self.index[a], self.index[b]])

    def length(self, route: list[str]) -> float:
        """Km along ``route``, leg by leg."""
        return sum(self.d(a, b) for a, b in zip(route, route[1:]))


def _array(points: list[tuple[float, float]]) -> np.ndarray:
    return np.asarray(points, dtype=float).reshape(-1, 2)


def route_of(state: MissionState, d: DroneState) -> list[str]:
    """The drone's whole route: start, targets collected in order, targets still planned,
    end (the committed route's last airport, else its home)."""
    config = state.scenario.drone_configs[d.id]
    airports = {a.id for a in state.environment.airports}
    start = config.start
    end = d.route[-1] if d.route and d.route[-1] in airports else config.home
    targets = state.collected_by(d.id) + [t for t in d.planned_targets if t not in state.collected]
    return [n for n in [start, *targets, end] if n is not None]


def _owner(state: MissionState, t: str) -> tuple[str | None, str]:
    """(drone, "collected" | "planned") of a target, or (None, why it has none)."""
    if t in state.collected:
        return state.collected[t], "collected"
    planned = state.planned_by
    if t in planned:
        return planned[t], "planned"
    sam = state.sam_containing(t)
    if sam is not None:
        return None, f"excluded: inside {sam[0]}"
    if not state.sensors_for(t):
        return None, "no drone left can sense its type"
    return None, "on no drone's route"


def _fuel_line(a: Answer, d: DroneState) -> str:
    used = max(0.0, d.budget - d.fuel)
    a.num(f"{d.label} fuel budget", d.budget, "km")
    a.num(f"{d.label} fuel used", used, "km")
    line = f"{d.label}'s fuel budget is {d.budget:.1f} km, {used:.1f} km used"
    if d.margin_km is not None:
        a.num(f"{d.label} fuel margin", d.margin_km, "km")
        line += f", margin {d.margin_km:.1f} km"
    return line


def order(a: Answer, state: MissionState, first: str, second: str, drone: str | None) -> None:
    """Why ``first`` comes before ``second`` (see the module docstring)."""
    a.name(first, second)
    o1, how1 = _owner(state, first)
    o2, how2 = _owner(state, second)
    named = state.drones[drone] if drone is not None else None
    if named is not None:
        a.name(named.label)
        missing = [t for t, o in ((first, o1), (second, o2)) if o != named.id]
        if missing:
            mine = route_of(state, named)[1:-1]
            a.lines.append(
                f"The premise does not hold: {named.label} did not visit"
                f" {' and '.join(missing) if len(missing) == 1 else f'{first} or {second}'}"
                f" ({named.label}'s targets:"
                f" {', '.join(mine) or 'none'})."
            )
            a.name(*mine)
    if o1 is None or o2 is None:
        for t, o, how in ((first, o1, how1), (second, o2, how2)):
            if o is None:
                a.lines.append(f"{t} is on no route ({how}): there is no order to explain.")
        return
    if o1 != o2:
        a.lines.append(
            f"{first} and {second} are on different drones ({first}: {how1} by"
            f" {drone_label(o1)}; {second}: {how2} by {drone_label(o2)}), so no route puts"
            " one before the other."
        )
        a.name(drone_label(o1), drone_label(o2))
        return
    d = state.drones[o1]
    a.name(d.label)
    if named is not None and named.id != d.id:
        a.lines.append(f"{d.label} has both ({first}: {how1}; {second}: {how2}).")
    route = route_of(state, d)
    i, j = route.index(first), route.index(second)
    if i > j:
        a.lines.append(
            f"{d.label} visits {second} before {first}, not {first} before {second}"
            f" (route {' -> '.join(route)})."
        )
        i, j = j, i
    x, y = route[i], route[j]
    swapped = list(route)
    swapped[i], swapped[j] = y, x
    geo = Geo(state)
    lo, hi = i - 1, j + 1
    seg, alt = route[lo : hi + 1], swapped[lo : hi + 1]
    here, there = geo.length(seg), geo.length(alt)
    whole, whole_alt = geo.length(route), geo.length(swapped)
    a.num(f"{' -> '.join(seg)} length", here, "km")
    a.num(f"{' -> '.join(alt)} length", there, "km")
    a.name(*seg)
    legs = " + ".join(f"{geo.d(p, q):.1f}" for p, q in zip(seg, seg[1:]))
    legs_alt = " + ".join(f"{geo.d(p, q):.1f}" for p, q in zip(alt, alt[1:]))
    a.lines.append(
        f"{d.label} flies {' -> '.join(seg)}: {legs} = {here:.1f} km; the other order"
        f" {' -> '.join(alt)} would be {legs_alt} = {there:.1f} km."
    )
    detour = there - here
    fuel = _fuel_line(a, d)
    if detour > 0.05:
        a.num("detour of the other order", detour, "km")
        verdict = (
            f"{x} before {y} is the shorter way: the other order costs {detour:.1f} km more"
            f" (whole route {whole:.1f} km instead of {whole_alt:.1f} km)."
        )
        if d.margin_km is not None and detour > d.margin_km:
            verdict += f" {fuel}: the detour would not fit."
        else:
            verdict += f" {fuel}."
        a.lines.append(verdict)
    elif detour < -0.05:
        a.num("saving of the other order", -detour, "km")
        a.lines.append(
            f"On the known map the other order would be {-detour:.1f} km shorter: the route"
            f" was cut and replanned as the mission went (the map changed), so the order"
            f" flown was the best one when it was planned. {fuel}."
        )
    else:
        a.lines.append(f"Both orders are the same length: a tie. {fuel}.")
    a.num(f"{d.label} route length", whole, "km")
    a.num("route length in the other order", whole_alt, "km")


def _insertion(geo: Geo, route: list[str], t: str) -> tuple[float, str, str]:
    """The cheapest extra km of putting ``t`` into ``route`` (and between which nodes)."""
    best = (math.inf, "", "")
    for p, q in zip(route, route[1:]):
        extra = geo.d(p, t) + geo.d(t, q) - geo.d(p, q)
        if extra < best[0]:
            best = (extra, p, q)
    return best


def _saving(geo: Geo, route: list[str], t: str) -> float:
    """The km ``route`` saves without ``t``."""
    k = route.index(t)
    return geo.d(route[k - 1], t) + geo.d(t, route[k + 1]) - geo.d(route[k - 1], route[k + 1])


def _can_sense(state: MissionState, d: DroneState, t: str) -> bool:
    target = state.environment.target(t)
    return target is not None and (d.sensors == "ALL" or target.type in d.sensors)


def allocation(
    a: Answer,
    state: MissionState,
    target: str | None,
    drone: str | None,
    negated: bool = False,
) -> None:
    """Why ``target`` went where it went (and not to ``drone``), or why ``drone`` has the
    targets it has. Unless the question is ``negated`` ("why NOT D1"), naming a drone that
    did not get the target is a premise that does not hold, and the answer says so."""
    geo = Geo(state)
    if target is None:
        assert drone is not None
        _drone_targets(a, state, geo, state.drones[drone])
        return
    a.name(target)
    owner, how = _owner(state, target)
    t = state.environment.target(target)
    assert t is not None
    a.num(f"{target} priority", t.priority)
    if owner is None:
        a.lines.append(f"{target} (priority {t.priority:g}) went to no drone: {how}.")
        _others(a, state, geo, target, exclude=None)
        return
    o = state.drones[owner]
    a.name(o.label)
    route = route_of(state, o)
    saving = _saving(geo, route, target)
    a.num(f"{target} detour on {o.label}", saving, "km")
    a.lines.append(
        f"{target} (priority {t.priority:g}, type {t.type}) was {how} by {o.label}: on its"
        f" route it costs a detour of {saving:.1f} km"
        f" ({route[route.index(target) - 1]} -> {target} -> {route[route.index(target) + 1]})."
    )
    if drone is not None and drone != owner and not negated:
        a.lines.append(f"The premise does not hold: {drone_label(drone)} did not get {target}.")
    _others(a, state, geo, target, exclude=owner)


def _others(a: Answer, state: MissionState, geo: Geo, target: str, exclude: str | None) -> None:
    """What ``target`` would cost each other drone, against its fuel."""
    parts = []
    for d in state.drones.values():
        if d.id == exclude:
            continue
        a.name(d.label)
        if d.status == "lost":
            parts.append(f"{d.label} is lost")
            continue
        if not _can_sense(state, d, target):
            sensors = ", ".join(d.sensors) if d.sensors != "ALL" else "all"
            parts.append(f"{d.label} cannot sense it (sensors {sensors})")
            continue
        extra, p, q = _insertion(geo, route_of(state, d), target)
        if not math.isfinite(extra):
            parts.append(f"{d.label} has no way to it")
            continue
        a.num(f"{target} detour on {d.label}", extra, "km")
        fits = ""
        if d.margin_km is not None:
            a.num(f"{d.label} fuel margin", d.margin_km, "km")
            fits = f" against a margin of {d.margin_km:.1f} km" + (
                " (does not fit)" if extra > d.margin_km else " (fits)"
            )
        parts.append(f"{d.label} would fly {extra:.1f} km more (between {p} and {q}){fits}")
    if parts:
        a.lines.append("Other drones: " + "; ".join(parts) + ".")


def _drone_targets(a: Answer, state: MissionState, geo: Geo, d: DroneState) -> None:
    """Why ``d`` has the targets it has: what it can sense and where those targets went."""
    a.name(d.label)
    mine = route_of(state, d)[1:-1]
    sensors = "all types" if d.sensors == "ALL" else "types " + ", ".join(d.sensors)
    eligible = [t.id for t in state.environment.targets if _can_sense(state, d, t.id)]
    a.lines.append(
        f"{d.label} can sense {sensors}: {len(eligible)} known targets"
        f" ({', '.join(eligible) or 'none'}); it has {len(mine)}"
        f" ({', '.join(mine) or 'none'}). {_fuel_line(a, d)}."
    )
    a.num(f"{d.label} eligible targets", len(eligible))
    a.num(f"{d.label} targets", len(mine))
    parts = []
    covered = True
    for t in eligible:
        if t in mine:
            continue
        owner, how = _owner(state, t)
        a.name(t)
        if owner is None:
            covered = covered and how.startswith("excluded")
            parts.append(f"{t}: {how}")
            continue
        extra, _p, _q = _insertion(geo, route_of(state, d), t)
        a.num(f"{t} detour on {d.label}", extra, "km")
        parts.append(f"{t}: {how} by {drone_label(owner)} ({extra:.1f} km extra for {d.label})")
    if parts:
        a.lines.append("Its other eligible targets: " + "; ".join(parts) + ".")
    if not mine and eligible and covered:
        a.lines.append(
            f"Every target {d.label} can sense is excluded or on another drone's route,"
            " so it has nothing to fly for."
        )
