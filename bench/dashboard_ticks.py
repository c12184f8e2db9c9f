"""The tick is never blocked by its watchers: websocket clients (one of them stalled) and MQTT.

    python bench/dashboard_ticks.py [--seconds 120] [--clients 10] [--mqtt mqtt://127.0.0.1:1883]
                                    [--replan-every 10] [--no-mqtt]

One process flies the generated 5-drone / 50-target / 10-SAM mission at 1x real time, 20 Hz,
with everything a live run has: the agent chain on the rules engine next to the planner, a
REPLAN every ``--replan-every`` seconds (planning rounds of about 0.5 s in a worker thread),
traces to a SQLite file, the dashboard server, and the executive publishing on the MQTT
broker. A second process (this script with ``--clients-only``) opens ``--clients`` websocket
connections to ``/ws/live`` — one of them never reads a frame, so its socket backs up — and
an MQTT subscriber to the run's topics.

Prints: ticks, overruns (ticks started more than one period late; target 0), tick start
lateness p50 / p99 / max, and for each websocket client the frames sent and dropped (by the
server's bounded per-client queue), what each client received, and the MQTT counts.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from rich.console import Console
from rich.table import Table

# ----- the client process ------------------------------------------------------------------


async def clients_only(url: str, n: int, seconds: float, mqtt: str | None, run_id: str) -> None:
    """``n`` websocket clients (the last never reads) and an MQTT subscriber, for ``seconds``."""
    import websockets

    received = [0] * n
    ticks: list[list[int]] = [[] for _ in range(n)]

    async def reader(k: int) -> None:
        async with websockets.connect(f"{url}/ws/live", max_size=None) as ws:
            while True:
                frame = json.loads(await ws.recv())
                received[k] += 1
                if frame.get("type") == "telemetry":
                    ticks[k].append(frame["data"]["tick"])

    async def stalled() -> None:
        # Connects, then never reads: the library stops reading after a few frames, the
        # kernel buffers fill, and the server's sender for this client waits on its socket.
        async with websockets.connect(f"{url}/ws/live", max_size=None, max_queue=1):
            await asyncio.sleep(seconds + 60)

    mqtt_count: dict[str, int] = {}  # per topic

    async def mqtt_watcher() -> None:
        import aiomqtt

        from executive.bus.mqtt import parse_mqtt_url

        host, port, _, _ = parse_mqtt_url(mqtt)
        async with aiomqtt.Client(host, port) as client:
            await client.subscribe(f"isr/{run_id}/#", qos=1)
            async for message in client.messages:
                topic = str(message.topic).rsplit("/", 1)[-1]
                mqtt_count[topic] = mqtt_count.get(topic, 0) + 1

    tasks = [asyncio.create_task(reader(k)) for k in range(n - 1)]
    tasks.append(asyncio.create_task(stalled()))
    if mqtt:
        tasks.append(asyncio.create_task(mqtt_watcher()))
    await asyncio.sleep(seconds)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    ordered = all(t == sorted(t) for t in ticks[: n - 1])
    print(
        json.dumps({"received": received, "telemetry_in_order": ordered, "mqtt": mqtt_count}),
        flush=True,
    )


# ----- the mission process -----------------------------------------------------------------


async def bench(args) -> int:
    import httpx
    from executive_ticks import large_scenario

    from agents.engines.rules import RulesEngine
    from agents.planning.round import AgentPlanner
    from dashboard.server import start_dashboard
    from executive.bus import InProcessBus
    from executive.loop import Executive
    from executive.loop.options import LoopOptions
    from executive.loop.policy import Policy
    from executive.traces import TraceWriter
    from executive.traces.sinks import TeeSink
    from mission.live.host import BusSink, MissionHost
    from planner.team_search import warmup

    console = Console(width=150)
    warmup()
    gc_pauses: list[tuple[float, int, int]] = []  # (ms, generation, tick): stops the loop
    gc_started = [0.0]
    ticking: list = []  # the executive, once built: the tick a pause happened at

    def on_gc(phase, info):
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            tick = ticking[0].sim.tick if ticking and ticking[0].started else -1
            gc_pauses.append(
                ((time.perf_counter() - gc_started[0]) * 1000, info["generation"], tick)
            )

    gc.callbacks.append(on_gc)
    scenario = large_scenario()
    hz = scenario.sim.tick_hz
    ticks_total = int(args.seconds * hz)
    db = Path(tempfile.mkdtemp(prefix="isr-bench-")) / "runs.db"
    writer = TraceWriter(f"sqlite:///{db}")
    writer.start()
    loop = asyncio.get_running_loop()
    policy = Policy(planning_deadline_s=0.5)
    if args.mqtt:
        from executive.bus.mqtt import MqttBus

        bus = MqttBus(args.mqtt, role="executive")
    else:
        bus = InProcessBus()
    sink = TeeSink(writer, BusSink(bus, loop))
    executive = Executive(
        scenario,
        planner=AgentPlanner(RulesEngine(), sink),
        sink=sink,
        options=LoopOptions(policy=policy),
    )
    bus.run_id = executive.run_id  # the MQTT last will names the run: known before start
    ticking.append(executive)
    host = MissionHost(executive, bus)
    # what the executive published, per topic, to compare with what the subscriber got
    published = bus.subscribe(["events", "agents", "plan", "status"], maxsize=1_000_000)
    await bus.start()
    server = await start_dashboard(bus, host="127.0.0.1", port=0, token="bench")
    console.print(
        f"{args.seconds:g} s at 1x real time, {hz:g} Hz, 5 drones / 50 targets / 10 SAMs;"
        f" agents (rules) + planner, REPLAN every {args.replan_every:g} s; traces to"
        f" SQLite; dashboard {server.url}; {args.clients} websocket clients (1 never"
        f" reads); MQTT {'on: ' + args.mqtt if args.mqtt else 'off'}"
    )
    client_proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--clients-only",
            server.url.replace("http", "ws", 1),
            "--clients",
            str(args.clients),
            "--seconds",
            str(args.seconds + 5),
            "--run-id",
            executive.run_id,
            *(["--mqtt", args.mqtt] if args.mqtt else []),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )

    async with httpx.AsyncClient(base_url=server.url) as http:
        for _ in range(200):  # wait until every client is connected
            if len((await http.get("/api/clients")).json()["clients"]) >= args.clients:
                break
            await asyncio.sleep(0.05)
        clients_at_start = len((await http.get("/api/clients")).json()["clients"])

        async def operator() -> None:  # asks for a replan now and then, as the page would
            while True:
                await asyncio.sleep(args.replan_every)
                bus.publish("cmd", {"type": "command", "command": "REPLAN"})

        asker = asyncio.create_task(operator())
        started = time.perf_counter()
        report = await host.run(1.0, until=ticks_total)
        wall = time.perf_counter() - started
        asker.cancel()
        body = (await http.get("/api/clients")).json()
        # a client the server disconnected (the stalled one stops answering pings) is
        # reported with its final counts
        clients = body["clients"] + body.get("departed", [])
    out, _ = await asyncio.to_thread(client_proc.communicate)
    seen = json.loads(out.strip().splitlines()[-1])
    mqtt_dropped = dict(getattr(bus, "dropped", {}) or {})
    await server.stop()
    await bus.stop()
    await asyncio.to_thread(writer.close)

    j = report.jitter_ms
    console.print(
        f"ticks: {report.ticks} in {wall:.1f} s wall   overruns: {report.overruns}"
        f"   clients connected at start: {clients_at_start}"
    )
    console.print(
        f"tick start lateness ms: p50 {j['p50']:.3f}  p99 {j['p99']:.3f}"
        f"  max {j['max']:.3f} (tick {j['max_at_tick']})  mean {j['mean']:.3f}"
    )
    gc.callbacks.remove(on_gc)
    running = [p for p in gc_pauses if p[2] > 0]  # after tick 0: while the clock runs
    before = max((p[0] for p in gc_pauses if p[2] <= 0), default=0.0)
    worst_gc = max(running, default=(0.0, -1, -1))
    console.print(
        f"garbage collections while ticking: {len(running)}, longest"
        f" {worst_gc[0]:.1f} ms (generation {worst_gc[1]}, tick {worst_gc[2]});"
        f" longest before tick 0: {before:.1f} ms"
    )
    rounds = [r for r in report.replans if r.latency_ms is not None]
    console.print(
        f"planning rounds: {len(rounds)} ({sum(r.status == 'committed' for r in rounds)}"
        f" committed); trace records dropped: {writer.dropped}"
    )
    table = Table(
        title="websocket clients (server side: frames sent / dropped by its bounded queue)"
    )
    for column in (
        "client",
        "state",
        "sent",
        "dropped",
        "dropped by topic",
        "pending",
        "received (client side)",
    ):
        table.add_column(column, justify="right")
    for k, c in enumerate(sorted(clients, key=lambda c: c["id"])):
        state = f"left after {c['connected_s']:.0f} s" if c.get("left") else "connected"
        table.add_row(
            str(c["id"]),
            state,
            str(c["sent"]),
            str(c["dropped_total"]),
            ", ".join(f"{t} {n}" for t, n in sorted(c["dropped"].items())) or "-",
            str(c["pending"]),
            str(seen["received"][k]) if k < len(seen["received"]) else "?",
        )
    console.print(table)
    console.print(
        f"telemetry arrived in tick order at every reading client: {seen['telemetry_in_order']}"
    )
    if args.mqtt:
        sent: dict[str, int] = {}
        while (message := published.get_nowait()) is not None:
            sent[message.topic] = sent.get(message.topic, 0) + 1
        got = seen["mqtt"]
        console.print(
            f"MQTT: telemetry received {got.get('telemetry', 0)} of {report.ticks}"
            f" ticks (dropped at the sender: {mqtt_dropped or 'none'});"
            + "".join(
                f" {t} received {got.get(t, 0)} of {n} published;" for t, n in sorted(sent.items())
            )
        )
    target = "PASS" if report.overruns == 0 else "FAIL"
    console.print(f"zero overruns: {target}; p99 lateness {j['p99']:.3f} ms")
    return 0 if report.overruns == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--replan-every", type=float, default=10.0)
    parser.add_argument("--mqtt", default=os.environ.get("ISR_MQTT", "mqtt://127.0.0.1:1883"))
    parser.add_argument("--no-mqtt", action="store_true")
    parser.add_argument("--clients-only", metavar="WS_URL", help=argparse.SUPPRESS)
    parser.add_argument("--run-id", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.no_mqtt:
        args.mqtt = None
    if args.clients_only:
        asyncio.run(
            clients_only(args.clients_only, args.clients, args.seconds, args.mqtt, args.run_id)
        )
        return 0
    return asyncio.run(bench(args))


if __name__ == "__main__":
    sys.exit(main())
