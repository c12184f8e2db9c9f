"""What an edit costs the kept distance table, against compiling it again from scratch.

    python bench/distance_table.py [--sizes 10x100x10,50x500x50,200x2000x200,1000x5000x500]
        [--repeat 5] [--out FILE]

For each size (drones x targets x SAMs, generated like ``bench/limits.py``: airports
min(drones, 50), everything uniform over the whole box, SAMs up to 1,000 km), a
``planner.geometry.DistanceTable`` of the airports and targets is built from scratch (the
full compile: timed), then each edit kind is applied ``--repeat`` times: a target added at a
free spot, one moved, one removed; a SAM added (radius as the generator draws), one moved by
about its radius, one removed; and a replan round's batch (``apply_points``): a start per
drone added, then all of them moved a few km at once, as the drones fly between rounds.
Printed per edit kind: the median wall time, the median pairs it recomputed (and the share
of all pairs), and the full compile's time over it. After the
edits the table is compared with one built from scratch on the same world (the smallest
size only: the largest would double the run). The full build and the edits use the same
``--workers`` threads (default 2). The 1-minute load is printed with each row.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np
from limits import mission  # bench/limits.py: the same generator
from rich.console import Console
from rich.table import Table

from planner.geometry import (
    AddPoint,
    AddSam,
    DistanceTable,
    MovePoint,
    MoveSam,
    RemovePoint,
    RemoveSam,
    TableEdit,
)
from planner.limits import MAX_COORD_KM, MAX_SAM_RANGE_KM

SIZES = "10x100x10,50x500x50,200x2000x200,1000x5000x500"
KINDS = ("add target", "move target", "remove target", "add SAM", "move SAM", "remove SAM")


def world(drones: int, targets: int, sams: int) -> tuple[dict, dict]:
    data = mission(targets, sams, drones, min(drones, 50), MAX_COORD_KM)
    env = data["environment"]
    sam_map = {s["id"]: (s["pos"][0], s["pos"][1], s["range"]) for s in env["sams"]}
    points = {a["id"]: (a["x"], a["y"]) for a in env["airports"]}
    points |= {t["id"]: (t["x"], t["y"]) for t in env["targets"]}
    return sam_map, points


def free_spot(table: DistanceTable, rng: random.Random) -> tuple[float, float]:
    """A point of the box outside every SAM."""
    hw = MAX_COORD_KM
    while True:
        x, y = rng.uniform(-hw, hw), rng.uniform(-hw, hw)
        if all(math.hypot(x - sx, y - sy) > r * 1.05 for sx, sy, r in table.sams.values()):
            return x, y


def edit(kind: str, table: DistanceTable, rng: random.Random, n: int) -> TableEdit:
    """One random edit of ``kind`` (ids are fresh for additions)."""
    hw = MAX_COORD_KM
    top = min(MAX_SAM_RANGE_KM, hw / 10)
    sams = table.sams

    def free() -> tuple[float, float]:
        while True:
            x, y = rng.uniform(-hw, hw), rng.uniform(-hw, hw)
            if all(math.hypot(x - sx, y - sy) > r * 1.05 for sx, sy, r in sams.values()):
                return x, y

    targets = [k for k in table.keys if k.startswith("T")]
    match kind:
        case "add target":
            return AddPoint(f"N{n}", *free())
        case "move target":
            return MovePoint(rng.choice(targets), *free())
        case "remove target":
            return RemovePoint(rng.choice(targets))
        case "add SAM":
            x, y = rng.uniform(-hw, hw), rng.uniform(-hw, hw)
            return AddSam(f"M{n}", x, y, rng.uniform(top / 10, top))
        case "move SAM":
            key = rng.choice(sorted(sams))
            x, y, r = sams[key]
            angle = rng.uniform(0, 2 * math.pi)
            return MoveSam(key, x + r * math.cos(angle), y + r * math.sin(angle), r)
        case _:
            return RemoveSam(rng.choice(sorted(sams)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2, help="threads, full build and edits")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    console = Console(width=130, record=True)
    DistanceTable({"S": (0.0, 0.0, 1.0)}, {"a": (5.0, 0.0), "b": (-5.0, 0.0)})  # kernels loaded
    table_out = Table(title="DistanceTable: one edit vs the full compile")
    for col in (
        "drones x targets x SAMs",
        "points",
        "full compile s",
        "edit",
        "median edit s",
        "pairs recomputed (share)",
        "full / edit",
        "load",
    ):
        table_out.add_column(col, justify="left" if col == "edit" else "right")
    sizes = args.sizes.split(",")
    for size in sizes:
        drones, targets, sams = (int(v) for v in size.split("x"))
        sam_map, points = world(drones, targets, sams)
        t = time.perf_counter()
        table = DistanceTable(sam_map, points, workers=args.workers)
        full = time.perf_counter() - t
        rng = random.Random(3)
        n = 0
        for kind in KINDS:
            seconds, pairs = [], []
            for _ in range(args.repeat):
                report = table.apply(edit(kind, table, rng, n))
                n += 1
                seconds.append(report.seconds)
                pairs.append(report.pairs)
            total = len(table) * (len(table) - 1) // 2
            med = statistics.median(seconds)
            table_out.add_row(
                size,
                f"{len(table):,}",
                f"{full:.2f}",
                kind,
                f"{med:.4f}",
                f"{statistics.median(pairs):,.0f} ({100 * statistics.median(pairs) / total:.1f} %)",
                f"{full / med:,.0f}x",
                f"{os.getloadavg()[0]:.2f}",
            )
            console.print(f"{size} {kind}: {med:.4f} s", highlight=False)
        starts = {f"D{k}": free_spot(table, rng) for k in range(drones)}
        table.apply_points([AddPoint(k, *xy) for k, xy in starts.items()])
        seconds, pairs = [], []
        for _ in range(args.repeat):
            moved = [
                MovePoint(k, x + rng.uniform(-5, 5), y + rng.uniform(-5, 5))
                for k, (x, y) in starts.items()
            ]
            report = table.apply_points(moved)
            seconds.append(report.seconds)
            pairs.append(report.pairs)
        total = len(table) * (len(table) - 1) // 2
        med = statistics.median(seconds)
        table_out.add_row(
            size,
            f"{len(table):,}",
            f"{full:.2f}",
            f"all {drones} starts moved (one batch)",
            f"{med:.4f}",
            f"{statistics.median(pairs):,.0f} ({100 * statistics.median(pairs) / total:.1f} %)",
            f"{full / med:,.1f}x",
            f"{os.getloadavg()[0]:.2f}",
        )
        table.apply_points([RemovePoint(k) for k in starts])
        if size == sizes[0]:
            keys = table.keys
            scratch = DistanceTable(table.sams, {k: table.position(k) for k in keys})
            got, want = table.matrix(keys), scratch.matrix(keys)
            same = np.array_equal(np.isfinite(got), np.isfinite(want)) and np.allclose(
                got[np.isfinite(got)], want[np.isfinite(want)], rtol=1e-9
            )
            console.print(
                f"{size}: after {n} edits, equal to a table built from scratch: {same}",
                highlight=False,
            )
    console.print(table_out)
    if args.out:
        args.out.write_text(console.export_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
