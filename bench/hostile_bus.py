"""Issue 24's hostile bus: a flood of bad commands on a live run's ``cmd`` while the operator
sends a signed PAUSE.

    python bench/hostile_bus.py [--messages 1000] [--seconds 30] [--speed 2]

One mission (``scenarios/new_target.json``) flies with an executive ``MqttBus`` signed with a
control token, on a Mosquitto of the bench's own; a watcher ``MqttBus`` (a dashboard) hears
it. An intruder without the token sends ``--messages`` bad messages on ``isr/<run>/cmd``
over ``--seconds``: deep-nested JSON (``'[' * 5000``), just over the 64 KB cap, 2 MB (over
the packet size the executive allows), unsigned commands, and signed-but-deep ones. Halfway
through, the watcher sends a signed PAUSE. Printed: reconnects (executive, watcher), PAUSEs
applied, refusals by reason, tick lateness p50/p99/max and overruns, and the process's RSS
before and after (one process holds the executive, the watcher and the intruder), with
``uptime``: figures on a loaded machine are not comparable.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aiomqtt

from executive.bus.executive_link import CMD_MAX_BYTES
from executive.bus.mqtt import MqttBus
from executive.loop import Executive
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import NullSink
from mission.live.host import MissionHost
from planner.scenario import load_scenario
from tests.executive.bus.broker import Mosquitto

SCENARIO = ROOT / "scenarios" / "new_target.json"
TOKEN = "hostile-bench-token"
DEEP = b"[" * 5000


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _signed_deep(topic: str) -> bytes:
    body = b'{"type":"command","x":' + DEEP + b"]" * 5000 + b"}"
    key = hmac.new(TOKEN.encode(), b"isr-mqtt-v1", hashlib.sha256).digest()
    sig = hmac.new(key, topic.encode() + b"\n" + body, hashlib.sha256).hexdigest()
    return body[:-1] + f',"sig":"{sig}"}}'.encode()


def _kinds(topic: str) -> list[tuple[str, bytes, int]]:
    """The bad messages, one of each kind, with the QoS they are sent at."""
    return [
        ("deep", DEEP, 1),
        ("just_over_cap", b'{"type":"command","pad":"' + b"x" * CMD_MAX_BYTES + b'"}', 1),
        ("2MB", b"[" * 2_000_000, 0),
        ("unsigned", json.dumps({"type": "command", "command": "RESUME"}).encode(), 1),
        ("signed_deep", _signed_deep(topic), 1),
    ]


async def hostile(messages: int, seconds: float, speed: float) -> dict[str, object]:
    folder = Path(tempfile.mkdtemp(prefix="hostile-bus-"))
    broker = Mosquitto(folder)
    broker.start()
    run_id = f"hostile-{uuid.uuid4().hex[:12]}"
    topic = f"isr/{run_id}/cmd"
    executive = Executive(
        load_scenario(SCENARIO),
        planner=AlgorithmicPlanner(iterations=500),
        sink=NullSink(),
        run_id=run_id,
    )
    sent: dict[str, int] = {}
    try:
        async with (
            MqttBus(broker.url, run_id=run_id, role="watcher", token=TOKEN) as watcher,
            MqttBus(broker.url, run_id=run_id, token=TOKEN) as bus,
        ):
            events = watcher.subscribe(["events"], maxsize=1_000_000)
            host = MissionHost(executive, bus)
            mission = asyncio.get_running_loop().create_task(host.run(speed))
            while not executive.started:
                await asyncio.sleep(0.05)
            await asyncio.sleep(2.0)  # settled: the memory and lateness before
            rss_before = _rss_mb()
            kinds = _kinds(topic)
            gap = seconds / messages
            began = time.monotonic()
            async with aiomqtt.Client("127.0.0.1", broker.port) as intruder:
                for i in range(messages):
                    if i == messages // 2:
                        watcher.publish("cmd", {"type": "command", "command": "PAUSE"})
                    name, data, qos = kinds[i % len(kinds)]
                    await intruder.publish(topic, data, qos=qos)
                    sent[name] = sent.get(name, 0) + 1
                    await asyncio.sleep(max(0.0, began + (i + 1) * gap - time.monotonic()))
            flood_s = time.monotonic() - began
            await asyncio.sleep(2.0)  # the last refusals and the pause
            rss_after = _rss_mb()
            executive.stop()
            report = await asyncio.wait_for(mission, 60)
            pauses = 0
            while (message := events.get_nowait()) is not None:
                payload = message.payload
                if payload.get("kind") == "HUMAN_COMMAND" and payload.get("command") == "PAUSE":
                    pauses += 1
        return {
            "messages": sum(sent.values()),
            "sent_by_kind": sent,
            "flood_s": round(flood_s, 1),
            "reconnects_executive": bus.reconnects,
            "reconnects_watcher": watcher.reconnects,
            "pause_applied": pauses,
            "refused": bus.stats()["refused"],
            "bad_messages": bus.bad_messages,
            "lateness_ms": report.jitter_ms,
            "overruns": report.overruns,
            "ticks": report.ticks,
            "rss_mb_before": round(rss_before, 1),
            "rss_mb_after": round(rss_after, 1),
            "rss_growth_mb": round(rss_after - rss_before, 1),
        }
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--speed", type=float, default=2.0)
    args = parser.parse_args()
    figures = asyncio.run(hostile(args.messages, args.seconds, args.speed))
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(json.dumps(figures, indent=2, default=str))
    print(f"uptime: {uptime}")


if __name__ == "__main__":
    main()
