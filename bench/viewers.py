"""The mission never waits on its viewers: the pace of a live run with 0, 50 and 300
anonymous websocket clients watching.

    python bench/viewers.py [--clients 0,50,300] [--speed 5] [--seconds 30]

For each count, ``isr run scenarios/demo.json --speed S`` starts in a process of its own
with its dashboard (no agents, no store); this script opens that many ``/ws/live`` streams
without the token (each reads every frame, as a browser tab would, without parsing it), lets
the run settle for 3 s, then reads the mission clock from ``/api/state`` twice, ``--seconds``
of wall time apart (the mission time of its latest telemetry). The figure is the pace achieved over the commanded one (goal: at least
0.95 at every count), beside the frames and bytes the clients received, the refusals (the
cap is 500 by default), and the 1-minute load (before and after each count).
``--root`` measures another checkout's ``isr run`` with this same script.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import websockets
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-viewers-token"


async def _watch(url: str, counts: list[int], stop: asyncio.Event) -> None:
    try:
        async with websockets.connect(url, max_size=None, open_timeout=30) as ws:
            while not stop.is_set():
                try:
                    frame = await asyncio.wait_for(ws.recv(), 1.0)
                except TimeoutError:
                    continue
                counts[0] += 1
                counts[1] += len(frame)
    except websockets.ConnectionClosed as closed:
        if closed.rcvd is not None and closed.rcvd.code == 1013:
            counts[2] += 1
        else:
            counts[3] += 1  # closed for another reason: not a refusal, said apart
    except OSError:
        counts[3] += 1  # could not connect: said apart from the refusals


async def _measure(base: str, clients: int, speed: float, seconds: float) -> dict[str, float]:
    ws_url = base.replace("http://", "ws://") + "/ws/live"
    stop = asyncio.Event()
    counts = [0, 0, 0, 0]  # frames, bytes, refused (1013), failed otherwise
    watchers = [asyncio.create_task(_watch(ws_url, counts, stop)) for _ in range(clients)]
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        await asyncio.sleep(3.0)

        async def clock() -> float:
            # the latest telemetry's mission time (every tick), the scene's before the first
            state = (await http.get("/api/state")).json()
            return float((state["telemetry"] or state["scene"])["time"])

        t0, w0 = await clock(), time.perf_counter()
        frames0 = counts[0]
        await asyncio.sleep(seconds)
        t1, w1 = await clock(), time.perf_counter()
        frames = counts[0] - frames0
    stop.set()
    await asyncio.gather(*watchers, return_exceptions=True)
    return {
        "pace": (t1 - t0) / (w1 - w0) / speed,
        "frames_per_s": frames / (w1 - w0),
        "mb": counts[1] / 1e6,
        "refused": counts[2],
        "failed": counts[3],
    }


def run_once(clients: int, speed: float, seconds: float, root: Path) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "ISR_TOKEN"}
    args = [sys.executable, "-m", "cli", "run", "scenarios/demo.json", "--port", "0"]
    args += ["--token", TOKEN, "--db", "none", "--no-agents", "--speed", str(speed)]
    # ``-m`` puts the working directory first on the path: the run is ``root``'s code
    proc = subprocess.Popen(
        args, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        base = None
        for line in proc.stderr:
            found = re.search(r"dashboard: (http://\S+)", line)
            if found:
                base = found.group(1).split("/?")[0]
                break
        if base is None:
            raise SystemExit("isr run did not start its dashboard")
        return asyncio.run(_measure(base, clients, speed, seconds))
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="0,50,300")
    parser.add_argument("--speed", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the checkout whose `isr run` is measured (another commit, measured the same way)",
    )
    args = parser.parse_args()
    console = Console(width=120)
    table = Table(
        title=f"Pace of a live run (demo, {args.speed:g}x) with anonymous viewers, "
        f"over {args.seconds:g} s"
    )
    columns = ("clients", "pace / commanded", "frames/s (all)", "MB", "refused", "failed", "load")
    for column in columns:
        table.add_column(column)
    for clients in [int(c) for c in args.clients.split(",")]:
        console.print(f"{clients} clients ... (load {os.getloadavg()[0]:.2f})")
        r = run_once(clients, args.speed, args.seconds, args.root)
        table.add_row(
            str(clients),
            f"{r['pace']:.3f}",
            f"{r['frames_per_s']:.0f}",
            f"{r['mb']:.1f}",
            str(r["refused"]),
            str(r["failed"]),
            f"{os.getloadavg()[0]:.2f}",
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
