"""Geography and the SAM promise: how far inside a SAM's true (geodesic) disk planned routes
go on wide missions, and how far the km frame's distances are off over the extent the
planner accepts.

    python bench/geo_safety.py [--missions N] [--pairs N] [--out bench/results/geo_safety.txt]

1. **Incursion.** ``--missions`` random geographic missions (origin anywhere between 60 S
   and 60 N), each with SAMs 500 to 3,300 km from the origin and, for each SAM, a drone whose
   targets lie either side of it on the radial line (so its route must go round the SAM
   across the radial direction, where the frame stretches). Each is planned twice: as the planner does
   (SAM covers, ``planner.geodesy``) and trusting the frame (the same mission without its
   origin: flat km). Every route, the frame legs the simulation flies and the geodesic legs
   between the exported waypoints, is sampled every 20 m and measured against each SAM's
   true disk with pyproj.Geod (sampling apart from the validator's own search). Target:
   0 m inside.
2. **Distance error.** ``--pairs`` random point pairs within ``MAX_GEO_EXTENT_KM`` of an
   origin: the frame's straight-line distance against pyproj.Geod's, by how far from the
   origin the pair lies and how far apart its points are; the bound the planner uses
   (``frame_distortion``) beside it.

The machine's 1-minute load is printed beside the figures (timings: the validator's
geodesic check per plan).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np
from pyproj import Geod
from rich.console import Console
from rich.table import Table

from planner.geo import GeoOrigin, local_frame
from planner.geodesy import MAX_GEO_EXTENT_KM, densify, frame_distortion
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario_io import parse_scenario
from planner.validation import validate_solution

GEOD = Geod(ellps="WGS84")
STEP_M = 20.0
RADII_KM = (500.0, 1500.0, 2500.0, 3000.0, 3300.0)  # SAM centres from the origin


def mission(rng: np.random.Generator) -> dict[str, Any]:
    """One wide mission: a SAM at each of ``RADII_KM`` (random bearing, 10-150 km range),
    each with an airport and two targets on the radial line through it, inside and outside:
    a route between them goes round the SAM across the radial direction, where the frame
    stretches (and trusting it, grazes the true disk)."""
    lat0, lon0 = float(rng.uniform(-60, 60)), float(rng.uniform(-180, 180))
    airports, targets, sams, drones = [], [], [], {}
    for k, rho in enumerate(RADII_KM, start=1):
        bearing = rng.uniform(0, 2 * math.pi)
        radial = np.array([math.cos(bearing), math.sin(bearing)])
        across = np.array([-radial[1], radial[0]])  # the direction the frame stretches
        r = float(rng.uniform(10, min(150.0, (MAX_GEO_EXTENT_KM - 30 - rho) / 2.5)))
        centre = rho * radial
        side = 2.5 * r + 20
        a = centre - side * radial - 0.3 * r * across
        t1, t2 = centre + side * radial, centre + 0.2 * r * across - 1.8 * side * radial
        airports.append({"id": f"A{k}", "x": float(a[0]), "y": float(a[1])})
        for j, t in enumerate((t1, t2), start=1):
            targets.append(
                {"id": f"T{k}.{j}", "x": float(t[0]), "y": float(t[1]), "priority": 5, "type": "A"}
            )
        sams.append({"id": f"S{k}", "pos": [float(centre[0]), float(centre[1])], "range": r})
        drones[str(k)] = {"fuelBudget": 12 * side + 10 * r, "home_airport": f"A{k}"}
    return {
        "geo": {"lat0": lat0, "lon0": lon0},
        "environment": {"airports": airports, "targets": targets, "sams": sams},
        "drone_configs": drones,
    }


def true_clearance_m(frame: Any, path: np.ndarray, sams: Any) -> float:
    """Smallest (geodesic distance to the SAM centre - range), metres, over frame legs and
    the geodesic legs between the densified waypoints, sampled every ``STEP_M``."""
    worst = math.inf
    legs = [(path, "frame"), (densify(path), "geodesic")]
    for sam in sams:
        clat, clon = frame.to_geo(sam.x, sam.y)
        for pts, kind in legs:
            for a, b in zip(pts, pts[1:]):
                if _gap(a, b, (sam.x, sam.y)) > 2 * sam.range + 10:
                    continue
                n = max(2, math.ceil(math.dist(a, b) * 1000 / STEP_M) + 1)
                if kind == "frame":
                    t = np.linspace(0, 1, n)[:, None]
                    lat, lon = frame.to_geo_many(*(a + t * (b - a)).T)
                else:
                    (alat, alon), (blat, blon) = frame.to_geo(*a), frame.to_geo(*b)
                    mid = GEOD.npts(alon, alat, blon, blat, n - 2) if n > 2 else []
                    lon = np.array([alon, *(p[0] for p in mid), blon])
                    lat = np.array([alat, *(p[1] for p in mid), blat])
                _, _, d = GEOD.inv(np.full(len(lat), clon), np.full(len(lat), clat), lon, lat)
                worst = min(worst, float(np.min(d)) - sam.range * 1000)
    return worst


def _gap(a: np.ndarray, b: np.ndarray, c: tuple[float, float]) -> float:
    ab, ac = b - a, np.asarray(c) - a
    t = 0.0 if not ab.any() else float(np.clip(np.dot(ac, ab) / np.dot(ab, ab), 0, 1))
    return float(np.linalg.norm(a + t * ab - np.asarray(c)))


def incursions(missions: int, console: Console) -> list[str]:
    rng = np.random.default_rng(2026)
    worst_safe, worst_naive, rejected, routes, check_ms = math.inf, math.inf, 0, 0, []
    per_band: dict[float, list[float]] = {rho: [] for rho in RADII_KM}
    for _ in range(missions):
        data = mission(rng)
        geo = parse_scenario(json.dumps(data))
        flat_data = copy.deepcopy(data)
        del flat_data["geo"]
        flat = parse_scenario(json.dumps(flat_data))
        frame = local_frame(geo.geo)
        compiled = compile_mission(geo)
        safe = plan_mission(compiled, "team", iterations=200, seed=0).solution
        naive = plan_mission(compile_mission(flat), "team", iterations=200, seed=0).solution
        start = time.perf_counter()
        assert validate_solution(compiled, safe) == []
        check_ms.append((time.perf_counter() - start) * 1000)
        rejected += any(v.rule == "sam" for v in validate_solution(compiled, naive))
        for drone, route in safe.routes.items():
            rho = RADII_KM[int(drone) - 1]
            sam = [geo.environment.sams[int(drone) - 1]]
            c = true_clearance_m(frame, np.asarray(route.path), sam)
            per_band[rho].append(c)
            worst_safe = min(worst_safe, c)
            routes += 1
            c_naive = true_clearance_m(frame, np.asarray(naive.routes[drone].path), sam)
            worst_naive = min(worst_naive, c_naive)
    table = Table(
        title=f"Worst true clearance from a SAM's geodesic disk ({missions} missions, {routes} routes)"
    )
    for column in ("SAM from origin", "routes", "worst clearance", "median clearance"):
        table.add_column(column, justify="right")
    for rho, values in per_band.items():
        table.add_row(
            f"{rho:,.0f} km",
            str(len(values)),
            f"{min(values):+.1f} m",
            f"{float(np.median(values)):+.1f} m",
        )
    console.print(table)
    return [
        f"planned (SAM covers): worst {worst_safe:+.1f} m from any true disk"
        f" ({'0 m inside' if worst_safe > 0 else f'{-worst_safe:.1f} m INSIDE'}); target 0 m inside",
        f"trusting the frame (flat km): worst {worst_naive:+.1f} m; the validator names a SAM"
        f" incursion in {rejected} of {missions} such plans",
        f"validator with the geodesic check: median {float(np.median(check_ms)):.1f} ms,"
        f" max {max(check_ms):.1f} ms per plan ({len(RADII_KM)} drones, {len(RADII_KM)} SAMs)",
    ]


def distance_error(pairs: int, console: Console) -> list[str]:
    rng = np.random.default_rng(7)
    bands = [(0, 1000), (1000, 2000), (2000, 3000), (3000, MAX_GEO_EXTENT_KM)]
    spans = [(0, 100), (100, 1000), (1000, 2 * MAX_GEO_EXTENT_KM)]
    table = Table(
        title=f"km frame vs pyproj.Geod, {pairs:,} pairs per row, within {MAX_GEO_EXTENT_KM:,.0f} km of the origin"
    )
    for column in (
        "farther point from origin",
        "pair apart",
        "max error",
        "p99 error",
        "bound used",
    ):
        table.add_column(column, justify="right")
    worst = 0.0
    for lo, hi in bands:
        origin = GeoOrigin(lat0=float(rng.uniform(-60, 60)), lon0=float(rng.uniform(-180, 180)))
        frame = local_frame(origin)
        bound = frame_distortion(origin, hi)
        for near, far in spans:
            errors = _pair_errors(rng, frame, lo, hi, near, far, pairs)
            if errors is None:
                continue
            worst = max(worst, float(errors.max()))
            table.add_row(
                f"{lo:,.0f}-{hi:,.0f} km", f"{near:,.0f}-{far:,.0f} km",
                f"{100 * errors.max():.3f} %", f"{100 * np.quantile(errors, 0.99):.3f} %",
                f"{100 * bound:.3f} %",
            )  # fmt: skip
    console.print(table)
    limit = frame_distortion(GeoOrigin(lat0=0.0, lon0=0.0))
    return [
        f"frame distance error over the accepted extent: at most {100 * worst:.2f} %"
        f" (frame longer than true; the bound at {MAX_GEO_EXTENT_KM:,.0f} km: {100 * limit:.2f} %)"
    ]


def _pair_errors(rng, frame, lo, hi, near, far, count) -> np.ndarray | None:
    """(frame distance - geodesic) / geodesic for ``count`` pairs whose farther point lies
    lo-hi km from the origin and whose points are near-far km apart."""
    out: list[np.ndarray] = []
    tries = 0
    while sum(len(o) for o in out) < count and tries < 200:
        tries += 1
        n = 4 * count
        rho = np.sqrt(rng.uniform(lo**2, hi**2, n))
        a = rng.uniform(0, 2 * math.pi, n)
        p = np.stack([rho * np.cos(a), rho * np.sin(a)], axis=1)
        d = rng.uniform(near, far, n)
        b = rng.uniform(0, 2 * math.pi, n)
        q = p + np.stack([d * np.cos(b), d * np.sin(b)], axis=1)
        keep = (np.hypot(*q.T) <= np.hypot(*p.T)) & (np.hypot(*q.T) <= MAX_GEO_EXTENT_KM)
        p, q = p[keep], q[keep]
        if not len(p):
            continue
        plat, plon = frame.to_geo_many(p[:, 0], p[:, 1])
        qlat, qlon = frame.to_geo_many(q[:, 0], q[:, 1])
        _, _, metres = GEOD.inv(plon, plat, qlon, qlat)
        out.append((np.hypot(*(p - q).T) * 1000 - metres) / metres)
    return np.concatenate(out)[:count] if out else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--missions", type=int, default=12)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    console = Console(record=True, width=110)
    load = os.getloadavg()[0]
    console.print(f"bench/geo_safety.py — 1-minute load {load:.2f} on {os.cpu_count()} cores")
    lines = incursions(args.missions, console)
    lines += distance_error(args.pairs, console)
    for line in lines:
        console.print(line)
    console.print(f"1-minute load after: {os.getloadavg()[0]:.2f}")
    if args.out is not None:
        args.out.write_text(console.export_text())


if __name__ == "__main__":
    main()
