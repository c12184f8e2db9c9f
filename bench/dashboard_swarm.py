"""The dashboard at swarm size: a live run of N drones with the page open in Chromium.

    python bench/dashboard_swarm.py [--drones 10 200 1000] [--seconds 25] [--sams K] [--fed] [--out FILE]

For each fleet size: ``isr scenario new`` writes a mission of N drones, 5N targets (at most
5,000) and N/2 SAMs (at most 500; ``--sams K`` for fewer: the start-up's SAM-aware compile
is what makes a big mission slow to start, not the page); ``isr run`` flies it live at 1x (``--no-agents --db none
--port 0``); headless Chromium (Debian's, as the browser tests use) opens the dashboard with
the token, waits for the drones to fly, then for ``--seconds`` counts the page's animation
frames (requestAnimationFrame), reads the renderer's time per frame (``window.isr.perf``,
performance.now around each render pass, store.js) and the JS heap. A websocket client in
this process reads the same telemetry: the tick lateness it sees is the frame's arrival
minus its sim time (1x: sim time is wall time), less the smallest such gap (so network and
start-up offsets cancel): p50 / p99 / max in ms. Printed with the 1-minute load beside:
the machine is shared and every figure moves with it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's dashboard (its static files), not an installed one
ISR = [sys.executable, "-m", "cli"]
TOKEN = "bench-token-0123"
CHROMIUM = "/usr/bin/chromium"
URL_LINE = re.compile(r"dashboard: (http://\S+?)/\?token=")


def isr_command() -> list[str]:
    # ``python -m cli`` from this checkout (cwd=ROOT): a copy of the tree benches its own code
    return ISR


def make_mission(drones: int, folder: Path, sams: int | None) -> Path:
    path = folder / f"swarm-{drones}.json"
    targets = min(5 * drones, 5000)
    sams = min(max(drones // 2, 1), 500) if sams is None else sams
    subprocess.run(
        [
            *isr_command(),
            "scenario",
            "new",
            "--drones",
            str(drones),
            "--targets",
            str(targets),
            "--sams",
            str(sams),
            "--out",
            str(path),
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return path


def load1() -> float:
    return os.getloadavg()[0]


class Lateness:
    """A websocket client reading the live telemetry: arrival (wall) minus sim time, per frame."""

    def __init__(self, ws_url: str) -> None:
        self.gaps: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.read, args=(ws_url,), daemon=True)
        self.thread.start()

    def read(self, ws_url: str) -> None:
        from websockets.sync.client import connect

        with connect(ws_url, max_size=None, open_timeout=30) as ws:
            while not self.stop.is_set():
                try:
                    frame = json.loads(ws.recv(timeout=1))
                except TimeoutError:
                    continue
                if frame.get("type") == "telemetry":
                    self.gaps.append(time.monotonic() - float(frame["data"]["time"]))

    def summary(self, since: int) -> dict[str, float]:
        gaps = self.gaps[since:]
        if not gaps:
            return {}
        base = min(gaps)
        late = sorted(1000 * (g - base) for g in gaps)
        pick = lambda q: late[min(len(late) - 1, int(q * len(late)))]  # noqa: E731
        return {"frames": len(late), "p50": pick(0.5), "p99": pick(0.99), "max": late[-1]}


PAGE_MEASURE = """async (seconds) => {
  const perf = window.isr.perf;
  const before = perf.count, beforeMs = perf.totalMs;
  perf.samples = [];
  let frames = 0;
  const t0 = performance.now();
  await new Promise((done) => {
    const tick = () => { frames++; if (performance.now() - t0 < seconds * 1000) requestAnimationFrame(tick); else done(); };
    requestAnimationFrame(tick);
  });
  const wall = (performance.now() - t0) / 1000;
  const s = perf.samples.slice().sort((a, b) => a - b);
  const q = (p) => s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : 0;
  return { fps: frames / wall, renders: perf.count - before,
           render_mean_ms: (perf.totalMs - beforeMs) / Math.max(1, perf.count - before),
           render_p50_ms: q(0.5), render_p95_ms: q(0.95), render_max_ms: s.length ? s[s.length - 1] : 0,
           heap_mb: performance.memory ? performance.memory.usedJSHeapSize / 1048576 : null,
           dom_nodes: document.getElementsByTagName("*").length };
}"""


def measure(drones: int, seconds: float, folder: Path, sams: int | None) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    mission = make_mission(drones, folder, sams)
    run = subprocess.Popen(
        [
            *isr_command(),
            "run",
            str(mission),
            "--speed",
            "1",
            "--no-agents",
            "--db",
            "none",
            "--port",
            "0",
            "--token",
            TOKEN,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    started = time.monotonic()
    try:
        url = None
        assert run.stdout is not None
        for line in run.stdout:
            m = URL_LINE.search(line)
            if m:
                url = m.group(1)
                break
        if url is None:
            raise SystemExit(f"isr run at {drones} drones ended before serving the dashboard")
        # keep reading its output, so the run never blocks on a full pipe
        threading.Thread(target=run.stdout.read, daemon=True).start()
        lateness = Lateness(url.replace("http://", "ws://") + "/ws/live")
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM, args=["--enable-precise-memory-info"]
            )
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{url}/?token={TOKEN}")
            page.wait_for_function(
                "() => window.isr && window.isr.perf && window.isr.scene && window.isr.telemetry"
                " && Object.keys(window.isr.scene.drones || {}).length > 0"
                " && ['FLYING', 'flying', 'PLANNING', 'planning'].includes(String(window.isr.telemetry.mode))",
                timeout=600_000,
            )
            start_s = time.monotonic() - started
            since = len(lateness.gaps)
            page_figures = page.evaluate(PAGE_MEASURE, seconds)
            browser.close()
        lateness.stop.set()
        return {
            "drones": drones,
            "start_s": start_s,
            **page_figures,
            "lateness_ms": lateness.summary(since),
            "load1": load1(),
        }
    finally:
        run.terminate()
        try:
            run.wait(timeout=20)
        except subprocess.TimeoutExpired:
            run.kill()


# ----- the fed mode: the real dashboard server, its bus fed a synthetic swarm -----------------
# A live run of hundreds of drones does not start in reasonable time yet (its start-up plan's
# SAM-aware compile, issue 23's first item), so the page is also measured against the real
# server (start_dashboard on an InProcessBus, as a live run's) fed scene and telemetry frames
# of N drones flying circles at 20 Hz: what the page draws and the stream carries, without
# the planner. No tick lateness there: there is no executive.


def swarm_scene(drones: int, seed: int = 0) -> dict[str, Any]:
    import math
    import random

    rnd = random.Random(seed)
    targets = [
        {"id": f"T{k + 1}", "x": rnd.uniform(0, 200), "y": rnd.uniform(0, 200),
         "priority": float(rnd.randint(1, 10)), "type": rnd.choice(["EO", "IR"]),
         "status": rnd.choice(["pending", "planned", "planned", "collected"])}
        for k in range(min(5 * drones, 5000))
    ]  # fmt: skip
    fleet = {}
    for k in range(drones):
        cx, cy = rnd.uniform(20, 180), rnd.uniform(20, 180)
        circle = [
            [cx + 10 * math.cos(a / 8 * math.pi), cy + 10 * math.sin(a / 8 * math.pi)]
            for a in range(17)
        ]
        fleet[str(k + 1)] = {
            "x": circle[0][0], "y": circle[0][1], "status": "flying", "fuel": 150.0, "budget": 200.0,
            "points": 0.0, "flown": circle[:6], "frozen": circle[5:8], "planned": circle[7:],
            "route": [t["id"] for t in rnd.sample(targets, 5)], "margin_km": 40.0, "bingo_km": 30.0,
            "home_km": 25.0, "spare_km": 120.0, "pnr_km": None, "warning": None, "enabled": True,
            "centre": [cx, cy],
        }  # fmt: skip
    sams = [{"id": f"S{k + 1}", "x": rnd.uniform(0, 200), "y": rnd.uniform(0, 200), "range": 5.0, "known": True}
            for k in range(min(drones // 20 + 1, 50))]  # fmt: skip
    return {
        "run_id": "swarm-bench", "tick": 0, "time": 0.0, "tick_hz": 20.0, "mode": "FLYING", "speed": 1.0,
        "plan_id": 1, "planned_points": 0.0, "fork": None, "geo": None,
        "airports": [{"id": "A1", "x": 10.0, "y": 10.0}, {"id": "A2", "x": 190.0, "y": 10.0}],
        "targets": targets, "sams": sams, "drones": fleet, "draft": None, "constraints": {},
        "collected_points": 0.0,
    }  # fmt: skip


def feed(drones: int, stop: threading.Event, ready: list[str]) -> None:
    """Serve the dashboard on a bus fed the swarm: a scene every 2 s, telemetry at 20 Hz."""
    import asyncio
    import math

    from dashboard.server import start_dashboard
    from executive.bus import InProcessBus

    async def run() -> None:
        bus = InProcessBus()
        server = await start_dashboard(bus, host="127.0.0.1", port=0, token=TOKEN)
        scene = swarm_scene(drones)
        bus.publish("scene", scene)
        ready.append(server.url)
        tick, t0 = 0, time.monotonic()
        while not stop.is_set():
            tick += 1
            now = tick / 20
            rows = {}
            for i, (k, d) in enumerate(scene["drones"].items()):
                a = now / 10 + i
                cx, cy = d["centre"]
                rows[k] = {"x": cx + 10 * math.cos(a), "y": cy + 10 * math.sin(a), "heading": a + math.pi / 2,
                           "fuel": 150.0 - now / 10, "status": "flying", "points": 0.0}  # fmt: skip
            bus.publish("telemetry", {"tick": tick, "time": now, "mode": "FLYING", "drones": rows})
            if tick % 40 == 0:
                bus.publish("scene", scene | {"tick": tick, "time": now})
            await asyncio.sleep(max(0.0, t0 + now - time.monotonic()))
        await server.stop()

    asyncio.run(run())


def measure_fed(drones: int, seconds: float) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    stop, ready = threading.Event(), []
    server = threading.Thread(target=feed, args=(drones, stop, ready), daemon=True)
    server.start()
    started = time.monotonic()
    while not ready:
        time.sleep(0.1)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM, args=["--enable-precise-memory-info"]
            )
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{ready[0]}/?token={TOKEN}")
            page.wait_for_function(
                f"() => window.isr && window.isr.perf && window.isr.scene && window.isr.telemetry"
                f" && Object.keys(window.isr.scene.drones || {{}}).length === {drones}",
                timeout=600_000,
            )
            start_s = time.monotonic() - started
            figures = page.evaluate(PAGE_MEASURE, seconds)
            browser.close()
    finally:
        stop.set()
        server.join(timeout=10)
    return {"drones": drones, "start_s": start_s, **figures, "lateness_ms": {}, "load1": load1()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--drones", type=int, nargs="+", default=[10, 200, 1000])
    ap.add_argument("--seconds", type=float, default=25.0)
    ap.add_argument(
        "--sams",
        type=int,
        help="SAMs at every size (default N/2, at most 500: the start-up's"
        " SAM-aware compile grows with targets² x SAMs, issue 23)",
    )
    ap.add_argument(
        "--fed",
        action="store_true",
        help="the real dashboard server fed a synthetic swarm (no executive, no planner)",
    )
    ap.add_argument("--out", type=Path, help="also write the figures here (JSON)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.drones:
            row = (
                measure_fed(n, args.seconds)
                if args.fed
                else measure(n, args.seconds, Path(tmp), args.sams)
            )
            rows.append(row)
            late = row["lateness_ms"] or {}
            print(
                f"{n:>5} drones: {row['fps']:5.1f} fps, render {row['render_mean_ms']:6.2f} ms mean"
                f" / p95 {row['render_p95_ms']:6.1f} / max {row['render_max_ms']:6.1f}"
                f" ({row['renders']} passes), heap {row['heap_mb'] or 0:6.1f} MB,"
                f" {row['dom_nodes']} DOM nodes; tick lateness p50 {late.get('p50', float('nan')):.0f}"
                f" / p99 {late.get('p99', float('nan')):.0f} / max {late.get('max', float('nan')):.0f} ms"
                f" ({late.get('frames', 0)} frames); start {row['start_s']:.0f} s; load1 {row['load1']:.2f}",
                flush=True,
            )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
