"""Issue 13's broker probe: a Mosquitto of the probe's own killed and started again (same
port, empty: no persistence) under a live mission on the MQTT bus.

    python bench/probe_broker.py [--quick] [--json FILE]

One mission (``scenarios/new_target.json`` at 2x real time) flies with an executive
``MqttBus`` (signed with a control token, default backoff) and one watcher ``MqttBus`` as a
dashboard would hold it. The broker is SIGKILLed mid-run and started again 10 s later
(``--quick``: 3 s). Measured:

* messages lost and superseded per topic, from the executive bus's ``stats()``, and the
  events the watcher really missed;
* time from the broker's return to the first message of the executive a watcher receives
  (target: under 5 s), and to each side's link being up again;
* a PAUSE the watcher sends as soon as its link says commands can go: whether it reaches
  the mission, and how long after it was sent;
* whether the final status (``ended``) reaches the watcher;
* unsigned and wrongly signed commands sent on ``cmd`` after the return: how many were
  refused, and that none took effect.

``probe_broker(quick)`` returns a flat dict (``table_row()`` picks the columns for the lead's
table in bench/probe.py); ``main()`` prints it as a rich table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aiomqtt
from rich.console import Console
from rich.table import Table

from executive.bus.mqtt import MqttBus
from executive.bus.signing import Signer
from executive.bus.topics import OUT_TOPICS
from executive.loop import Executive
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from mission.live.host import MissionHost
from planner.scenario import load_scenario
from tests.executive.bus.broker import Mosquitto

__all__ = ["TARGET_RETURN_S", "main", "probe_broker", "table_row"]

SCENARIO = ROOT / "scenarios" / "new_target.json"
TOKEN = "probe-broker-token"
SPEED = 2.0
TARGET_RETURN_S = 5.0  # first publish received after the broker's return
BAD_COMMANDS = 10  # unsigned + wrongly signed, sent after the return


class _Seen:
    """A watcher subscription read into a list of (arrival time, topic, payload)."""

    def __init__(self, bus: MqttBus) -> None:
        self.sub = bus.subscribe(OUT_TOPICS, maxsize=1_000_000)
        self.items: list[tuple[float, str, dict[str, Any]]] = []
        self.changed = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        async for m in self.sub:
            self.items.append((time.monotonic(), m.topic, m.payload))
            self.changed.set()

    async def until(self, predicate: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, 0.05))
        return True

    def of(self, topic: str) -> list[dict[str, Any]]:
        return [p for _, t, p in self.items if t == topic]


async def _wait(predicate: Any, timeout: float) -> float | None:
    """Seconds until ``predicate()`` holds (polled every 10 ms), None if it never does."""
    began = time.monotonic()
    while not predicate():
        if time.monotonic() - began > timeout:
            return None
        await asyncio.sleep(0.01)
    return time.monotonic() - began


def _key(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, default=str)


async def _probe(folder: Path, quick: bool) -> dict[str, Any]:
    outage_s = 3.0 if quick else 10.0
    broker = Mosquitto(folder)
    broker.start()
    run_id = f"probe-{uuid.uuid4().hex[:12]}"
    executive = Executive(
        load_scenario(SCENARIO),
        planner=AlgorithmicPlanner(iterations=500),
        sink=ListSink(),
        run_id=run_id,
    )
    out: dict[str, Any] = {"outage_s": outage_s, "speed": SPEED}
    try:
        async with (
            MqttBus(broker.url, run_id=run_id, role="watcher", token=TOKEN) as watcher,
            MqttBus(broker.url, run_id=run_id, token=TOKEN) as bus,
        ):
            seen = _Seen(watcher)
            published = bus.subscribe(["events"], maxsize=1_000_000)  # what the host sent
            mission = asyncio.get_running_loop().create_task(MissionHost(executive, bus).run(SPEED))
            try:
                await seen.until(lambda: any(p["tick"] > 40 for p in seen.of("telemetry")), 60)
                killed_tick = executive.sim.tick
                broker.kill()
                await asyncio.sleep(outage_s)
                out["ticks_during_outage"] = executive.sim.tick - killed_tick
                out["watcher_link_during_outage"] = watcher.link.state
                returned = broker.start()
                returned_wall = time.time() - (time.monotonic() - returned)
                n_before = len(seen.items)

                # a PAUSE as soon as the watcher's link says a command can go (what a
                # dashboard does: it answers 503 until then, 202 from then on)
                w_up = await _wait(lambda: watcher.link.commands, 30)
                out["watcher_commands_after_return_s"] = (
                    round(time.monotonic() - returned, 3) if w_up is not None else None
                )
                sent_at = time.monotonic()
                watcher.publish("cmd", {"type": "command", "command": "PAUSE"})
                # first message of the executive a watcher receives after the return
                got = await seen.until(
                    lambda: any(t >= returned for t, _, _ in seen.items[n_before:]), 30
                )
                first = next((t for t, _, _ in seen.items[n_before:] if t >= returned), None)
                out["first_publish_after_return_s"] = (
                    round(first - returned, 3) if got and first is not None else None
                )
                e_up = await _wait(lambda: bus.link.state == "up", 30)
                out["executive_link_up_after_return_s"] = (
                    round((bus.link.since or 0.0) - returned_wall, 3) if e_up is not None else None
                )
                paused = await _wait(lambda: executive.mode == "PAUSED", 10)
                out["command_after_return_reached"] = paused is not None
                out["command_after_return_delay_s"] = (
                    round(time.monotonic() - sent_at, 3) if paused is not None else None
                )
                # unsigned and wrongly signed commands: refused, counted, no effect
                paused_before = executive.mode == "PAUSED"
                topic = f"isr/{run_id}/cmd"
                resume = {"type": "command", "command": "RESUME"}
                async with aiomqtt.Client("127.0.0.1", broker.port) as intruder:
                    for i in range(BAD_COMMANDS):
                        data = (
                            json.dumps(resume).encode()
                            if i % 2 == 0
                            else Signer("not-the-token").seal_command(topic, resume)
                        )
                        await intruder.publish(topic, data, qos=1)
                refused = await _wait(
                    lambda: sum(bus.stats()["refused"].values()) >= BAD_COMMANDS, 10
                )
                out["bad_commands_sent"] = BAD_COMMANDS
                out["bad_commands_refused"] = sum(bus.stats()["refused"].values())
                out["bad_commands_refused_by_reason"] = dict(bus.stats()["refused"])
                # a RESUME that got through would unpause the mission
                out["bad_commands_took_effect"] = (
                    (executive.mode != "PAUSED" or refused is None) if paused_before else None
                )
            finally:
                executive.stop()
                report = await asyncio.wait_for(mission, 60)
            bus.publish(
                "status",
                {"run_id": run_id, "state": "ended", "points": report.outcome.total_points},
            )
            out["final_status_received"] = await seen.until(
                lambda: any(p.get("state") == "ended" for p in seen.of("status")), 15
            )
            sent_events = []
            while (m := published.get_nowait()) is not None:
                sent_events.append(m.payload)
            await bus.stop()
            stats = bus.stats()
            seen.task.cancel()
        received = {_key(p) for p in seen.of("events")}
        out["events_published"] = len(sent_events)
        out["events_missed_by_watcher"] = sum(_key(p) not in received for p in sent_events)
        out["lost"] = stats["lost"]
        out["lost_total"] = stats["lost_total"]
        out["superseded"] = stats["superseded"]
        out["resent"] = stats["resent"]
        out["reconnects"] = stats["reconnects"]
        out["down_s"] = stats["down_s"]
        out["return_target_met"] = (
            out["first_publish_after_return_s"] is not None
            and out["first_publish_after_return_s"] < TARGET_RETURN_S
        )
        return out
    finally:
        broker.stop()


def probe_broker(quick: bool) -> dict[str, Any]:
    """Kill and restart a Mosquitto of its own under a live run; the figures as a flat dict
    (see the module's docstring; ``table_row`` names the ones for a summary table)."""
    logging.getLogger("executive.bus.mqtt").setLevel(logging.CRITICAL)  # the outage is expected
    with tempfile.TemporaryDirectory(prefix="probe-broker-") as folder:
        return asyncio.run(_probe(Path(folder), quick))


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in sorted(value.items())) or "0"
    return str(value)


def table_row(result: dict[str, Any]) -> dict[str, str]:
    """The figures for one row of a summary table: column title -> text."""
    return {
        "broker down (s)": _fmt(result["outage_s"]),
        "first publish after return (s)": _fmt(result["first_publish_after_return_s"]),
        f"< {TARGET_RETURN_S:g} s": _fmt(result["return_target_met"]),
        "command after return reached": _fmt(result["command_after_return_reached"]),
        "command delay (s)": _fmt(result["command_after_return_delay_s"]),
        "final status received": _fmt(result["final_status_received"]),
        "lost (per topic)": _fmt(result["lost"]),
        "superseded (per topic)": _fmt(result["superseded"]),
        "events missed by watcher": _fmt(result["events_missed_by_watcher"]),
        "bad commands refused": f"{result['bad_commands_refused']}/{result['bad_commands_sent']}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 3 s outage instead of 10 s")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    result = probe_broker(args.quick)
    console = Console(width=150)
    table = Table(
        title=f"Mosquitto killed mid-run, back after {result['outage_s']:g} s "
        f"(new_target at {SPEED:g}x, signed MQTT bus, default backoff)"
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = {
        **table_row(result),
        "ticks flown while the broker was down": _fmt(result["ticks_during_outage"]),
        "watcher's link during the outage": _fmt(result["watcher_link_during_outage"]),
        "watcher may command again after (s)": _fmt(result["watcher_commands_after_return_s"]),
        "executive's link up after (s)": _fmt(result["executive_link_up_after_return_s"]),
        "events published / missed by watcher": (
            f"{result['events_published']} / {result['events_missed_by_watcher']}"
        ),
        "QoS 1 messages resent": _fmt(result["resent"]),
        "reconnects / down (s)": f"{result['reconnects']} / {result['down_s']:.2f}",
        "bad commands refused by reason": _fmt(result["bad_commands_refused_by_reason"]),
        "a bad command took effect": _fmt(result["bad_commands_took_effect"]).replace("NO", "no"),
    }
    for name, value in rows.items():
        table.add_row(name, value)
    console.print(table)
    ok = (
        result["return_target_met"]
        and result["command_after_return_reached"]
        and result["final_status_received"]
        and result["bad_commands_refused"] == result["bad_commands_sent"]
        and not result["bad_commands_took_effect"]
    )
    console.print("targets met" if ok else "TARGET(S) MISSED")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
