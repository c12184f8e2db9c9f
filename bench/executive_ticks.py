"""The tick is never blocked: a real-time run at 20 Hz while agents and the planner work.

    python bench/executive_ticks.py [--seconds 60] [--engine-delay 8.0] [--plan-seconds 0.5]
                                    [--replan-every 10] [--scenario large|FILE]
                                    [--sizes 10x100x10,50x500x50,200x2000x200,1000x5000x500]
                                    [--store DIR] [--no-scene] [--quality SECONDS] [--airports N]

``--sizes`` flies swarms (drones x targets x SAMs) instead of ``--scenario``, one after the
other: generated like ``bench/limits.py`` / ``bench/replan_size.py`` (seeded, the whole
coordinate box, fuel for about half the targets), as ``isr run`` flies them: the trace
store is a real SQLite file (``TraceWriter``; its size per mission hour is printed), the
replay snapshot is the live scene (``mission.live.scene``) and telemetry is traced every
``telemetry_every`` ticks (the policy's default). ``--no-scene`` leaves the snapshot out.

The executive flies the scenario at 1x real time. Every ``--replan-every`` seconds the
operator asks for a replan (a REPLAN command, as the dashboard sends it), so planning rounds
run all along: each round's team search (the fast tier) takes about ``--plan-seconds`` in a
worker thread and commits; every agent call (the slow tier: strategist, allocator, critic)
goes to an engine that answers after ``--engine-delay`` seconds, within the agents' own
timeout, so their proposals arrive long after the fast plan flies, are rebased onto the
state then and applied only if they beat the plan in force.

Prints: ticks, overruns (ticks started more than one period late; target 0), tick start
lateness p50 / p99 / max (target p99 under 5 ms), the rounds and their latency (p50 /
p95), the committed rounds, and the agents' proposals: answered, offered (better than the
round's baseline), applied (better than the plan in force after the rebase); with the
1-minute load beside each size (the figures are wall-clock: a loaded machine inflates them).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agents.engines.base import AgentCall, EngineReply
from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.traces.sinks import ListSink
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario import load_scenario


class SlowEngine:
    """An engine whose every call takes ``delay`` seconds (an LLM on a bad day). Its
    allocator answers the rules allocation, or with ``problem`` (the round's remainder, as
    the model would read it from the prompt) the allocation a long search finds there."""

    name = "slow"
    model = "slow-bench"

    def __init__(self, delay: float, problem: Callable[[], Any] | None = None) -> None:
        self.delay = delay
        self.problem = problem
        self.calls = 0

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        self.calls += 1
        started = time.perf_counter()
        answer = dict(call.deterministic)
        scenario = self.problem() if self.problem is not None else None
        if call.agent == "allocator" and scenario is not None:
            strong = await asyncio.to_thread(
                lambda: plan_mission(compile_mission(scenario), seconds=None, iterations=3000)
            )
            answer["assignments"] = strong.solution.allocation
        await asyncio.sleep(max(0.0, self.delay - (time.perf_counter() - started)))
        return EngineReply(answer, "[]", self.model)


class Recording:
    """The planner, keeping the last request (what a model would read in its prompt)."""

    def __init__(self, planner) -> None:
        self.planner = planner
        self.last = None
        self.rounds: list[tuple[Any, Any]] = []  # (request, outcome) of each round
        # the planner's incremental distance table, shared with the executive's rebases as
        # isr run shares it (without it every rebase compiled the whole table: 3 s at 1,000)
        self.compile = getattr(planner, "compile", None)

    async def plan(self, request):
        self.last = request
        outcome = await self.planner.plan(request)
        self.rounds.append((request, outcome))
        return outcome


async def quality(recording: Recording, seconds: float, console: Console) -> str:
    """Each operator round's plan (as the planner handed it over, at the deadline) against
    the plan a ``seconds`` search makes on the same request, warm start included: the
    figure the issue asks for ("the plan at the deadline within 2 % of the plan after
    10 s"). The long search compiles the request afresh (its own distance table)."""
    from agents.planning.round import AgentPlanner

    rows = []
    for request, outcome in recording.rounds:
        if request.trigger == "initial":
            continue
        # whole_round=False: the search has 80 % of the deadline, post-optimised to the end
        long = AgentPlanner(SlowEngine(0.0), ListSink(), use_agents=False, whole_round=False)
        ref = await long.plan(dataclasses.replace(request, deadline_s=seconds / 0.8))
        got, best = outcome.solution.total_points, ref.solution.total_points
        rows.append(100.0 * got / best if best > 0 else 100.0)
        console.print(
            f"  round at tick {request.tick}: {got:,.0f} points at the deadline,"
            f" {best:,.0f} after {seconds:g} s of search ({rows[-1]:.2f} %)"
        )
    if not rows:
        return "n/a"
    return f"{min(rows):.2f}-{max(rows):.2f} %"


def large_scenario(seed: int = 0):
    """5 drones, 50 targets, 10 SAMs on 100 x 100 km: big enough that the search uses its
    whole budget (about 0.5 s a round)."""
    import numpy as np

    from planner.scenario import parse_scenario

    rng = np.random.default_rng(seed)
    sams = []
    while len(sams) < 10:
        x, y, r = rng.uniform(15, 85), rng.uniform(15, 85), rng.uniform(4, 8)
        if all((x - a) ** 2 + (y - b) ** 2 > (r + c + 2) ** 2 for a, b, c in sams):
            sams.append((x, y, r))
    airports = [(5.0, 5.0), (95.0, 5.0), (50.0, 95.0)]

    def free(x, y):
        return all((x - a) ** 2 + (y - b) ** 2 > (c + 1.0) ** 2 for a, b, c in sams)

    targets = []
    while len(targets) < 50:
        x, y = rng.uniform(2, 98, 2)
        if free(x, y):
            targets.append(
                {
                    "id": f"T{len(targets) + 1}",
                    "x": float(x),
                    "y": float(y),
                    "priority": int(rng.integers(1, 11)),
                    "type": "ABC"[len(targets) % 3],
                }
            )
    drones = {
        str(k + 1): {
            "fuelBudget": 160.0,
            "home_airport": f"A{k % 3 + 1}",
            "accessibleTargets": ["A", "B", "C"] if k < 3 else ["A", "B"],
        }
        for k in range(5)
    }
    return parse_scenario(
        {
            "environment": {
                "airports": [
                    {"id": f"A{i + 1}", "x": x, "y": y} for i, (x, y) in enumerate(airports)
                ],
                "targets": targets,
                "sams": [
                    {"id": f"S{i + 1}", "pos": [x, y], "range": r}
                    for i, (x, y, r) in enumerate(sams)
                ],
            },
            "drone_configs": drones,
            "sim": {"speed": 0.1},
        },
        "<bench large scenario>",
    )


def make_planner(engine, sink, plan_seconds: float, no_post_opt: bool = False):
    try:
        from agents.planning.round import AgentPlanner
    except ImportError:  # the agent round is optional for this figure
        from executive.planning.algorithmic import AlgorithmicPlanner

        return AlgorithmicPlanner(), "algorithmic"
    post_opt = dict.fromkeys(("insert", "swap", "no_cross"), False) if no_post_opt else None
    kind = "agents (slow tier) + planner (fast tier)" + (", no post-opt" if no_post_opt else "")
    return AgentPlanner(engine, sink, post_opt=post_opt), kind


def swarm_scenario(
    drones: int, targets: int, sams: int, popups: int = 0, airports: int | None = None
):
    """A generated swarm (``bench/replan_size.swarm``'s world), parsed at the door; with
    ``popups``, that many SAMs (3 km) pop up at ``POPUP_T`` next to targets spread over the
    map (drones fly to targets: some planned paths meet them). ``airports`` (50 at most by
    default) spreads the drones out: with one each, every drone has targets near home."""
    sys.path.insert(0, str(ROOT / "bench"))
    import numpy as np
    from limits import mission

    from planner.limits import MAX_COORD_KM, MAX_FUEL_KM
    from planner.scenario import parse_scenario

    airports = min(drones, 50) if airports is None else airports
    data = mission(targets, sams, drones, airports, MAX_COORD_KM)
    area = (2 * MAX_COORD_KM) ** 2
    fuel = 0.7 * np.sqrt(area * targets / 2) / drones + 2 * np.sqrt(area / airports)
    for config in data["drone_configs"].values():
        config["fuelBudget"] = float(min(MAX_FUEL_KM, round(fuel)))
    listed = data["environment"]["targets"]
    step = max(1, len(listed) // max(1, popups))
    data["timeline"] = [
        {
            "t": POPUP_T,
            "op": "add_sam",
            "id": f"POP{k}",
            "pos": [listed[k * step]["x"] + 1.0, listed[k * step]["y"]],
            "range": 3.0,
        }
        for k in range(popups)
    ]
    return parse_scenario(data, f"<swarm {drones}x{targets}x{sams}>")


POPUP_T = 15.0  # s: ``--popups`` SAMs appear then (between the REPLANs at 10 s and 20 s)


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


class Resident:
    """The process's resident memory (MB), read every second while a run ticks (Linux's
    /proc; nothing elsewhere): whether it stays bounded over the run."""

    def __init__(self) -> None:
        self.mb: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="rss", daemon=True)

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while True:
            try:
                with open("/proc/self/statm") as f:
                    self.mb.append(int(f.read().split()[1]) * page / 1e6)
            except OSError:
                return
            if self._stop.wait(1.0):
                return

    def __enter__(self) -> Resident:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        mb = self.mb
        if not mb:
            return "resident memory: not read here"
        return f"resident MB: before the first plan {mb[0]:,.0f}, end {mb[-1]:,.0f}, peak {max(mb):,.0f}"


class EventSink(ListSink):
    """Keeps the events only (what the figures read): a run's every telemetry frame and
    plan kept in memory would make the collector's full passes, on the tick, far longer
    than ``isr run``'s, which keeps none of them."""

    def emit(self, record: Any) -> None:
        if isinstance(record, EventRecord):
            self.records.append(record)


async def fly(scenario, args, console: Console, store: Path | None) -> dict[str, Any]:
    """Fly ``scenario`` at 1x for ``args.seconds`` with REPLANs; returns the figures."""
    sink: Any = EventSink()
    writer = None
    if store is not None:
        from executive.traces import TraceWriter
        from executive.traces.sinks import TeeSink

        writer = TraceWriter(f"sqlite:///{store}")
        writer.start()
        sink = TeeSink(writer, sink)
    recording: list[Recording] = []
    engine = SlowEngine(
        args.engine_delay,
        (lambda: recording[0].last.scenario if recording and recording[0].last else None)
        if args.good_model
        else None,
    )
    inner, kind = make_planner(engine, sink, args.plan_seconds, args.no_post_opt)
    planner = Recording(inner)
    recording.append(planner)
    kind += ", the allocator answering a long search's allocation" if args.good_model else ""
    policy = (
        Policy(planning_deadline_s=args.plan_seconds, telemetry_every=1)
        if store is None
        else Policy(planning_deadline_s=args.plan_seconds)
    )
    snapshot = None
    if store is not None and not args.no_scene:
        from mission.live.scene import capture_scene as snapshot
    executive = Executive(
        scenario,
        planner=planner,
        sink=sink,
        options=LoopOptions(policy=policy),
        snapshot=snapshot,
        # one incremental distance table for the rounds and the rebases, as isr run has
        compile=getattr(planner, "compile", None),
    )
    ticks_total = int(args.seconds * scenario.sim.tick_hz)
    # the tick's own work (wall time inside tick_once): what the loop does, apart from the
    # wait for the CPU and the GIL that a loaded machine and the workers add to lateness
    work: list[float] = []
    inner_tick = executive.tick_once

    def timed_tick():
        started = time.perf_counter()
        result = inner_tick()
        work.append(time.perf_counter() - started)
        return result

    executive.tick_once = timed_tick
    phases = Phases(executive) if args.phases else None
    if phases is not None:

        def phased_tick():
            phases.begin()
            started = time.perf_counter()
            try:
                return inner_tick()
            finally:
                took = time.perf_counter() - started
                work.append(took)
                phases.end(took)

        executive.tick_once = phased_tick
    console.print(
        f"{args.seconds:g} s at 1x real time, {scenario.sim.tick_hz:g} Hz; planner:"
        f" {kind}; engine delay {args.engine_delay:g} s; plan budget"
        f" {args.plan_seconds:g} s; REPLAN every {args.replan_every:g} s"
        + (f"; traces: SQLite, scene snapshots {'off' if args.no_scene else 'on'}" if store else "")
    )
    every = int(args.replan_every * scenario.sim.tick_hz)

    with Progress(
        TextColumn("ticks"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("run", total=ticks_total)

        def publish(topic, payload):
            if topic != "telemetry":
                return
            tick = payload["tick"]
            if tick % 20 == 0:
                progress.update(task, completed=tick)
            if tick > 0 and tick % every == 0:
                executive.command(HumanCommand("REPLAN"))

        executive.watch(publish=publish)
        with Resident() as resident:
            report = await executive.run(1.0, until=ticks_total)
    figures: dict[str, Any] = {"load": load()}
    jitter = report.jitter_ms
    asked = [r for r in report.replans if r.trigger != "initial"]
    rounds = [r for r in asked if r.latency_ms is not None]
    if len(rounds) < len(asked):
        console.print(
            "rounds without a latency (still planning at the end, or failed): "
            + ", ".join(
                f"{r.trigger} at tick {r.asked_tick}: {r.status}"
                for r in asked
                if r.latency_ms is None
            )
        )
    console.print(
        f"ticks: {report.ticks}   overruns: {report.overruns}   agent calls: {engine.calls}"
        f"   wall {report.wall_seconds:.1f} s"
    )
    console.print(
        f"tick start lateness ms: p50 {jitter['p50']:.3f}  p99 {jitter['p99']:.3f}"
        f"  max {jitter['max']:.3f}  mean {jitter['mean']:.3f}"
    )
    figures |= {"overruns": report.overruns, **{k: jitter[k] for k in ("p50", "p99", "max")}}
    ms = sorted(1000 * w for w in work) or [0.0]
    if scenario.timeline:
        at = {e.tick_at(scenario.sim.tick_hz) for e in scenario.timeline}
        pops = sorted(t for t in at if t is not None and t < len(work))
        console.print(
            "the ticks the timeline's edits arrive on, work ms: "
            + ", ".join(
                f"{t}: {1000 * work[t]:.1f} (next {1000 * work[t + 1]:.1f})"
                for t in pops
                if t + 1 < len(work)
            )
        )
    figures |= {"work_p99": ms[int(0.99 * (len(ms) - 1))], "work_max": ms[-1]}
    console.print(
        f"tick work ms (inside tick_once): p50 {statistics.median(ms):.2f}"
        f"  p99 {figures['work_p99']:.2f}  max {figures['work_max']:.1f}"
    )
    if rounds:
        lat = sorted(r.latency_ms for r in rounds)
        p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
        committed = sum(r.status == "committed" for r in rounds)
        console.print(
            f"planning rounds: {len(rounds)} ({committed} committed); latency ms"
            f" p50 {statistics.median(lat):.0f}, p95 {p95:.0f}, max {lat[-1]:.0f}"
        )
        console.print(
            "each round (trigger at tick: ms): "
            + ", ".join(
                f"{r.trigger.split(' +')[0]} at {r.asked_tick}: {r.latency_ms:.0f}" for r in rounds
            ),
            soft_wrap=True,
        )
        figures |= {"rounds": len(rounds), "committed": committed}
        figures |= {"replan_p50": statistics.median(lat), "replan_p95": p95}
        events = [r for r in _records(sink) if isinstance(r, EventRecord)]
        done = [e for e in events if e.kind == "AGENTS_DONE"]
        decided = [e for e in events if e.kind == "AGENT_PROPOSAL"]
        console.print(
            f"agent proposals: {len(done)} answered, {sum(e.payload['offered'] for e in done)}"
            f" offered, {sum(e.payload['applied'] for e in decided)} applied after the rebase"
        )
        reasons = {reason for r in rounds for reason in r.reasons}
        console.print("reasons seen: " + "; ".join(sorted(reasons))[:400])
    if writer is not None and store is not None:
        writer.close()
        size = sum(p.stat().st_size for p in store.parent.glob(store.name + "*"))
        hours = report.ticks / scenario.sim.tick_hz / 3600
        figures["store_mb_h"] = size / 1e6 / hours
        console.print(
            f"trace store: {size / 1e6:.1f} MB for {report.ticks / scenario.sim.tick_hz:.0f}"
            f" s of mission: {figures['store_mb_h']:,.0f} MB per mission hour"
            f" ({by_table(store, hours)})"
        )
    collector = getattr(executive, "collector", None)  # main before the collector: none
    if collector is not None:
        stats = collector.stats
        passes, wall, cpu = stats.passes, stats.longest_ms, stats.longest_cpu_ms
        console.print(
            "collector between ticks (young / middle / full): passes"
            f" {passes[0]} / {passes[1]} / {passes[2]}; longest ms {wall[0]:.1f} /"
            f" {wall[1]:.1f} / {wall[2]:.1f} (CPU {cpu[0]:.1f} / {cpu[1]:.1f} /"
            f" {cpu[2]:.1f}); reclaimed {stats.collected}; bursts frozen {stats.bursts}"
            f" ({stats.burst_objects:,} objects)"
        )
    if phases is not None:
        phases.report(console)
        pacer = getattr(executive, "_pacer", None)
        late = [] if pacer is None else list(pacer.lateness)
        worst = sorted(range(len(late)), key=lambda k: -late[k])[:10]
        console.print(
            "the 10 latest tick starts (ms late, the work of the tick before, ms): "
            + ", ".join(
                f"tick {k}: {1000 * late[k]:.1f}"
                + (f" ({1000 * phases.ticks[k - 1][0]:.1f})" if 0 < k <= len(phases.ticks) else "")
                for k in worst
            )
        )
    if args.quality:
        console.print(f"the rounds' plans against a {args.quality:g} s search on their request:")
        figures["quality"] = await quality(planner, args.quality, console)
    console.print(resident.summary())
    console.print(f"1-minute load: {figures['load']}")
    return figures


class Phases:
    """Where the tick's own time goes (``--phases``): named parts of the tick are wrapped
    with a timer (inclusive: a part called inside another counts in both) and each tick's
    parts are kept, so the worst ticks can be shown with what they did."""

    PARTS = (
        (
            "rounds",
            (
                "decide",
                "start",
                "_finish_round",
                "_start_rebase",
                "_finish_job",
                "_finish_agents",
                "_commit",
                "_offer",
            ),
        ),
        ("safety", ("check",)),
        ("sim", ("step",)),
        ("recorder", ("event", "telemetry", "submit", "plan_version", "publish")),
        ("executive", ("_observe", "_decide", "telemetry", "_maybe_snapshot")),
    )

    def __init__(self, executive: Any) -> None:
        self.executive = executive
        self.now: dict[str, float] = {}
        self.ticks: list[tuple[float, dict[str, float]]] = []
        self.on_tick = False
        self.installed = False

    def _install(self) -> None:
        """Wrap the parts (at the first tick: the sim exists once the run has started)."""
        executive, self.installed = self.executive, True
        for owner, names in self.PARTS:
            target = executive if owner == "executive" else getattr(executive, owner)
            for name in names:
                method = getattr(target, name, None)
                if callable(method):
                    setattr(target, name, self._timed(f"{owner}.{name}", method))

    def _timed(self, label: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.on_tick:
                return method(*args, **kwargs)
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                took = time.perf_counter() - started
                self.now[label] = self.now.get(label, 0.0) + took

        return timed

    def begin(self) -> None:
        if not self.installed:
            self._install()
        self.on_tick, self.now = True, {}

    def end(self, took: float) -> None:
        self.on_tick = False
        self.ticks.append((took, self.now))

    def report(self, console: Console) -> None:
        table = Table(title="the tick's parts (ms of wall inside tick_once, inclusive)")
        for column in ("part", "ticks", "p50", "p99", "max", "total"):
            table.add_column(column, justify="right")
        labels = sorted({k for _, parts in self.ticks for k in parts})
        rows = []
        for label in labels:
            ms = sorted(1000 * parts[label] for _, parts in self.ticks if label in parts)
            rows.append((sum(ms), label, ms))
        for total, label, ms in sorted(rows, reverse=True):
            table.add_row(
                label,
                str(len(ms)),
                f"{statistics.median(ms):.2f}",
                f"{ms[int(0.99 * (len(ms) - 1))]:.2f}",
                f"{ms[-1]:.1f}",
                f"{total:.0f}",
            )
        console.print(table)
        console.print("the 15 longest ticks (ms, the tick's index) and their parts over 1 ms:")
        longest = sorted(enumerate(self.ticks), key=lambda t: -t[1][0])[:15]
        for tick, (took, parts) in longest:
            big = sorted(((v, k) for k, v in parts.items() if v >= 0.001), reverse=True)
            console.print(
                f"  {1000 * took:7.1f} (tick {tick}): "
                + ", ".join(f"{k} {1000 * v:.1f}" for v, k in big)
            )


def by_table(store: Path, hours: float) -> str:
    """MB per mission hour of each table and its indexes (SQLite's dbstat), largest first."""
    import sqlite3

    with sqlite3.connect(store) as db:
        rows = db.execute(
            "SELECT coalesce(i.tbl_name, d.name), sum(d.pgsize) FROM dbstat d"
            " LEFT JOIN sqlite_schema i ON i.name = d.name GROUP BY 1 ORDER BY 2 DESC"
        ).fetchall()
    return ", ".join(f"{name} {size / 1e6 / hours:,.0f}" for name, size in rows[:5])


def _records(sink: Any) -> list[Any]:
    inner = getattr(sink, "sinks", None)
    if inner is not None:
        return next(s.records for s in inner if isinstance(s, ListSink))
    return sink.records


async def bench(args) -> None:
    console = Console()
    if not args.sizes:
        scenario = large_scenario() if args.scenario == "large" else load_scenario(args.scenario)
        await fly(scenario, args, console, None)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            drones, targets, sams = (int(v) for v in size.lower().split("x"))
            console.rule(f"{drones} drones x {targets} targets x {sams} SAMs (load {load()})")
            scenario = swarm_scenario(drones, targets, sams, args.popups, args.airports)
            store = Path(args.store or tmp) / f"trace-{size}.sqlite"
            store.unlink(missing_ok=True)
            rows.append((size, await fly(scenario, args, console, store)))
    table = Table(
        title=f"Executive ticks, {args.seconds:g} s at 1x, REPLAN every"
        f" {args.replan_every:g} s, agent calls {args.engine_delay:g} s"
    )
    for column in (
        "drones x targets x SAMs",
        "overruns",
        "lateness ms p50 / p99 / max",
        "tick work ms p99 / max",
        "replan ms p50 / p95",
        "rounds (committed)",
        "store MB/h",
        *(("plan / long search",) if args.quality else ()),
        "load",
    ):
        table.add_column(column, justify="right")
    for size, f in rows:
        table.add_row(
            size,
            str(f["overruns"]),
            f"{f['p50']:.2f} / {f['p99']:.1f} / {f['max']:.0f}",
            f"{f['work_p99']:.1f} / {f['work_max']:.0f}",
            f"{f.get('replan_p50', float('nan')):.0f} / {f.get('replan_p95', float('nan')):.0f}",
            f"{f.get('rounds', 0)} ({f.get('committed', 0)})",
            f"{f.get('store_mb_h', float('nan')):,.0f}",
            *((f.get("quality", "n/a"),) if args.quality else ()),
            f["load"],
        )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--engine-delay", type=float, default=8.0)
    parser.add_argument(
        "--good-model",
        action="store_true",
        help="the allocator answers a long search's allocation (else the rules answer)",
    )
    parser.add_argument("--plan-seconds", type=float, default=0.5)
    parser.add_argument("--replan-every", type=float, default=10.0)
    parser.add_argument(
        "--scenario",
        default="large",
        help="'large' (generated: 5 drones, 50 targets, 10 SAMs) or a file",
    )
    parser.add_argument(
        "--sizes",
        default="",
        help="drones x targets x SAMs, comma separated (e.g. 10x100x10,50x500x50): swarms"
        " flown with a SQLite trace store and scene snapshots, instead of --scenario",
    )
    parser.add_argument("--store", help="where the SQLite trace files go (default: a temp dir)")
    parser.add_argument(
        "--popups",
        type=int,
        default=0,
        help="with --sizes: SAMs that pop up at 15 s next to targets (the pop-up's tick is printed)",
    )
    parser.add_argument(
        "--quality",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="after the run, plan each round's request again with a search this long and"
        " print the round's plan as a share of it (e.g. 10)",
    )
    parser.add_argument("--no-scene", action="store_true", help="no replay scene snapshots")
    parser.add_argument(
        "--airports",
        type=int,
        default=None,
        help="airports of a swarm (default: min(drones, 50)); one per drone spreads the"
        " drones out so that nearly all of them fly (a fully airborne swarm)",
    )
    parser.add_argument(
        "--phases", action="store_true", help="time the tick's parts and show the worst ticks"
    )
    parser.add_argument(
        "--no-post-opt",
        action="store_true",
        help="the baseline without post-optimisation (pure Python, no deadline: minutes a"
        " round at 1,000 drones), to measure the executive at that size",
    )
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    started = time.perf_counter()
    main()
