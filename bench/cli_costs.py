"""What ``isr validate`` and ``isr plan`` cost a user: wall time and peak memory per command.

    python bench/cli_costs.py [--sizes 50x500x50,200x2000x200,1000x5000x500] [--out FILE]
        [--isr PATH]

Each command runs as its own process (``--isr``: the ``isr`` executable, default the one
beside this Python), on ``scenarios/demo.json`` and on missions generated like
``bench/limits.py`` (drones x targets x SAMs, airports min(drones, 50), the whole box).
Printed: wall seconds (the wrapper's start included, ~20 ms), CPU seconds (user + system
of the command and its children: what a loaded machine does not stretch) and peak RSS (the
command's ``ru_maxrss``), with the 1-minute load.
``isr validate`` checks the file and warns what a plan must leave out: it reads the distances
from the drones and airports only (a lazy table). ``isr plan`` compiles the table once for
its warnings and its plan (``--seconds 1`` of search). Goals: ``isr validate`` on the demo
under 1 s and 120 MiB.
The last row is the floor of any command that runs the planner's kernels (the SAM-avoiding
distances are numba kernels): this Python importing numba and calling one kernel from its
on-disk cache (the second run of a file that holds only that kernel).
``--isr`` measures another checkout's command (e.g. the figures before a change).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from limits import mission  # bench/limits.py: the same generator
from rich.console import Console
from rich.table import Table

MAX_COORD_KM = 10_000.0  # planner.limits.MAX_COORD_KM (not imported: keep this process light)
SIZES = "50x500x50,200x2000x200,1000x5000x500"
NUMBA_FLOOR = """from numba import njit


@njit(cache=True, nogil=True)
def one(x):
    return x + 1


one(1)
"""


# A fresh wrapper process per command, so that its children's peak RSS is that command's.
_WRAP = (
    "import resource, subprocess, sys;"
    "code = subprocess.run(sys.argv[1:], capture_output=True).returncode;"
    "used = resource.getrusage(resource.RUSAGE_CHILDREN);"
    "print(used.ru_maxrss, used.ru_utime + used.ru_stime, code)"
)


def run(cmd: list[str]) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MiB, exit code) of one command in its own process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True, cwd=ROOT
    )
    wall = time.perf_counter() - started
    peak_kib, cpu, code = done.stdout.split()
    return wall, float(cpu), int(peak_kib) / 1024, int(code)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--isr", default=str(Path(sys.executable).with_name("isr")))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    console = Console(width=120, record=True)
    table = Table(
        title="isr validate / isr plan: wall time, CPU and peak memory (one process each)"
    )
    for col in ("command", "mission", "wall s", "CPU s", "peak RSS MiB", "exit", "load"):
        table.add_column(col, justify="left" if col in ("command", "mission") else "right")
    jobs: list[tuple[str, str, list[str]]] = []
    demo = str(ROOT / "scenarios" / "demo.json")
    jobs.append(("isr validate", "demo", [args.isr, "validate", demo]))
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for size in args.sizes.split(","):
            drones, targets, sams = (int(v) for v in size.split("x"))
            path = Path(tmp) / f"{size}.json"
            path.write_text(
                json.dumps(mission(targets, sams, drones, min(drones, 50), MAX_COORD_KM))
            )
            files[size] = str(path)
        for size, path in files.items():
            jobs.append(("isr validate", size, [args.isr, "validate", path]))
        jobs.append(("isr plan", "demo", [args.isr, "plan", demo, "--seconds", "1"]))
        for size, path in files.items():
            jobs.append(("isr plan", size, [args.isr, "plan", path, "--seconds", "1", "--json"]))
        floor = Path(tmp) / "numba_floor.py"
        floor.write_text(NUMBA_FLOOR)
        run([sys.executable, str(floor)])  # compiles the kernel into its cache
        jobs.append(("python + numba", "one cached kernel", [sys.executable, str(floor)]))
        for command, what, cmd in jobs:
            wall, cpu, peak, code = run(cmd)
            load = f"{os.getloadavg()[0]:.2f}"
            table.add_row(
                command, what, f"{wall:.2f}", f"{cpu:.2f}", f"{peak:,.0f}", str(code), load
            )
            console.print(
                f"{command} {what}: {wall:.2f} s, {cpu:.2f} CPU s, {peak:,.0f} MiB, exit {code}"
            )
    console.print(table)
    if args.out:
        args.out.write_text(console.export_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
