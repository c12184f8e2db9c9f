"""Shared builders and independent checks for planner tests: random missions (hypothesis),
a plan feasibility checker written apart from the planner, and a brute-force optimum."""

from __future__ import annotations

import copy
import itertools
import math
from types import SimpleNamespace

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from planner.mission import Mission, compile_mission
from planner.model import Scenario
from planner.scenario.generator import SuiteSpec
from tests.conftest import SCENARIOS

DEMO = SCENARIOS / "demo.json"
TYPES = ("A", "B", "C")
# Small missions with a timeline (2-3 late disruptions, tight fuel), for the clairvoyant
# reference and the bound: generate_mission(TIMELINE_SUITE, i)
TIMELINE_SUITE = SuiteSpec(
    seed=5,
    drones=(2, 3),
    targets=(10, 14),
    sams=(1, 2),
    iterations=200,
    per_mission=(2, 3),
    late=0.3,
    fuel=(1.2, 1.6),
)
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------- helpers


def scenario(airports, targets, drones, sams=()) -> Scenario:
    """Compact builder: airports {id: (x, y)}, targets {id: (x, y, priority, type)}."""
    return Scenario.model_validate(
        {
            "environment": {
                "airports": [{"id": a, "x": x, "y": y} for a, (x, y) in airports.items()],
                "targets": [
                    {"id": t, "x": x, "y": y, "priority": p, "type": ty}
                    for t, (x, y, p, ty) in targets.items()
                ],
                "sams": [
                    {"id": f"S{i}", "pos": [x, y], "range": r} for i, (x, y, r) in enumerate(sams)
                ],
            },
            "drone_configs": drones,
        }
    )


@st.composite
def random_missions(draw, max_targets: int = 10, max_drones: int = 4) -> Mission:
    """Random scenarios: 1-3 airports, SAMs, all end modes, sensors, frozen prefixes, and
    sometimes a few legs knocked out (``inf``) to exercise unreachable pairs."""
    coord = st.floats(0, 100, allow_nan=False).map(lambda v: round(v, 2))
    n_air = draw(st.integers(1, 3))
    airports = {f"A{i + 1}": (draw(coord), draw(coord)) for i in range(n_air)}
    sams = []
    for _ in range(draw(st.integers(0, 2))):
        x, y, r = draw(coord), draw(coord), draw(st.floats(3, 12))
        if all(math.hypot(x - ax, y - ay) > r + 1 for ax, ay in airports.values()):
            sams.append((x, y, r))
    n_t = draw(st.integers(0, max_targets))
    targets = {
        f"T{i + 1}": (
            draw(coord),
            draw(coord),
            draw(st.integers(0, 10)),
            draw(st.sampled_from(TYPES)),
        )
        for i in range(n_t)
    }
    drones = {}
    free = list(targets)
    for k in range(draw(st.integers(1, max_drones))):
        start = draw(st.sampled_from(sorted(airports)))
        mode = draw(st.sampled_from(["return", "end", "best_end"]))
        cfg = {
            "fuelBudget": draw(st.floats(20, 400)),
            "start_airport": start,
            "home_airport": start,
        }
        if mode == "end":
            cfg["end_airport"] = draw(st.sampled_from(sorted(airports)))
            cfg["end_mode"] = "end"
        elif mode == "best_end":
            cfg["end_mode"] = "best_end"
            cfg["allowed_ends"] = draw(
                st.lists(st.sampled_from(sorted(airports)), min_size=1, unique=True)
            )
        sensors = draw(
            st.one_of(st.just("ALL"), st.lists(st.sampled_from(TYPES), min_size=1, unique=True))
        )
        cfg["accessibleTargets"] = sensors
        n_prefix = draw(st.integers(0, 2)) if free and draw(st.booleans()) else 0
        chain = [start]
        for _ in range(min(n_prefix, len(free))):
            chain.append(free.pop(draw(st.integers(0, len(free) - 1))))
        cfg["frozen_segments"] = [{"from": a, "to": b} for a, b in zip(chain, chain[1:])]
        drones[str(k + 1)] = cfg
    mission = compile_mission(scenario(airports, targets, drones, sams))
    if draw(st.booleans()) and len(mission.node_ids) > 2:
        dist = mission.dist.copy()
        n = len(dist)
        for _ in range(draw(st.integers(1, 4))):
            a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
            if a != b:
                dist[a, b] = dist[b, a] = np.inf
        mission = copy.copy(mission)
        mission.paths = SimpleNamespace(dist=dist)
    return mission


def tour_length(mission: Mission, route: list[int]) -> float:
    return float(sum(mission.dist[a, b] for a, b in zip(route, route[1:])))


def allocation_problems(mission: Mission, alloc: dict[str, list[int]], cap: int) -> list[str]:
    out = []
    if set(alloc) != {d.id for d in mission.drones}:
        out.append(f"keys {sorted(alloc)}")
    frozen = {t for d in mission.drones for t in d.prefix}
    seen: set[int] = set()
    for spec in mission.drones:
        targets = alloc.get(spec.id, [])
        if len(targets) > cap:
            out.append(f"{spec.id}: {len(targets)} > {cap} targets")
        for t in targets:
            if t not in spec.eligible:
                out.append(f"{spec.id}: {t} not eligible")
            if t not in mission.target_nodes:
                out.append(f"{spec.id}: {t} is not a target node")
            if t in frozen:
                out.append(f"{spec.id}: {t} is a frozen target")
            if t in seen:
                out.append(f"{t} assigned twice")
            seen.add(t)
        if targets:  # the allocation, in the order given, is a flyable tour
            head = [spec.start, *spec.prefix, *targets]
            best = min(tour_length(mission, head + [e]) for e in spec.ends)
            if not best <= spec.budget + 1e-9:
                out.append(f"{spec.id}: allocation tour {best} > budget {spec.budget}")
    return out


def plan_problems(mission: Mission, routes: dict[str, list[int]]) -> list[str]:
    """Independent feasibility check of a plan (node routes)."""
    out = []
    owner: dict[int, str] = {}
    frozen = {t: d.id for d in mission.drones for t in d.prefix}
    for spec in mission.drones:
        route = routes.get(spec.id)
        if route is None:
            out.append(f"{spec.id}: no route")
            continue
        k = len(spec.prefix)
        if route[0] != spec.start:
            out.append(f"{spec.id}: starts at {route[0]}")
        if tuple(route[1 : 1 + k]) != tuple(spec.prefix) or len(route) < k + 2:
            out.append(f"{spec.id}: prefix {route[1 : 1 + k]} != {spec.prefix}")
        if route[-1] not in spec.ends:
            out.append(f"{spec.id}: ends at {route[-1]} not in {spec.ends}")
        for t in route[1 + k : -1]:
            if t not in spec.eligible or t not in mission.target_nodes:
                out.append(f"{spec.id}: visits ineligible {t}")
            if frozen.get(t, spec.id) != spec.id:
                out.append(f"{spec.id}: visits {t} frozen on {frozen[t]}")
        for t in route[1:-1]:
            if t in owner:
                out.append(f"{t} visited by {owner[t]} and {spec.id}")
            owner[t] = spec.id
        length = tour_length(mission, route)
        if not length <= spec.budget + 1e-9:
            out.append(f"{spec.id}: length {length} > budget {spec.budget}")
    return out


def prefix_fits(mission: Mission, spec) -> bool:
    head = [spec.start, *spec.prefix]
    return min(tour_length(mission, head + [e]) for e in spec.ends) <= spec.budget + 1e-9


def brute_force(mission: Mission, spec, cands: list[int]) -> tuple[float, float]:
    """(best score, shortest length at that score) over every ordered subset."""
    best = (-1.0, math.inf)
    head = [spec.start, *spec.prefix]
    base_score = float(sum(mission.scores[t] for t in spec.prefix))
    for r in range(len(cands) + 1):
        for perm in itertools.permutations(cands, r):
            score = base_score + float(sum(mission.scores[t] for t in perm))
            for e in spec.ends:
                length = tour_length(mission, head + list(perm) + [e])
                if length <= spec.budget + 1e-9 and (
                    score > best[0] + 1e-9 or (abs(score - best[0]) <= 1e-9 and length < best[1])
                ):
                    best = (score, length)
    return best
