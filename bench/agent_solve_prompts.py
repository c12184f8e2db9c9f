"""The seed's six example prompts through ``POST /api/agent_solve`` on the demo mission.

    python bench/agent_solve_prompts.py [--iterations 1500]

The real app is served on 127.0.0.1 (no live mission: the planning endpoint needs none) and
each prompt is posted with the demo's environment and drone configs and, as its
``existing_solution``, the plan the first request ("Generate optimal routes ...") made.
Printed per prompt: the coordinator's intent and confidence, the rules hit, whether the plan
changed against the posted one, the points, the latency, and the responder's answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import httpx
from responder_questions import SEED_PROMPTS  # the seed's examples: bench/ is on the path

from dashboard.server import start_dashboard
from executive.bus import InProcessBus

ROOT = Path(__file__).resolve().parent.parent

TOKEN = "bench-agent-solve"


def _body(demo: dict, message: str, iterations: int, existing: dict | None) -> dict:
    body = {
        "user_message": message,
        "environment": demo["environment"],
        "drone_configs": demo["drone_configs"],
        "preferences": {"iterations": iterations},
    }
    if existing is not None:
        body["existing_solution"] = {
            "routes": {d: {"route": r["route"]} for d, r in existing["routes"].items()}
        }
    return body


async def main(iterations: int) -> None:
    demo = json.loads((ROOT / "scenarios" / "demo.json").read_text())
    server = await start_dashboard(InProcessBus(), host="127.0.0.1", port=0, token=TOKEN)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
            first = await http.post(
                "/api/agent_solve", json=_body(demo, SEED_PROMPTS[1], iterations, None)
            )
            first.raise_for_status()
            existing = first.json()
            before = {d: r["route"] for d, r in existing["routes"].items()}
            print(
                f"agent_solve on scenarios/demo.json (rules engine, {iterations} iterations); "
                f"the posted plan: {existing['total_points']:g} points, routes {before}\n"
            )
            for prompt in SEED_PROMPTS:
                started = time.perf_counter()
                r = await http.post(
                    "/api/agent_solve", json=_body(demo, prompt, iterations, existing)
                )
                ms = (time.perf_counter() - started) * 1000
                body = r.json()
                decision = body.get("coordinator_decision") or {}
                after = {d: x["route"] for d, x in (body.get("routes") or {}).items()}
                print(f"> {prompt}")
                print(
                    f"  HTTP {r.status_code}, success {body.get('success')}, intent "
                    f"{decision.get('intent')} (confidence {decision.get('confidence')}), "
                    f"rules hit {decision.get('rules_hit')}"
                )
                print(
                    f"  plan changed: {body.get('plan_changed')} (routes differ from the posted"
                    f" plan: {after != before}), points {body.get('total_points')}, {ms:.0f} ms"
                )
                response = " ".join(str(body.get("response", "")).split())
                print(f"  response: {response[:400]}{' ...' if len(response) > 400 else ''}\n")
    finally:
        await server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1500)
    args = parser.parse_args()
    asyncio.run(main(args.iterations))
