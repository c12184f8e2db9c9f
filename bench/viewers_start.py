"""What the live dashboard's own process (``dashboard.process``) costs to start: CPU seconds
and peak memory of that child until it serves.

    python bench/viewers_start.py [--runs 3] [--scenario scenarios/demo.json] [--root DIR]

Each run starts ``isr run SCENARIO --port 0 --token T`` (``--root``: another checkout's, to
compare), once with a trace store (a fresh SQLite file: the page can start forks) and once
with ``--db none``. As soon as the run prints its dashboard's address (the viewers' process
has said it serves), this script reads that child's CPU time (user + system, from
``/proc/PID/stat``: its start and the app's creation, nothing of the mission) and its peak
RSS (``VmHWM``), then stops the run with Ctrl-C. Printed per run with the 1-minute load;
the CPU seconds are the figure to compare (a loaded machine stretches the wall time, not
the CPU a start takes).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from console_startup import live_isr_run  # bench/console_startup.py: the same live run

TOKEN = "bench-viewers-start"
TICKS = os.sysconf("SC_CLK_TCK")


def _child_of(pid: int) -> int:
    """The viewers' process among ``pid``'s children (multiprocessing's spawned one, not
    its resource tracker)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and "spawn_main" in cmdline:
            return int(entry.name)
    raise RuntimeError(f"no spawned child of {pid}")


def _costs(pid: int) -> tuple[float, float]:
    """(CPU s, peak RSS MiB) of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    status = Path(f"/proc/{pid}/status").read_text()
    peak = re.search(r"VmHWM:\s+(\d+) kB", status)
    return cpu, int(peak.group(1)) / 1024 if peak else float("nan")


def one(root: Path, scenario: str, db: str) -> tuple[float, float, float]:
    """(CPU s, peak MiB, wall s to the address) of the viewers' process of one run."""
    isr = root / ".venv" / "bin" / "isr"
    started = time.perf_counter()
    argv = [str(isr), "run", scenario, "--port", "0", "--token", TOKEN, "--db", db]
    with live_isr_run(argv, root) as (proc, lines):
        while True:
            line = lines.get(timeout=600)
            if re.search(r"dashboard: http://", line):
                wall = time.perf_counter() - started
                cpu, peak = _costs(_child_of(proc.pid))
                return cpu, peak, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenario", default=str(ROOT / "scenarios" / "demo.json"))
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose isr runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for what, db in (("trace store", f"sqlite:///{tmp}/isr.db"), ("--db none", "none")):
                cpu, peak, wall = one(args.root, args.scenario, db)
                print(
                    f"run {i + 1}, {what}: viewers' process {cpu:.2f} CPU s, peak {peak:.0f} MiB"
                    f" to serve; address printed at {wall:.1f} s  (load {os.getloadavg()[0]:.2f})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
