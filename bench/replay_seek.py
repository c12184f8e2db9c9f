"""Replay seeks: how fast the replay view gets the whole picture at any tick of a long run,
and how much a mission hour takes in the trace store.

    python bench/replay_seek.py [--seeks 50] [--seed 0] [--db FILE] [--json FILE]

Flies one mission of about an hour of mission time with 10 drones (random, seeded: 60
targets, 6 SAMs, a hidden SAM and a target added on the way) headless into a fresh SQLite
store, then serves it with the real dashboard (uvicorn on 127.0.0.1) and times ``GET
/api/runs/{id}/state?tick=T`` for random ticks over HTTP: median and max (target: under
300 ms), each answer checked against the stored telemetry (every drone where the last row at
or before T puts it). Also: the store's size per mission hour, per table; and for scale, the
same picture rebuilt by re-executing the run's inputs from tick 0 (what a seek would cost
without snapshots).

How a seek works (``executive.traces.timeline``): the last scene snapshot at or before T
(one every 30 s of mission time, and soon after anything happens), the events after it
applied, the drones from the telemetry row at or before T, their trails thinned from the
stored telemetry. No re-execution.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx
import numpy as np
from rich.console import Console
from rich.table import Table
from sqlalchemy import text

from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from executive.traces import TraceReader
from executive.traces.engine import open_store
from executive.traces.replay import resimulate
from mission.config import RunConfig
from mission.session import run_mission
from planner.scenario import parse_scenario

SIZE = 150.0
TOKEN = "bench"


def hour_mission(seed: int) -> dict[str, Any]:
    """10 drones, 60 targets, 6 SAMs on 150 x 150 km at 0.1 km/s: about an hour aloft."""
    rng = np.random.default_rng(seed)
    airports = [(10.0, 10.0), (140.0, 12.0), (75.0, 140.0)]
    sams: list[tuple[float, float, float]] = []
    while len(sams) < 6:
        x, y, r = rng.uniform(25, 125), rng.uniform(25, 125), rng.uniform(4, 9)
        if all(math.hypot(x - a, y - b) > r + 6 for a, b in airports) and all(
            math.hypot(x - a, y - b) > r + c + 3 for a, b, c in sams
        ):
            sams.append((float(x), float(y), float(r)))
    targets = []
    while len(targets) < 60:
        x, y = rng.uniform(3, SIZE - 3, 2)
        if all(math.hypot(x - a, y - b) > c + 1.0 for a, b, c in sams):
            targets.append(
                {
                    "id": f"T{len(targets) + 1}",
                    "x": float(x),
                    "y": float(y),
                    "priority": int(rng.integers(1, 11)),
                    "type": "ABC"[len(targets) % 3],
                }
            )
    return {
        "environment": {
            "airports": [{"id": f"A{i + 1}", "x": x, "y": y} for i, (x, y) in enumerate(airports)],
            "targets": targets,
            "sams": [
                {"id": f"S{i + 1}", "pos": [x, y], "range": r} for i, (x, y, r) in enumerate(sams)
            ],
        },
        "drone_configs": {
            str(k + 1): {"fuelBudget": 380.0, "home_airport": f"A{k % 3 + 1}"} for k in range(10)
        },
        "sim": {"speed": 0.1},
        "timeline": [
            {
                "t": 900,
                "op": "add_sam",
                "id": "H1",
                "pos": [75.0, 75.0],
                "range": 6.0,
                "hidden": True,
            },
            {
                "t": 1500,
                "op": "add_target",
                "id": "T99",
                "x": 70.0,
                "y": 30.0,
                "priority": 9,
                "type": "A",
            },
        ],
    }


def store_size(url: str) -> dict[str, int]:
    """Bytes per table (SQLite's dbstat), and the file."""
    engine = open_store(url)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")).all()
    engine.dispose()
    return {name: int(size) for name, size in rows}


async def seeks(url: str, run_id: str, ticks: list[int]) -> list[tuple[int, float, bool]]:
    """(tick, ms, right) per seek over HTTP against the real dashboard."""
    reader = TraceReader(url)
    server = await start_dashboard(InProcessBus(), port=0, token=TOKEN, trace_url=url)
    out = []
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            await http.get(f"/api/runs/{run_id}/state", params={"tick": 0})  # warm
            for tick in ticks:
                began = time.perf_counter()
                r = await http.get(f"/api/runs/{run_id}/state", params={"tick": tick})
                ms = (time.perf_counter() - began) * 1000
                scene = r.json()
                row = reader.telemetry_at(run_id, tick)
                right = r.status_code == 200 and all(
                    abs(scene["drones"][d]["x"] - t["x"]) < 1e-9
                    and abs(scene["drones"][d]["y"] - t["y"]) < 1e-9
                    for d, t in row["drones"].items()
                )
                out.append((tick, ms, right))
    finally:
        await server.stop()
        reader.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeks", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    console = Console(width=120)
    folder = Path(tempfile.mkdtemp(prefix="isr-seek-"))
    db = args.db or folder / "traces.db"
    url = f"sqlite:///{db}"
    scenario = parse_scenario(hour_mission(args.seed), "hour mission")
    console.print("flying a one-hour, 10-drone mission headless into", db)
    began = time.perf_counter()
    report = asyncio.run(run_mission(scenario, RunConfig(trace_url=url, agents=False)))
    assert report is not None
    flew_s = time.perf_counter() - began
    hours = report.outcome.ticks / scenario.sim.tick_hz / 3600
    rng = random.Random(args.seed)
    ticks = [rng.randrange(report.outcome.ticks) for _ in range(args.seeks)]
    results = asyncio.run(seeks(url, report.run_id, ticks))
    ms = [m for _, m, _ in results]
    wrong = sum(not right for *_, right in results)
    reader = TraceReader(url)
    row = reader.run(report.run_id)
    far = max(ticks)
    began = time.perf_counter()
    sim = resimulate(row["scenario"], reader.inputs(report.run_id))
    while sim.tick <= far:
        sim.step()
    reexec_ms = (time.perf_counter() - began) * 1000
    reader.close()
    sizes = store_size(url)
    total = db.stat().st_size
    figures = {
        "mission_s": report.outcome.ticks / scenario.sim.tick_hz,
        "drones": 10,
        "flown_wall_s": round(flew_s, 1),
        "seeks": len(ms),
        "seek_median_ms": round(statistics.median(ms), 1),
        "seek_p90_ms": round(sorted(ms)[int(0.9 * (len(ms) - 1))], 1),
        "seek_max_ms": round(max(ms), 1),
        "wrong_positions": wrong,
        "reexecute_to_tick_ms": round(reexec_ms, 1),
        "reexecute_tick": far,
        "store_bytes": total,
        "store_mb_per_mission_hour": round(total / 1e6 / hours, 2),
        "tables_mb_per_hour": {
            k: round(v / 1e6 / hours, 2) for k, v in sorted(sizes.items()) if v > 100_000
        },
    }
    table = Table(title=f"replay seeks: {figures['mission_s'] / 60:.0f} min mission, 10 drones")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("seeks over HTTP (random ticks)", str(len(ms)))
    table.add_row("seek median", f"{figures['seek_median_ms']} ms")
    table.add_row("seek p90", f"{figures['seek_p90_ms']} ms")
    table.add_row("seek max (target < 300 ms)", f"{figures['seek_max_ms']} ms")
    table.add_row("drones not where the telemetry says", str(wrong))
    table.add_row(f"re-executing to tick {far} instead", f"{reexec_ms:.0f} ms")
    table.add_row("store size per mission hour", f"{figures['store_mb_per_mission_hour']} MB")
    for name, mb in figures["tables_mb_per_hour"].items():
        table.add_row(f"  {name}", f"{mb} MB/h")
    table.add_row("mission flown headless in", f"{flew_s:.1f} s wall")
    console.print(table)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0 if wrong == 0 and figures["seek_max_ms"] < 300 else 1


if __name__ == "__main__":
    sys.exit(main())
