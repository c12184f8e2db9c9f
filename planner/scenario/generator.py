"""Random missions with disruptions placed where they matter, seeded and reproducible.

``generate_mission(spec, index)`` draws one mission from a ``SuiteSpec``: airports clear of
every SAM, targets clear of them, drones whose sensors can see some target, a fuel budget
that cannot reach everything (so choices matter). It then plans the mission once (the
planner's first plan, seeded) and puts one disruption of the class the index picks (cycled
through ``spec.disruptions``) on its timeline, where that plan would feel it:

* ``popup_sam``: a hidden SAM across the longest planned path, halfway along it;
* ``lost_drone``: the drone with the most planned points lost 30-60 % of the way round;
* ``new_target``: a priority-10 target far from every planned path, a fifth to half-way in;
* ``moved_target``: a target planned late on a route moved elsewhere before it is reached;
* ``fuel_leak``: the longest-flying drone's fuel cut by 30-50 % a third of the way round;
* ``sam_moves``: a known SAM moved onto a planned corridor ahead of the drones;
* ``leak_twice`` (adversarial): the longest-flying drone's fuel cut twice: 30-50 % a third
  of the way round (as ``fuel_leak``), then a further 10-25 % of what the first plan leaves
  it two thirds of the way round (60-70 %: by then a replan has planned it down to its
  reserve), still leaving the straight line to an airport and 3 % of the side to spare;
* ``corridor_closes`` (adversarial): a hidden SAM, as large as a known one, across the last
  leg of a drone's plan (its last target to its end airport) where that leg runs closest to
  a known SAM's edge (hugging one, or threading between two), added as the drone leaves its
  last target and first seen from that leg; the drone can still reach an airport around it
  (the planner's SAM-avoiding shortest path, 3 % of the side to spare) with the fuel the
  first plan leaves it where it sees the SAM;
* ``combo``: two of the first six.

Placement keeps a disruption off any drone's position at that moment, either way round its
tour (a SAM dropped on a drone kills it before anything can act, which tests nothing), and
off the airports; a fuel leak leaves enough to reach an airport; a combo holds at most one
SAM class, and its SAM comes first. The first plan is planned with the runs' own budget and
seed (``iterations``, ``plan_seed``), so it is the plan a run flies until the first
disruption. The two adversarial classes are a suite of their own (``scenarios/suites/
adversarial.yaml``): a combo never draws them, and a spec that names no classes cycles
through the others. When a
class cannot be placed (no route long enough, say), the next one in the list is tried and
the mission's ``Generated.disruption`` says which was placed. Every mission passes
``parse_scenario``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from planner.edits import DISRUPTION_CLASSES, EDIT_MODELS, DisruptionClass
from planner.geometry import SamField
from planner.limits import SWARM_DRONES, SWARM_SAMS, SWARM_TARGETS
from planner.mission import compile_mission
from planner.model import Scenario, Solution
from planner.planning import plan_mission
from planner.scenario.io import parse_scenario

__all__ = ["DISRUPTIONS", "Disruption", "Generated", "SuiteSpec", "generate_mission"]

# The classes are the edits' (planner.edits: each edit kind names the classes that place
# it), in the order a suite cycles through them; a combo is two of them.
Disruption = Literal[DisruptionClass, "combo"]
DISRUPTIONS: tuple[Disruption, ...] = (*DISRUPTION_CLASSES, "combo")
# The adversarial classes (issue 22) are left out of combos and of a spec's default, so the
# standard suite draws what it drew before they existed.
_ADVERSARIAL: tuple[Disruption, ...] = ("leak_twice", "corridor_closes")
_SINGLE = tuple(k for k in DISRUPTION_CLASSES if k not in _ADVERSARIAL)
_DEFAULT: tuple[Disruption, ...] = (*_SINGLE, "combo")
Span = tuple[int, int]


class SuiteSpec(BaseModel):
    """What a suite's missions are drawn from (the ``isr scenario generate`` options, or a
    suite file)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field("suite", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    seed: int = Field(0, ge=0, le=2**32 - 1)
    count: int = Field(10, ge=1, le=10_000)
    drones: Span = (3, 8)
    targets: Span = (20, 80)
    sams: Span = (2, 10)
    size: float = Field(100.0, ge=30.0, le=2000.0)  # km: the side of the square
    speed: float = Field(0.1, gt=0.0, le=1.0)  # km/s, every drone
    disruptions: list[Disruption] = Field(default_factory=lambda: list(_DEFAULT), min_length=1)
    # The first plan, against which disruptions are placed, is the one a run flies: the
    # planner's budget and seed here must match the runs' (isr eval: 1500 iterations, seed 0).
    iterations: int = Field(1500, ge=50, le=20_000)
    plan_seed: int = Field(0, ge=0, le=2**32 - 1)
    # Harder suites: each drone's fuel budget drawn from this span (multiples of ``size``);
    # how many disruptions each mission gets (above 1: distinct classes drawn per mission,
    # labelled "N disruptions"); and how late they come (0: as above; f: each drawn share
    # of the way round moved f of the rest of the way towards the end).
    fuel: tuple[float, float] = Field((1.4, 2.4), strict=False)
    per_mission: Span = Field((1, 1), strict=False)
    late: float = Field(0.0, ge=0.0, lt=1.0)

    @model_validator(mode="after")
    def _spans(self) -> SuiteSpec:
        for name, (lo, hi), floor, ceiling in (
            ("drones", self.drones, 1, SWARM_DRONES),
            ("targets", self.targets, 2, SWARM_TARGETS),
            ("sams", self.sams, 0, SWARM_SAMS),
        ):
            if not floor <= lo <= hi <= ceiling:
                raise ValueError(
                    f"{name}: {lo}..{hi} must be a range within {floor}..{ceiling}, low first"
                )
        if not 0.2 <= self.fuel[0] <= self.fuel[1] <= 10.0:
            raise ValueError(
                f"fuel: {self.fuel[0]}..{self.fuel[1]} must be within 0.2..10, low first"
            )
        if not 1 <= self.per_mission[0] <= self.per_mission[1] <= 3:
            raise ValueError(
                f"per_mission: {self.per_mission[0]}..{self.per_mission[1]} must be within 1..3, "
                "low first"
            )
        return self


@dataclass
class Generated:
    """One generated mission: its scenario JSON and what was drawn."""

    index: int
    scenario: dict[str, Any]
    disruption: str | None  # the class placed (None: none could be)
    placed: list[str] = field(default_factory=list)  # each timeline edit's op and id
    planned_points: float = 0.0  # the first plan's, before any disruption


def _rng(spec: SuiteSpec, index: int) -> np.random.Generator:
    return np.random.default_rng([spec.seed, index])


def _environment(spec: SuiteSpec, rng: np.random.Generator) -> dict[str, Any]:
    size = spec.size
    n_drones = int(rng.integers(spec.drones[0], spec.drones[1] + 1))
    n_targets = int(rng.integers(spec.targets[0], spec.targets[1] + 1))
    n_sams = int(rng.integers(spec.sams[0], spec.sams[1] + 1))
    corners = [(0.06, 0.06), (0.94, 0.08), (0.5, 0.94), (0.08, 0.9)]
    airports = [(x * size, y * size) for x, y in corners[: 2 + int(rng.integers(0, 3))]]
    sams: list[tuple[float, float, float]] = []
    for _ in range(n_sams * 50):
        if len(sams) == n_sams:
            break
        r = float(rng.uniform(0.03, 0.08) * size)
        x, y = (float(v) for v in rng.uniform(0.15 * size, 0.85 * size, 2))
        clear = all(math.hypot(x - a, y - b) > r + 0.05 * size for a, b in airports)
        apart = all(math.hypot(x - a, y - b) > r + c + 0.02 * size for a, b, c in sams)
        if clear and apart:
            sams.append((x, y, r))
    targets: list[dict[str, Any]] = []
    for _ in range(n_targets * 50):
        if len(targets) == n_targets:
            break
        x, y = (float(v) for v in rng.uniform(0.02 * size, 0.98 * size, 2))
        if all(math.hypot(x - a, y - b) > c + 0.01 * size for a, b, c in sams):
            targets.append(
                {
                    "id": f"T{len(targets) + 1}",
                    "x": round(x, 3),
                    "y": round(y, 3),
                    "priority": int(rng.integers(1, 11)),
                    "type": "ABC"[int(rng.integers(0, 3))],
                }
            )
    types = {t["type"] for t in targets}
    drones: dict[str, dict[str, Any]] = {}
    for k in range(n_drones):
        sensors: Any = "ALL"
        if rng.random() < 0.5:  # a narrower sensor, always one some target needs
            pick = sorted(types)
            sensors = sorted(
                {pick[int(rng.integers(0, len(pick)))], "A" if "A" in types else pick[0]}
            )
        drones[str(k + 1)] = {
            "fuelBudget": round(float(rng.uniform(*spec.fuel) * size), 1),
            "home_airport": f"A{k % len(airports) + 1}",
            "accessibleTargets": sensors,
        }
    return {
        "environment": {
            "airports": [
                {"id": f"A{i + 1}", "x": round(x, 3), "y": round(y, 3)}
                for i, (x, y) in enumerate(airports)
            ],
            "targets": targets,
            "sams": [
                {"id": f"S{i + 1}", "pos": [round(x, 3), round(y, 3)], "range": round(r, 3)}
                for i, (x, y, r) in enumerate(sams)
            ],
        },
        "drone_configs": drones,
        "sim": {"speed": spec.speed},
    }


# ----- where a plan would feel a disruption ------------------------------------------------


def _along(path: list[tuple[float, float]], frac: float) -> tuple[float, float]:
    """The point ``frac`` of the way along ``path``."""
    pts = np.asarray(path, dtype=float)
    seg = np.hypot(*np.diff(pts, axis=0).T)
    total = float(seg.sum())
    if total <= 0:
        return float(pts[0][0]), float(pts[0][1])
    goal = min(max(frac, 0.0), 1.0) * total
    ends = np.cumsum(seg)
    k = min(int(np.searchsorted(ends, goal)), len(seg) - 1)
    before = float(ends[k - 1]) if k > 0 else 0.0
    t = (goal - before) / seg[k] if seg[k] > 0 else 0.0
    x, y = pts[k] + t * (pts[k + 1] - pts[k])
    return float(x), float(y)


@dataclass
class _Plan:
    scenario: Scenario
    solution: Solution
    speed: float
    size: float
    late: float = 0.0

    def later(self, frac: float) -> float:
        """A drawn share of the way round, moved ``late`` of the rest towards the end."""
        return frac + self.late * (1.0 - frac)

    def flying(self) -> list[str]:
        """Drones with a route of two targets or more, longest first."""
        routes = self.solution.routes.items()
        return [
            d
            for _, d in sorted(
                ((r.distance, d) for d, r in routes if len(r.visited_targets) >= 2), reverse=True
            )
        ]

    def where(self, t: float) -> list[tuple[float, float]]:
        """Every drone with a path, where its plan puts it ``t`` seconds in, flown either way
        round (a tour and its reverse cost the same, and a run may fly the other one)."""
        out = []
        for r in self.solution.routes.values():
            if r.path and r.distance > 0:
                out.append(_along(r.path, t * self.speed / r.distance))
                out.append(_along(r.path[::-1], t * self.speed / r.distance))
        return out

    def home_distance(self, drone: str, t: float) -> float:
        """The straight-line distance from where ``drone`` may be at ``t`` (either way round)
        to its nearest airport: a floor on the fuel it needs to land."""
        path = self.solution.routes[drone].path or []
        distance = self.solution.routes[drone].distance
        airports = self.scenario.environment.airports
        spots = [
            _along(path, t * self.speed / distance),
            _along(path[::-1], t * self.speed / distance),
        ]
        return max(min(math.hypot(x - a.x, y - a.y) for a in airports) for x, y in spots)

    def clear(self, x: float, y: float, r: float, t: float) -> bool:
        """Whether a disk at (x, y) of radius r keeps off every airport and every drone at
        time ``t`` (with room to turn)."""
        room = r + 0.03 * self.size
        env = self.scenario.environment
        near_airport = any(math.hypot(x - a.x, y - a.y) < room for a in env.airports)
        near_drone = any(math.hypot(x - a, y - b) < room for a, b in self.where(t))
        return not near_airport and not near_drone


def _popup_sam(plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    for drone in plan.flying()[:3] * 4:
        path = plan.solution.routes[drone].path or []
        x, y = _along(path, plan.later(float(rng.uniform(0.4, 0.6))))
        r = float(rng.uniform(0.02, 0.04) * plan.size)
        if plan.clear(x, y, r, 1.0):
            return [
                {"t": 1, "op": "add_sam", "id": "POP1", "pos": [x, y], "range": r, "hidden": True}
            ]
    return []


def _lost_drone(plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    flying = plan.flying()
    if not flying:
        return []
    routes = plan.solution.routes
    drone = max(flying, key=lambda d: routes[d].total_points)
    t = plan.later(float(rng.uniform(0.3, 0.6))) * routes[drone].distance / plan.speed
    return [{"t": round(t, 1), "op": "disable_drone", "drone": drone}]


def _mission_time(plan: _Plan) -> float:
    distances = [r.distance for r in plan.solution.routes.values() if r.distance > 0]
    return float(np.median(distances)) / plan.speed if distances else 0.0


def _to_segments(x: float, y: float, path: np.ndarray) -> float:
    """The distance from (x, y) to the polyline ``path`` (n x 2)."""
    a, b = path[:-1], path[1:]
    ab = b - a
    length2 = (ab**2).sum(axis=1)
    t = np.clip(
        ((x - a[:, 0]) * ab[:, 0] + (y - a[:, 1]) * ab[:, 1]) / np.where(length2 > 0, length2, 1.0),
        0.0,
        1.0,
    )
    px, py = a[:, 0] + t * ab[:, 0], a[:, 1] + t * ab[:, 1]
    return float(np.hypot(px - x, py - y).min())


def _far_point(plan: _Plan, rng: np.random.Generator) -> tuple[float, float] | None:
    """A point far from every planned path and clear of every SAM (best of 200 draws)."""
    paths = [
        np.asarray(r.path, dtype=float)
        for r in plan.solution.routes.values()
        if r.path and len(r.path) > 1
    ]
    if not paths:
        return None
    env = plan.scenario.environment
    best, best_d = None, -1.0
    for x, y in rng.uniform(0.05 * plan.size, 0.95 * plan.size, (200, 2)):
        if any(
            math.hypot(x - s.pos[0], y - s.pos[1]) < s.range + 0.02 * plan.size for s in env.sams
        ):
            continue
        d = min(_to_segments(float(x), float(y), p) for p in paths)
        if d > best_d:
            best, best_d = (float(x), float(y)), d
    return best


def _sensor_type(plan: _Plan) -> str:
    """A type the flying drones can all see (A if any can), so someone can collect it."""
    configs = plan.scenario.drone_configs
    for kind in "ABC":
        if any(
            c.accessible_targets == "ALL" or kind in c.accessible_targets for c in configs.values()
        ):
            return kind
    return "A"


def _new_target(plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    point = _far_point(plan, rng)
    if point is None:
        return []
    t = plan.later(float(rng.uniform(0.2, 0.5))) * _mission_time(plan)
    x, y = point
    return [
        {
            "t": round(max(t, 1.0), 1),
            "op": "add_target",
            "id": "NEW1",
            "x": x,
            "y": y,
            "priority": 10,
            "type": _sensor_type(plan),
        }
    ]


def _moved_target(plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    for drone in plan.flying():
        route = plan.solution.routes[drone]
        late = route.visited_targets[len(route.visited_targets) // 2 :]
        point = _far_point(plan, rng)
        if not late or point is None:
            continue
        target = late[int(rng.integers(0, len(late)))]
        t = plan.later(float(rng.uniform(0.2, 0.4))) * route.distance / plan.speed
        return [
            {
                "t": round(max(t, 1.0), 1),
                "op": "move_target",
                "id": target,
                "x": point[0],
                "y": point[1],
            }
        ]
    return []


def _first_leak(plan: _Plan, drone: str, rng: np.random.Generator) -> tuple[float, float] | None:
    """When (a third of the way round) and to what ``drone``'s fuel is cut by 30-50 %, or
    None when that would not leave it the way home."""
    route = plan.solution.routes[drone]
    t = plan.later(float(rng.uniform(0.3, 0.4))) * route.distance / plan.speed
    budget = plan.scenario.drone_configs[drone].fuel_budget
    left = budget - t * plan.speed
    # A leak that leaves too little to reach an airport tests nothing (every policy, the
    # oracle too, runs out): keep enough for the way home with room for a detour.
    floor = 1.5 * plan.home_distance(drone, t) + 0.05 * plan.size
    if floor >= left:
        return None
    return t, max(floor, left * float(rng.uniform(0.5, 0.7)))


def _set_fuel(drone: str, t: float, fuel: float) -> dict[str, Any]:
    return {"t": round(t, 1), "op": "set_fuel", "drone": drone, "fuel": round(fuel, 2)}


def _fuel_leak(plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    flying = plan.flying()
    if not flying:
        return []
    leak = _first_leak(plan, flying[0], rng)
    return [_set_fuel(flying[0], *leak)] if leak else []


def _leak_twice(plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    flying = plan.flying()
    if not flying:
        return []
    drone = flying[0]
    first = _first_leak(plan, drone, rng)
    if first is None:
        return []
    t1, fuel1 = first
    distance = plan.solution.routes[drone].distance
    # Two thirds of the way round, or as late before that as the first plan, with the first
    # leak, still leaves the drone (either way round) the straight line to an airport and a
    # few km: a drone leaking a third of what it had rarely gets that far on its first plan.
    # At least a minute after the first leak, so that a replan has planned it to its reserve.
    drawn = float(rng.uniform(0.6, 0.7))
    for frac in np.arange(drawn, 0.0, -0.01):
        t2 = plan.later(float(frac)) * distance / plan.speed
        if t2 < t1 + 60.0:
            break
        left = fuel1 - (t2 - t1) * plan.speed
        floor = plan.home_distance(drone, t2) + 0.03 * plan.size
        if floor <= 0.9 * left:  # room to cut 10-25 % of what is left
            fuel2 = max(floor, left * float(rng.uniform(0.75, 0.9)))
            return [_set_fuel(drone, t1, fuel1), _set_fuel(drone, t2, fuel2)]
    return []


def _corridor_closes(plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    env = plan.scenario.environment
    if not env.sams:
        return []
    known = [(s.pos[0], s.pos[1], s.range) for s in env.sams]
    centres = np.asarray([k[:2] for k in known])
    radii = np.asarray([k[2] for k in known])
    sensor = plan.scenario.sim.sensor_range
    room = 0.03 * plan.size
    where = {t.id: (t.x, t.y) for t in env.targets}
    for drone in plan.flying():
        route = plan.solution.routes[drone]
        path = route.path or []
        pts = np.asarray(path, dtype=float)
        along = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(pts, axis=0).T))])
        lx, ly = where[route.visited_targets[-1]]
        start = float(along[int(np.argmin(np.hypot(pts[:, 0] - lx, pts[:, 1] - ly)))])
        r = float(rng.uniform(radii.min(), radii.max()))
        reach = r + sensor  # a drone this close to the centre sees the SAM
        s = np.arange(start + reach + 0.5, along[-1] - r - room, 0.5)
        if not s.size:
            continue  # a last leg too short to hide a SAM on
        xy = np.asarray([_along(path, v / along[-1]) for v in s])
        # How tight the leg runs there: the gap to the nearest known SAM's edge (small where
        # it hugs one, or threads between two).
        gaps = (np.hypot(*(xy[:, None, :] - centres[None]).transpose(2, 0, 1)) - radii).min(1)
        t = start / plan.speed + 1.0  # just past its last target
        for i in np.argsort(gaps)[:12]:
            x, y = (float(v) for v in xy[i])
            if math.hypot(x - lx, y - ly) <= reach or not plan.clear(x, y, r, t):
                continue
            # Where the drone first sees it, and the fuel the first plan leaves it there.
            ahead = np.arange(start, s[i], 0.25)
            seen = [_along(path, v / along[-1]) for v in ahead]
            j = next(
                (k for k, p in enumerate(seen) if math.hypot(p[0] - x, p[1] - y) <= reach),
                len(seen) - 1,
            )
            fuel = plan.scenario.drone_configs[drone].fuel_budget - float(ahead[j])
            field = SamField([*known, (x, y, r)])
            ways = (field.shortest_path(seen[j], (a.x, a.y)) for a in env.airports)
            if any(w is not None and w.length + room <= fuel for w in ways):
                sam = {"id": "POP1", "pos": [x, y], "range": r, "hidden": True}
                return [{"t": round(t, 1), "op": "add_sam", **sam}]
    return []


def _sam_moves(plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    sams = plan.scenario.environment.sams
    if not sams:
        return []
    for drone in plan.flying()[:3] * 4:  # a few draws per drone: either way round must be clear
        route = plan.solution.routes[drone]
        t = plan.later(float(rng.uniform(0.2, 0.35))) * route.distance / plan.speed
        x, y = _along(route.path or [], plan.later(float(rng.uniform(0.6, 0.8))))
        sam = sams[int(rng.integers(0, len(sams)))]
        r = min(sam.range, 0.04 * plan.size)
        if plan.clear(x, y, r, t):
            return [{"t": round(t, 1), "op": "move_sam", "id": sam.id, "pos": [x, y], "range": r}]
    return []


_PLACE = {
    "popup_sam": _popup_sam,
    "lost_drone": _lost_drone,
    "new_target": _new_target,
    "moved_target": _moved_target,
    "fuel_leak": _fuel_leak,
    "sam_moves": _sam_moves,
    "leak_twice": _leak_twice,
    "corridor_closes": _corridor_closes,
}


# The classes that put a SAM in the way: those placed as an edit of the "sam" trigger.
_SAM_CLASSES = tuple(
    c for m in EDIT_MODELS if m.change.trigger == "sam" for c in m.change.disruptions
)
_OTHER_CLASSES = tuple(k for k in _SINGLE if k not in _SAM_CLASSES)


def _place(kind: str, plan: _Plan, rng: np.random.Generator) -> list[dict[str, Any]]:
    if kind != "combo":
        return _PLACE[kind](plan, rng)
    # A SAM is placed clear of the drones as the first plan flies; once an earlier disruption
    # has changed the plan, nothing says where they are. So a combo holds at most one SAM
    # class, and its SAM comes first in time.
    first, second = rng.choice(len(_SINGLE), 2, replace=False)
    kinds = [_SINGLE[int(first)], _SINGLE[int(second)]]
    if all(k in _SAM_CLASSES for k in kinds):
        kinds[1] = _OTHER_CLASSES[int(rng.integers(0, len(_OTHER_CLASSES)))]
    kinds.sort(key=lambda k: k not in _SAM_CLASSES)
    sam_edits = _PLACE[kinds[0]](plan, rng)
    other = _PLACE[kinds[1]](plan, rng)
    if not sam_edits or not other:
        return []
    if kinds[0] in _SAM_CLASSES:
        after = max(e["t"] for e in sam_edits) + 1.0
        other = [{**e, "t": max(e["t"], after)} for e in other]
    return sam_edits + other


def generate_mission(spec: SuiteSpec, index: int) -> Generated:
    """Mission ``index`` of the suite ``spec`` (the same spec and index: the same mission)."""
    rng = _rng(spec, index)
    data = _environment(spec, rng)
    scenario = parse_scenario(data, f"{spec.name}[{index}]")
    mission = compile_mission(scenario)
    solution = plan_mission(
        mission, seconds=None, iterations=spec.iterations, seed=spec.plan_seed
    ).solution
    plan = _Plan(scenario, solution, spec.speed, spec.size, spec.late)
    if spec.per_mission != (1, 1):
        return _several(spec, index, data, plan, rng, float(solution.total_points))
    wanted = spec.disruptions[index % len(spec.disruptions)]
    order = [wanted] + [k for k in spec.disruptions if k != wanted]
    for kind in order:
        edits = _place(kind, plan, rng)
        if edits:
            data["timeline"] = sorted(edits, key=lambda e: e["t"])
            parse_scenario(data, f"{spec.name}[{index}]")  # still a valid scenario
            placed = [f"{e['op']}:{e.get('id') or e.get('drone')}" for e in edits]
            return Generated(index, data, kind, placed, float(solution.total_points))
    return Generated(index, data, None, [], float(solution.total_points))


def _several(
    spec: SuiteSpec,
    index: int,
    data: dict[str, Any],
    plan: _Plan,
    rng: np.random.Generator,
    planned: float,
) -> Generated:
    """Mission ``index`` with ``spec.per_mission`` disruptions of distinct classes, each
    placed against the first plan; at most one SAM class, and its SAM first (as a combo)."""
    singles: list[str] = [k for k in spec.disruptions if k != "combo"] or [*_SINGLE]
    want = int(rng.integers(spec.per_mission[0], spec.per_mission[1] + 1))
    order = [singles[int(i)] for i in rng.permutation(len(singles))]
    edits: list[dict[str, Any]] = []
    kinds: list[str] = []
    for kind in order:
        if len(kinds) == want:
            break
        if kind in _SAM_CLASSES and any(k in _SAM_CLASSES for k in kinds):
            continue
        placed = _PLACE[kind](plan, rng)
        if placed:
            kinds.append(kind)
            edits += placed
    if not edits:
        return Generated(index, data, None, [], planned)
    sam_t = [e["t"] for e in edits if e["op"] in ("add_sam", "move_sam")]
    if sam_t:  # the SAM first: what follows was placed on drones the SAM has not moved
        after = max(sam_t) + 1.0
        edits = [
            e if e["op"] in ("add_sam", "move_sam") else {**e, "t": max(e["t"], after)}
            for e in edits
        ]
    data["timeline"] = sorted(edits, key=lambda e: e["t"])
    parse_scenario(data, f"{spec.name}[{index}]")  # still a valid scenario
    placed_ids = [f"{e['op']}:{e.get('id') or e.get('drone')}" for e in data["timeline"]]
    label = f"{len(kinds)} disruptions" if len(kinds) > 1 else kinds[0]
    return Generated(index, data, label, placed_ids, planned)
