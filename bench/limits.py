"""The largest mission ``planner/limits.py`` accepts, validated and planned: time and memory.

    python bench/limits.py [--quick] [--seconds S] [--out bench/results/limits.txt]

Each row is a generated mission (airports, targets, SAMs and drones spread uniformly over a
square, targets and airports outside every SAM, every drone with all the fuel the limits
allow), measured in a fresh subprocess so that its peak memory (``ru_maxrss``) is its own:

* **validate**: the file's text through ``planner.scenario.io.parse_scenario`` (JSON, sizes,
  types, bounds, relations: what ``isr validate`` does);
* **compile**: ``compile_mission`` (the SAM-aware distance matrix between every pair of
  nodes: what every plan needs first);
* **plan**: ``plan_mission`` with the team search and ``--seconds`` of search (``isr plan``'s
  default is 1 s), post-optimisation and the validator included.

The largest row is the swarm the limits' budgets are sized for: ``SWARM_TARGETS`` targets,
``SWARM_SAMS`` SAMs, ``SWARM_DRONES`` drones and 50 airports over the whole box
(``MAX_COORD_KM``), ``MAX_TIMELINE`` timeline edits and ``MAX_FUEL_KM`` of fuel each (the
per-list caps alone, ``MAX_TARGETS`` and the like, are not a mission the budgets accept). A row that does not finish within ``BOUND_S``
(120 s) is stopped and reported as such, with the stage it reached.

``measure(quick)`` returns the rows (``bench/probe.py`` calls it through
``bench/probe_api.probe_limits``); ``--quick`` skips the middle row and searches 0.2 s.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.table import Table

from planner.limits import (
    MAX_COORD_KM,
    MAX_FUEL_KM,
    MAX_SAM_RANGE_KM,
    MAX_TIMELINE,
    SWARM_DRONES,
    SWARM_SAMS,
    SWARM_TARGETS,
)

BOUND_S = 120.0  # a mission the limits accept must plan within this (and a few GiB)
STAGES = ("validate", "compile", "plan")


def mission(
    targets: int, sams: int, drones: int, airports: int, half_width: float, timeline: int = 0
) -> dict[str, Any]:
    """A generated scenario: everything uniform over [-half_width, half_width]^2, SAM radii
    up to a twentieth of the width (at most ``MAX_SAM_RANGE_KM``), nothing inside a SAM,
    each drone at its own airport (round robin) with ``MAX_FUEL_KM`` of fuel."""
    rng = random.Random(13)
    top = min(MAX_SAM_RANGE_KM, half_width / 10)
    sam_list = [
        {
            "id": f"S{i}",
            "pos": [rng.uniform(-half_width, half_width), rng.uniform(-half_width, half_width)],
            "range": rng.uniform(top / 10, top),
        }
        for i in range(sams)
    ]

    def free_point() -> tuple[float, float]:
        while True:
            x, y = rng.uniform(-half_width, half_width), rng.uniform(-half_width, half_width)
            if all(
                math.hypot(x - s["pos"][0], y - s["pos"][1]) > s["range"] * 1.05 for s in sam_list
            ):
                return x, y

    airport_list = []
    for i in range(airports):
        x, y = free_point()
        airport_list.append({"id": f"A{i}", "x": x, "y": y})
    target_list = []
    for i in range(targets):
        x, y = free_point()
        target_list.append(
            {"id": f"T{i}", "x": x, "y": y, "priority": rng.randint(1, 10), "type": "ABC"[i % 3]}
        )
    drone_configs = {
        str(d + 1): {
            "enabled": True,
            "fuelBudget": MAX_FUEL_KM,
            "home_airport": f"A{d % airports}",
            "start_airport": f"A{d % airports}",
            "end_airport": f"A{d % airports}",
            "accessibleTargets": "ALL",
        }
        for d in range(drones)
    }
    edits = [
        {"t": 60.0 * (i + 1), "op": "set_priority", "id": f"T{i % targets}", "priority": 5}
        for i in range(timeline)
    ]
    return {
        "environment": {"airports": airport_list, "targets": target_list, "sams": sam_list},
        "drone_configs": drone_configs,
        **({"timeline": edits} if edits else {}),
    }


# (label, targets, SAMs, drones, airports, half width of the box in km, timeline edits)
ROWS: list[tuple[str, int, int, int, int, float, int]] = [
    ("demo-sized", 12, 2, 3, 3, 100.0, 0),
    ("medium", 100, 10, 10, 10, 1_000.0, 100),
    (
        "largest the limits accept",
        SWARM_TARGETS,
        SWARM_SAMS,
        SWARM_DRONES,
        50,
        MAX_COORD_KM,
        MAX_TIMELINE,
    ),
    # the same counts crowded into 1,000 km: every drone can reach every target
    ("largest, crowded", SWARM_TARGETS, SWARM_SAMS, SWARM_DRONES, 50, 500.0, MAX_TIMELINE),
]


def _child(spec: dict[str, Any]) -> None:
    """In the subprocess: the stages one by one, each line of JSON printed as it ends (so a
    row stopped at the bound still says how far it got)."""
    from planner.mission import compile_mission
    from planner.planning import plan_mission
    from planner.scenario import parse_scenario

    text = json.dumps(
        mission(
            spec["targets"],
            spec["sams"],
            spec["drones"],
            spec["airports"],
            spec["half_width"],
            spec["timeline"],
        )
    )

    def report(stage: str, seconds: float, **extra: Any) -> None:
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"stage": stage, "s": seconds, "peak_mib": peak_kib / 1024, **extra}))
        sys.stdout.flush()

    report("start", 0.0, bytes=len(text))
    t = time.perf_counter()
    scenario = parse_scenario(text)
    report("validate", time.perf_counter() - t)
    t = time.perf_counter()
    compiled = compile_mission(scenario)
    report("compile", time.perf_counter() - t)
    t = time.perf_counter()
    result = plan_mission(compiled, "team", seconds=spec["seconds"], seed=0)
    solution = result.solution
    report(
        "plan",
        time.perf_counter() - t,
        points=solution.total_points,
        visited=sum(len(r.visited_targets) for r in solution.routes.values()),
    )


def measure_row(
    label: str,
    targets: int,
    sams: int,
    drones: int,
    airports: int,
    half_width: float,
    timeline: int,
    seconds: float,
) -> dict[str, Any]:
    """One row, in a subprocess stopped at ``BOUND_S``."""
    spec = {
        "targets": targets,
        "sams": sams,
        "drones": drones,
        "airports": airports,
        "half_width": half_width,
        "timeline": timeline,
        "seconds": seconds,
    }
    row: dict[str, Any] = {"mission": label, **spec, "stages": {}, "finished": False}
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=BOUND_S,
            cwd=ROOT,
        )
        out, err, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err, code = f"stopped at the bound ({BOUND_S:g} s)", None
    row["wall_s"] = time.perf_counter() - started
    for line in out.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            row["stages"][record.pop("stage")] = record
    row["finished"] = code == 0 and "plan" in row["stages"]
    if not row["finished"]:
        row["error"] = (err or "").strip().splitlines()[-1:] or [f"exit {code}"]
    return row


def measure(quick: bool = False, seconds: float | None = None) -> list[dict[str, Any]]:
    """Every row of ``ROWS`` (without the middle one when ``quick``)."""
    search = seconds if seconds is not None else (0.2 if quick else 1.0)
    rows = [r for r in ROWS if not (quick and r[0] == "medium")]
    return [measure_row(*r, seconds=search) for r in rows]


def table(rows: list[dict[str, Any]]) -> Table:
    out = Table(title=f"Missions at the limits: validate, compile, plan (bound {BOUND_S:g} s)")
    for column in (
        "mission",
        "targets / SAMs / drones / airports",
        "box (km)",
        "file",
        "validate",
        "compile (legs)",
        "plan (search)",
        "peak memory",
        "visited",
        "points",
    ):
        out.add_column(column, justify="left" if column == "mission" else "right")
    for r in rows:
        st = r["stages"]

        def took(stage: str, st: dict[str, Any] = st) -> str:
            return f"{st[stage]['s']:.2f} s" if stage in st else "—"

        last = next((st[s] for s in reversed(("start", *STAGES)) if s in st), None)
        plan = st.get("plan", {})
        out.add_row(
            r["mission"] + ("" if r["finished"] else f" (NOT DONE: {r['error'][0]})"),
            f"{r['targets']} / {r['sams']} / {r['drones']} / {r['airports']}",
            f"{2 * r['half_width']:,.0f}²",
            f"{st['start']['bytes'] / 1024:,.0f} KiB" if "start" in st else "—",
            took("validate"),
            took("compile"),
            took("plan") + f" ({r['seconds']:g} s)",
            f"{last['peak_mib']:,.0f} MiB" if last else "—",
            str(plan.get("visited", "—")),
            f"{plan['points']:g}" if "points" in plan else "—",
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seconds", type=float, default=None, help="team search time (s)")
    parser.add_argument("--out", type=Path, help="also write the table here (text)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(json.loads(args.child))
        return 0
    rows = measure(args.quick, args.seconds)
    console = Console(width=160, record=True)
    console.print(table(rows))
    largest = [r for r in rows if r["mission"].startswith("largest")]
    for r in largest:
        if r["finished"]:
            console.print(
                f"{r['mission']}: validated, compiled and planned in"
                f" {sum(s['s'] for s in r['stages'].values()):.1f} s, peak"
                f" {r['stages']['plan']['peak_mib']:,.0f} MiB: within the bound of {BOUND_S:g} s."
            )
        else:
            console.print(f"{r['mission']}: did NOT plan within {BOUND_S:g} s: {r['error']}")
    if args.out:
        args.out.write_text(console.export_text())
    return 0 if all(r["finished"] for r in largest) else 1


if __name__ == "__main__":
    sys.exit(main())
