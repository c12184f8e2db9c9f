"""How soon ``isr run`` serves its page, and what the page can say until the first plan.

    python bench/console_startup.py [--runs 2] [--scenario scenarios/demo.json] [--cold]

Each run starts ``isr run SCENARIO --port 0 --db none`` in a subprocess and reads, from the
moment it was launched: when it printed its dashboard's address, when ``GET /api/state``
first answered, the status it said each time it changed (``starting`` with its phase:
``compiling`` while the planner's kernels load, ``planning`` during the first plan;
``running``) and when the first scene (the map) arrived. ``--cold`` deletes numba's on-disk
cache of the planner first (``planner/**/__pycache__/*.nbi|*.nbc``): the first run after an
install, when the kernels compile. Printed per run, with the slowest answer of the page's API
while it waited (it stays responsive while the kernels compile) and the machine's 1-minute
load.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-console-startup"
POLL_S = 0.05


@contextlib.contextmanager
def live_isr_run(
    argv: list[str], cwd: Path
) -> Iterator[tuple[subprocess.Popen[str], queue.Queue[str]]]:
    """A live ``isr run`` (``argv``: its whole command line, run in ``cwd``, without
    ``$ISR_TOKEN``) and the lines of its stderr as they come; stopped with Ctrl-C (SIGINT)
    on leaving, killed if it does not end within 30 s."""
    env = {k: v for k, v in os.environ.items() if k != "ISR_TOKEN"}
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stderr], daemon=True).start()
    try:
        yield proc, lines
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _clear_numba_cache() -> int:
    gone = 0
    for pattern in ("*.nbi", "*.nbc"):
        for path in (ROOT / "planner").rglob(f"__pycache__/{pattern}"):
            path.unlink()
            gone += 1
    return gone


def _one(scenario: str) -> dict[str, object]:
    started = time.perf_counter()
    argv = [sys.executable, "-m", "cli", "run", scenario, "--port", "0", "--db", "none"]
    argv += ["--token", TOKEN, "--speed", "10"]
    out: dict[str, object] = {"phases": []}
    with live_isr_run(argv, ROOT) as (_, lines):
        url = None
        while url is None:
            line = lines.get(timeout=600)
            found = re.search(r"dashboard: (http://\S+?)/\?", line)
            if found:
                url = found.group(1)
                out["address_s"] = time.perf_counter() - started
        with httpx.Client(base_url=url, timeout=30) as http:
            said = None
            out["slowest_s"] = 0.0
            while True:
                asked = time.perf_counter()
                state = http.get("/api/state").json()
                now = time.perf_counter() - started
                out["slowest_s"] = max(out["slowest_s"], time.perf_counter() - asked)  # type: ignore[type-var]
                out.setdefault("state_s", now)
                status = state.get("status") or {}
                phase = (status.get("state"), status.get("phase"))
                if phase != said:
                    said = phase
                    out["phases"].append((f"{phase[0]}/{phase[1] or '-'}", now))  # type: ignore[union-attr]
                if state.get("scene") is not None:
                    out["scene_s"] = now
                    return out
                time.sleep(POLL_S)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--scenario", default="scenarios/demo.json")
    parser.add_argument("--cold", action="store_true", help="delete numba's cache first")
    args = parser.parse_args()
    if args.cold:
        print(f"numba cache cleared: {_clear_numba_cache()} files")
    for i in range(args.runs):
        r = _one(args.scenario)
        phases = ", ".join(f"{name} at {t:.1f} s" for name, t in r["phases"])  # type: ignore[attr-defined]
        print(
            f"run {i + 1}{' (cold)' if args.cold and i == 0 else ''}: address printed at "
            f"{r['address_s']:.1f} s, page answering at {r['state_s']:.1f} s; {phases}; "
            f"first scene at {r['scene_s']:.1f} s; slowest answer meanwhile {r['slowest_s']:.2f} s"
            f"  (load {os.getloadavg()[0]:.2f})"
        )


if __name__ == "__main__":
    main()
