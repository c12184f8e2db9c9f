"""Random but valid scenarios for property tests (seeded, no IO)."""

from __future__ import annotations

import math

import numpy as np

from planner.model import Scenario
from planner.scenario import parse_scenario

TYPES = ("A", "B", "C")


def random_scenario(
    rng: np.random.Generator,
    n_targets: int = 10,
    n_sams: int = 2,
    n_drones: int = 2,
    size: float = 100.0,
    fuel: tuple[float, float] = (150.0, 300.0),
    excluded: int = 1,
) -> Scenario:
    """A scenario whose airports lie outside every SAM, with ``excluded`` targets placed
    inside SAMs; every drone can sense at least one type that a free target has."""
    airports = [
        {"id": "A1", "x": 0.05 * size, "y": 0.05 * size},
        {"id": "A2", "x": 0.95 * size, "y": 0.1 * size},
        {"id": "A3", "x": 0.5 * size, "y": 0.95 * size},
    ]
    sams = []
    while len(sams) < n_sams:
        x, y = rng.uniform(0.2 * size, 0.8 * size, 2)
        r = float(rng.uniform(0.05 * size, 0.15 * size))
        if all(math.hypot(x - a["x"], y - a["y"]) > r + 2 for a in airports):
            sams.append({"id": f"S{len(sams) + 1}", "pos": [float(x), float(y)], "range": r})
    targets = []
    for sam in sams[:excluded]:
        targets.append(
            {
                "id": f"T{len(targets) + 1}",
                "x": sam["pos"][0],
                "y": sam["pos"][1],
                "priority": 5,
                "type": "A",
            }
        )
    while len(targets) < n_targets + min(excluded, len(sams)):
        x, y = rng.uniform(0, size, 2)
        if all(math.hypot(x - s["pos"][0], y - s["pos"][1]) > s["range"] * 1.05 for s in sams):
            targets.append(
                {
                    "id": f"T{len(targets) + 1}",
                    "x": float(x),
                    "y": float(y),
                    "priority": int(rng.integers(1, 11)),
                    "type": TYPES[len(targets) % 3],
                }
            )
    drones = {}
    for k in range(n_drones):
        home = airports[k % len(airports)]["id"]
        sensors = ["A", "B"] if k % 3 == 0 else (["B", "C"] if k % 3 == 1 else "ALL")
        drones[str(k + 1)] = {
            "fuelBudget": float(rng.uniform(*fuel)),
            "home_airport": home,
            "accessibleTargets": sensors,
        }
    return parse_scenario(
        {
            "environment": {"airports": airports, "targets": targets, "sams": sams},
            "drone_configs": drones,
        }
    )


def greedy_routes(mission) -> dict[str, list[int]]:
    """A simple valid plan built independently of the planner: cheapest insertion."""
    dist = mission.dist
    taken: set[int] = set()
    routes = {}
    for spec in mission.drones:
        end = min(spec.ends, key=lambda e: dist[spec.start, e])
        route = [spec.start, *spec.prefix, end]
        taken.update(spec.prefix)
        length = mission.route_length(route)
        improved = True
        while improved:
            improved = False
            best = None
            for t in spec.eligible:
                if t in taken:
                    continue
                for i in range(1 + len(spec.prefix), len(route)):
                    extra = dist[route[i - 1], t] + dist[t, route[i]] - dist[route[i - 1], route[i]]
                    if length + extra <= spec.budget and (best is None or extra < best[0]):
                        best = (extra, t, i)
            if best is not None:
                extra, t, i = best
                route.insert(i, t)
                taken.add(t)
                length += extra
                improved = True
        routes[spec.id] = route
    return routes
