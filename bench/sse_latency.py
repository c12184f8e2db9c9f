"""Time to the first event and to ``done`` of the SSE routes on the demo (issue 25).

    python bench/sse_latency.py [--n 20] [--out bench/results/sse_latency.txt]

The real ``isr run scenarios/demo.json`` (dashboard, rules engine, 2x: it flies all along, no trace store) in a
subprocess; a real HTTP client (httpx) posts, N times each, on the same connection:

* a plan request, ``POST /api/agent_solve/stream`` "Generate optimal routes" on the demo's
  environment (the agent chain plans it, 500 iterations);
* a question, ``POST /api/ask/stream`` "how much fuel does D2 have left?" on the live run
  (across the bus to the mission's host and back).

Printed: median and p95 of the time from sending the request to the first event (the
coordinator's ``plan``) and to ``done``, in ms, with the machine's load (``uptime``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token-0123"
QUESTION = "how much fuel does D2 have left?"
PLAN = "Generate optimal routes"


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


async def _timed(http: httpx.AsyncClient, path: str, body: dict) -> tuple[float, float, str]:
    """(ms to the first event, ms to done, the first event's name)."""
    t0 = time.perf_counter()
    first: float | None = None
    name = ""
    async with http.stream("POST", path, json=body) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if not line.startswith("event: "):
                continue
            event = line.removeprefix("event: ")
            if first is None:
                first, name = (time.perf_counter() - t0) * 1000, event
            if event == "error":
                raise RuntimeError(f"{path}: an error event")
            if event == "done":
                return first, (time.perf_counter() - t0) * 1000, name
    raise RuntimeError(f"{path}: the stream closed without done")


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, round(0.95 * len(xs)) - 1)]


async def _measure(url: str, n: int) -> dict[str, list[tuple[float, float, str]]]:
    demo = json.loads((ROOT / "scenarios" / "demo.json").read_text())
    plan_body = {
        "user_message": PLAN,
        "environment": demo["environment"],
        "drone_configs": demo["drone_configs"],
        "preferences": {"iterations": 500},
    }
    headers = {"Authorization": f"Bearer {TOKEN}"}
    out: dict[str, list[tuple[float, float, str]]] = {"plan request": [], "question": []}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as http:
        await _timed(http, "/api/ask/stream", {"question": QUESTION})  # warm-up, not counted
        await _timed(http, "/api/agent_solve/stream", plan_body)
        for _ in range(n):
            out["plan request"].append(await _timed(http, "/api/agent_solve/stream", plan_body))
            out["question"].append(await _timed(http, "/api/ask/stream", {"question": QUESTION}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    cmd = [sys.executable, "-m", "cli", "run", "scenarios/demo.json", "--port", "0"]
    cmd += ["--token", TOKEN, "--db", "none", "--speed", "2"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        url = None
        assert proc.stderr is not None
        for line in proc.stderr:
            if m := re.search(r"dashboard: (http://\S+)", line):
                url = m.group(1).split("?")[0]  # the printed address carries the token
                break
        if url is None:
            raise SystemExit("the dashboard did not start")
        before = _uptime()
        results = asyncio.run(_measure(url, args.n))
        after = _uptime()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    lines = [
        f"SSE latency on the demo (isr run scenarios/demo.json at 2x, rules engine), N={args.n}",
        f"load before: {before}",
        f"load after:  {after}",
        "",
        f"{'request':<14} {'first event':>11} {'to first: median':>17} {'p95':>7}"
        f" {'to done: median':>16} {'p95':>7}",
    ]
    for what, rows in results.items():
        firsts = [r[0] for r in rows]
        dones = [r[1] for r in rows]
        lines.append(
            f"{what:<14} {rows[0][2]:>11} {statistics.median(firsts):>14.1f} ms"
            f" {_p95(firsts):>7.1f} {statistics.median(dones):>13.1f} ms {_p95(dones):>7.1f}"
        )
    lines.append("")
    lines.append(f"plan request: POST /api/agent_solve/stream {PLAN!r} (500 iterations)")
    lines.append(f"question:     POST /api/ask/stream {QUESTION!r} (over the bus to the host)")
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
