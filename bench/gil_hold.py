"""Does compiling a mission stall a real-time tick? A 20 Hz ticker thread against a thread
that compiles missions, at four sizes.

    python bench/gil_hold.py [--sizes 10x100x10,50x500x50,...] [--workers 1,2] [--out FILE]

For each size (drones x targets x SAMs; airports min(drones, 50); generated like
``bench/limits.py``: everything uniform over the whole coordinate box, SAMs up to 1,000 km,
nothing inside a SAM) the scenario is parsed at the door first, then one thread runs
``compile_mission`` (the SAM-aware all-pairs table every plan needs; ``--workers`` threads
share its rows; the kernels are loaded from numba's cache once before any clock runs) while
another ticks at 20 Hz on ``time.perf_counter``: it sleeps to each
50 ms deadline and records how late it woke. A kernel that held the GIL would hold the ticker
with it (scipy's Dijkstra did, for seconds). Printed per size and worker count: the
compile's wall time, the ticker's ticks, p50 / p99 / worst lateness and overruns (a tick
woken a whole period late or more), and the machine's 1-minute load before and after (other
processes share the cores: the load says how much of the lateness is theirs). A baseline
row ticks with nothing compiling, and a control row per size does the same work (import,
parse, compile) in a child process, which shares the cores but not the GIL: its lateness is
what the load alone costs the ticker. Target: worst lateness a few ms at every size.

Python's garbage collector is the other thing that stops every thread: the first full
collection after a large scenario is loaded scans all its objects (0.1-0.2 s at
1,000 x 5,000). A long-running process freezes what it loaded at start-up (``gc.freeze()``)
so that later collections skip it; so does this bench after each parse, unless ``--no-freeze``.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from limits import mission  # bench/limits.py: the same generator
from rich.console import Console
from rich.table import Table

from planner.limits import MAX_COORD_KM
from planner.mission import compile_mission
from planner.scenario import parse_scenario

PERIOD = 0.05  # 20 Hz
SIZES = "10x100x10,50x500x50,200x2000x200,1000x5000x500"
TARGET_WORST_MS = 5.0


class Ticker(threading.Thread):
    """Wakes at every 50 ms deadline until stopped; records how late each wake was."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.late: list[float] = []
        self._halt = threading.Event()

    def run(self) -> None:
        clock = time.perf_counter
        start = clock()
        k = 1
        while not self._halt.is_set():
            deadline = start + k * PERIOD
            pause = deadline - clock()
            if pause > 0:
                time.sleep(pause)
            now = clock()
            self.late.append(max(0.0, now - deadline))
            # After an overrun, the next deadline is the next one still ahead (no burst).
            k = max(k + 1, int((now - start) / PERIOD) + 1)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def _child(text: object, workers: int) -> None:
    """In a child process: what the thread does, from its own imports on."""
    from planner.mission import compile_mission
    from planner.scenario import parse_scenario

    compile_mission(parse_scenario(text), workers=workers)  # type: ignore[arg-type]


def in_child(text: object, workers: int) -> None:
    """Run ``_child`` in a spawned process and wait for it."""
    child = multiprocessing.get_context("spawn").Process(target=_child, args=(text, workers))
    child.start()
    child.join()


def measure(label: str, work: object) -> dict[str, object]:
    """Run ``work()`` (None: sleep 3 s) in a thread while the ticker ticks."""
    gc.collect()
    load = os.getloadavg()[0]
    ticker = Ticker()
    ticker.start()
    time.sleep(0.2)  # a few quiet ticks first
    took = [0.0]

    def job() -> None:
        t = time.perf_counter()
        if work is None:
            time.sleep(3.0)
        else:
            work()  # type: ignore[operator]
        took[0] = time.perf_counter() - t

    worker = threading.Thread(target=job)
    worker.start()
    worker.join()
    time.sleep(0.2)
    ticker.stop()
    late = sorted(ticker.late)
    return {
        "label": label,
        "compile_s": took[0],
        "ticks": len(late),
        "p50_ms": 1e3 * statistics.median(late),
        "p99_ms": 1e3 * late[int(0.99 * (len(late) - 1))],
        "worst_ms": 1e3 * late[-1],
        "overruns": sum(x >= PERIOD for x in late),
        "load": (load, os.getloadavg()[0]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-freeze", action="store_true", help="leave the GC as it is")
    args = parser.parse_args()
    console = Console(width=140, record=True)
    # Load the numba kernels from their cache (or compile them) before any clock runs: the
    # first call of a kernel holds the GIL while LLVM loads it (the executive warms up too).
    compile_mission(parse_scenario(mission(12, 2, 3, 3, 100.0)))
    rows = [measure("nothing (baseline)", None)]
    for size in args.sizes.split(","):
        drones, targets, sams = (int(v) for v in size.split("x"))
        text = mission(targets, sams, drones, min(drones, 50), MAX_COORD_KM)
        t = time.perf_counter()
        scenario = parse_scenario(text)
        door = time.perf_counter() - t
        console.print(f"{size}: parsed at the door in {door:.2f} s", highlight=False)
        if not args.no_freeze:
            gc.collect()
            gc.freeze()
        for workers in (int(w) for w in args.workers.split(",")):
            row = measure(
                f"{size}, {workers} worker{'s' if workers > 1 else ''}",
                lambda s=scenario, w=workers: compile_mission(s, workers=w),
            )
            rows.append(row)
            console.print(f"  {row}", highlight=False)
        control = measure(
            f"{size}, 1 worker, in a child process (control)",
            lambda t=text: in_child(t, 1),
        )
        rows.append(control)
        console.print(f"  {control}", highlight=False)
    table = Table(
        title="A 20 Hz ticker thread while another thread compiles a mission (control rows:"
        " a child process does the same work; its time includes imports and parsing)"
    )
    for col in (
        "compiling (drones x targets x SAMs)",
        "compile s",
        "ticks",
        "p50 late ms",
        "p99 late ms",
        "worst late ms",
        "overruns",
        "load before / after",
    ):
        table.add_column(col, justify="left" if col.startswith("compiling") else "right")
    for r in rows:
        table.add_row(
            str(r["label"]),
            f"{r['compile_s']:.2f}",
            str(r["ticks"]),
            f"{r['p50_ms']:.2f}",
            f"{r['p99_ms']:.2f}",
            f"{r['worst_ms']:.2f}",
            str(r["overruns"]),
            "{:.2f} / {:.2f}".format(*r["load"]),  # type: ignore[str-format]
        )
    console.print(table)
    threads = [r for r in rows[1:] if "control" not in str(r["label"])]
    worst = max(float(r["worst_ms"]) for r in threads)  # type: ignore[arg-type]
    console.print(
        f"worst lateness while compiling: {worst:.2f} ms (target: a few ms, <= "
        f"{TARGET_WORST_MS:g} ms): {'MET' if worst <= TARGET_WORST_MS else 'MISSED'}",
        highlight=False,
    )
    if args.out:
        args.out.write_text(console.export_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
